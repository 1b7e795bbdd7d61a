package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.ConfigException;
import io.cairn.metadata.MetadataConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    void theStorageToolFormatsTheDirectoriesTheBrokerServesWhenLogDirsIsUnset(@TempDir Path dir) throws Exception {
        // Given: a file without log.dirs, log.dir or node.id (Cairn's defaults: ./data and node 1)
        Path file = dir.resolve("server.properties");
        Files.writeString(file, String.join("\n", "process.roles=broker,controller",
                "controller.quorum.voters=1@localhost:9093", "controller.listener.names=CONTROLLER",
                "listeners=PLAINTEXT://:9092,CONTROLLER://:9093"));
        BrokerConfig broker = BrokerConfig.load(file, Map.of());

        // When: what cairn-storage format reads, and what the broker starts its metadata node with
        MetadataConfig formatted = MetadataConfig.load(file);
        MetadataConfig served = BrokerMetadata.metadataConfig(broker);

        // Then
        assertThat(broker.logDirs()).containsExactly(Path.of("./data"));
        assertThat(formatted.logDirs()).isEqualTo(served.logDirs()).isEqualTo(broker.logDirs());
        assertThat(formatted.metadataLogDir()).isEqualTo(served.metadataLogDir());
        assertThat(formatted.nodeId()).isEqualTo(served.nodeId()).isEqualTo(1);
        assertThat(formatted.roles()).isEqualTo(served.roles());
    }

    @Test
    void theMetadataNodeTakesTheControllerListenerNamesTheBrokerTakes() {
        // Given: no controller.listener.names, so CONTROLLER is an ordinary listener of the broker's
        BrokerConfig broker = BrokerConfig.fromMap(Map.of("node.id", "1", "controller.quorum.voters",
                "1@localhost:9094", "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"));

        // When
        MetadataConfig metadata = BrokerMetadata.metadataConfig(broker);

        // Then: the Raft server does not bind the broker's CONTROLLER listener a second time
        assertThat(broker.controllerListenerNames()).isEmpty();
        assertThat(metadata.controllerListenerNames()).isEqualTo(broker.controllerListenerNames());
        assertThat(metadata.controllerBind()).isNull();
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
