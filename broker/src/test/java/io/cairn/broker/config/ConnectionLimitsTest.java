package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConnectionLimitsTest {

    @Test
    void withoutKeysThereAreNoLimits() {
        // When
        ConnectionLimits limits = ConnectionLimits.parse(Map.of(), List.of("PLAINTEXT"));

        // Then
        assertThat(limits).isEqualTo(ConnectionLimits.none());
        assertThat(limits.forListener("PLAINTEXT")).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void readsKafkasKeysWithOverridesSplitAtTheLastColon() throws Exception {
        // When
        ConnectionLimits limits = ConnectionLimits.parse(Map.of("max.connections", "100",
                "max.connections.per.ip", "0", "max.connections.per.ip.overrides", "127.0.0.2:5, ::1:7",
                "listener.name.external.max.connections", "9"), List.of("PLAINTEXT", "EXTERNAL"));

        // Then
        assertThat(limits.maxConnections()).isEqualTo(100);
        assertThat(limits.forAddress(InetAddress.getByName("127.0.0.2"))).isEqualTo(5);
        assertThat(limits.forAddress(InetAddress.getByName("::1"))).isEqualTo(7);
        assertThat(limits.forAddress(InetAddress.getByName("127.0.0.3"))).isZero();
        assertThat(limits.forListener("EXTERNAL")).isEqualTo(9);
        assertThat(limits.forListener("PLAINTEXT")).isEqualTo(Integer.MAX_VALUE);
    }

    @Test
    void refusesWhatKafkasConfigRefuses() {
        assertThatThrownBy(() -> ConnectionLimits.parse(Map.of("max.connections.per.ip", "0"), List.of()))
                .hasMessage("requirement failed: max.connections.per.ip can be set to zero only if "
                        + "max.connections.per.ip.overrides property is set.");
        assertThatThrownBy(() -> ConnectionLimits.parse(Map.of("max.connections.per.ip.overrides", "a b:1"),
                List.of())).hasMessage("max.connections.per.ip.overrides contains invalid addresses : a b");
        assertThatThrownBy(() -> ConnectionLimits.parse(Map.of("max.connections", "-1"), List.of()))
                .hasMessage("Invalid value -1 for configuration max.connections: Value must be at least 0");
        assertThat(ConnectionLimits.checkListenerLimit("listener.name.x.max.connections", "0"))
                .isEqualTo("Invalid max.connections 0");
        assertThat(ConnectionLimits.checkListenerLimit("listener.name.x.max.connections", "1")).isNull();
    }

    @Test
    void knowsTheListenerKeys() {
        assertThat(ConnectionLimits.isKey("listener.name.external.max.connections")).isTrue();
        assertThat(ConnectionLimits.isKey("max.connections.per.ip")).isTrue();
        assertThat(ConnectionLimits.isKey("listener.name..max.connections")).isFalse();
        assertThat(ConnectionLimits.isKey("max.connection.creation.rate")).isTrue();
        assertThat(ConnectionLimits.isKey("listener.name.external.max.connection.creation.rate")).isTrue();
        assertThat(ConnectionLimits.isKey("max.connection.creation.rate.x")).isFalse();
    }

    @Test
    void readsTheConnectionCreationRatesOfTheBrokerAndItsListeners() {
        // When
        ConnectionLimits limits = ConnectionLimits.parse(Map.of("max.connection.creation.rate", "50",
                "listener.name.external.max.connection.creation.rate", "5"), List.of("PLAINTEXT", "EXTERNAL"));

        // Then
        assertThat(limits.maxConnectionCreationRate()).isEqualTo(50);
        assertThat(limits.creationRateForListener("EXTERNAL")).isEqualTo(5);
        assertThat(limits.creationRateForListener("PLAINTEXT")).isEqualTo(Integer.MAX_VALUE);
        assertThat(ConnectionLimits.none().maxConnectionCreationRate()).isEqualTo(Integer.MAX_VALUE);
        assertThatThrownBy(() -> ConnectionLimits.parse(Map.of("max.connection.creation.rate", "-1"), List.of()))
                .hasMessage("Invalid value -1 for configuration max.connection.creation.rate: Value must be at "
                        + "least 0");
        assertThat(ConnectionLimits.checkListenerLimit("listener.name.x.max.connection.creation.rate", "0"))
                .isEqualTo("Invalid max.connection.creation.rate 0");
    }
}
