package io.cairn.metadata;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** MetadataConfig reads its keys with the config table's types, rules and defaults. */
class MetadataConfigTest {

    private static final Map<String, String> BASE = Map.of("process.roles", "broker,controller", "node.id", "1",
            "controller.quorum.voters", "1@localhost:9093");

    @Test
    void unsetKeysTakeKafkasDefaultsFromTheTable() {
        // When
        MetadataConfig config = MetadataConfig.from(BASE);

        // Then
        assertThat(config.electionTimeoutMs()).isEqualTo(1000);
        assertThat(config.requestTimeoutMs()).isEqualTo(2000);
        assertThat(config.snapshotThreshold()).isEqualTo(10_000);
        assertThat(config.controller().brokerSessionTimeoutMs()).isEqualTo(9000);
    }

    @Test
    void aValueThatFailsItsKeysRuleIsRefusedWithKafkasMessage() {
        // Given
        Map<String, String> bad = new HashMap<>(BASE);
        bad.put("broker.session.timeout.ms", "soon");

        // When / Then
        assertThatThrownBy(() -> MetadataConfig.from(bad)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Invalid value soon for configuration broker.session.timeout.ms: Not a number of type INT");
    }
}
