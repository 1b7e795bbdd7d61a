package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MainTest {

    @TempDir
    Path dir;

    @Test
    void shouldReadThePropertiesFileAndRepeatedOverrides() throws Exception {
        // Given
        Path file = dir.resolve("server.properties");
        Files.writeString(file, "node.id=3\nnum.io.threads=2\n");

        // When
        BrokerConfig config = Main.parseArguments(new String[] {file.toString(), "--override", "node.id=4",
            "--override", "listeners=PLAINTEXT://:0"});

        // Then
        assertThat(config.nodeId()).isEqualTo(4);
        assertThat(config.numIoThreads()).isEqualTo(2);
        assertThat(config.listeners().get(0).port()).isZero();
    }

    @Test
    void shouldStartFromDefaultsWithoutArguments() throws Exception {
        // When
        BrokerConfig config = Main.parseArguments(new String[0]);

        // Then
        assertThat(config.listeners().get(0).port()).isEqualTo(9092);
    }

    @Test
    void shouldRejectAnOverrideWithoutValue() {
        assertThatThrownBy(() -> Main.parseArguments(new String[] {"--override"}))
                .isInstanceOf(ConfigException.class).hasMessageContaining("key=value");
        assertThatThrownBy(() -> Main.parseArguments(new String[] {"--override", "novalue"}))
                .isInstanceOf(ConfigException.class).hasMessageContaining("not key=value");
    }

    @Test
    void shouldRejectAMissingPropertiesFile() {
        assertThatThrownBy(() -> Main.parseArguments(new String[] {dir.resolve("nope.properties").toString()}))
                .isInstanceOf(ConfigException.class).hasMessageContaining("cannot read");
    }
}
