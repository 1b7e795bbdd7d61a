package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.ConfigException;
import io.cairn.metadata.MetadataConfig;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BrokerMetadataTest {

    @Test
    void aCombinedNodeWithoutVotersIsTheSoleVoterOnALoopbackPortWithItsDataInLogDirs() {
        // Given
        BrokerConfig config = BrokerConfig.fromMap(Map.of("node.id", "3", "log.dirs", "/data/a,/data/b",
                "num.partitions", "4"));

        // When
        MetadataConfig metadata = BrokerMetadata.metadataConfig(config);

        // Then
        assertThat(metadata.isSoleVoter()).isTrue();
        assertThat(metadata.isBroker()).isTrue();
        assertThat(metadata.nodeId()).isEqualTo(3);
        assertThat(metadata.voters()).singleElement().satisfies(v -> {
            assertThat(v.id()).isEqualTo(3);
            assertThat(v.host()).isEqualTo("127.0.0.1");
            assertThat(v.port()).isPositive();
        });
        assertThat(metadata.metadataLogDir()).isEqualTo(Path.of("/data/a"));
        assertThat(metadata.controller().defaultNumPartitions()).isEqualTo(4);
    }

    @Test
    void configuredVotersAndMetadataLogDirAreKept() {
        // Given
        BrokerConfig config = BrokerConfig.fromMap(Map.of("node.id", "1", "controller.quorum.voters",
                "1@host-a:9093", "metadata.log.dir", "/meta"));

        // When
        MetadataConfig metadata = BrokerMetadata.metadataConfig(config);

        // Then
        assertThat(metadata.voters()).singleElement().hasToString("1@host-a:9093");
        assertThat(metadata.metadataLogDir()).isEqualTo(Path.of("/meta"));
    }

    @Test
    void aBrokerOnlyNodeNeedsVoters() {
        // Given
        BrokerConfig config = BrokerConfig.fromMap(Map.of("process.roles", "broker"));

        // Then
        assertThatThrownBy(() -> BrokerMetadata.metadataConfig(config)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("controller.quorum.voters");
    }

    @Test
    void aCombinedNodeAloneIsItsOwnVoterAtItsControllerListenerWhichServesNoKafkaProtocol() {
        // Given
        BrokerConfig config = BrokerConfig.fromMap(Map.of("node.id", "1", "listeners",
                "PLAINTEXT://:9092,CONTROLLER://:9093", "advertised.listeners",
                "PLAINTEXT://localhost:9092,CONTROLLER://localhost:9093", "controller.listener.names", "CONTROLLER"));

        // When
        MetadataConfig metadata = BrokerMetadata.metadataConfig(config);

        // Then
        assertThat(metadata.voters()).singleElement().hasToString("1@localhost:9093");
        assertThat(metadata.controllerBind()).hasToString(":9093");
        assertThat(config.kafkaListeners()).extracting(Object::toString).containsExactly("PLAINTEXT://:9092");
        assertThat(config.advertisedListeners()).extracting(Object::toString)
                .containsExactly("PLAINTEXT://localhost:9092");
    }

    @Test
    void bootstrapServersLeaveTheVotersToTheFormattedStorage() {
        // Given
        BrokerConfig config = BrokerConfig.fromMap(Map.of("node.id", "1", "controller.quorum.bootstrap.servers",
                "localhost:9093", "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093", "controller.listener.names",
                "CONTROLLER"));

        // When
        MetadataConfig metadata = BrokerMetadata.metadataConfig(config);

        // Then
        assertThat(metadata.voters()).isEmpty();
        assertThat(metadata.bootstrapServers()).containsExactly("localhost:9093");
        assertThat(metadata.isStandaloneBootstrap()).isTrue();
        assertThat(config.unknownKeys()).doesNotContain("controller.quorum.bootstrap.servers");
        assertThatThrownBy(() -> BrokerMetadata.metadataConfig(BrokerConfig.fromMap(Map.of("process.roles",
                "broker", "controller.quorum.bootstrap.servers", "localhost:9093"))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("a broker-only Cairn node needs");
    }
}
