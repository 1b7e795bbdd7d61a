package io.cairn.broker.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ConsumerGroupConfigTest {

    @Test
    void defaultsShouldBeKafkas() {
        // When
        ConsumerGroupConfig config = ConsumerGroupConfig.defaults();

        // Then
        assertThat(config).isEqualTo(new ConsumerGroupConfig(45_000, 45_000, 60_000, 5_000, 5_000, 15_000,
            Integer.MAX_VALUE, List.of("uniform", "range")));
        assertThat(config.defaultAssignor()).isEqualTo("uniform");
    }

    @Test
    void valuesOutsideTheirRangesShouldBeRefusedNamingTheKey() {
        // When / Then
        assertThatThrownBy(() -> new ConsumerGroupConfig(30_000, 45_000, 60_000, 5_000, 5_000, 15_000, 10,
            List.of("uniform"))).hasMessageContaining(ConsumerGroupConfig.SESSION_TIMEOUT_MS);
        assertThatThrownBy(() -> new ConsumerGroupConfig(45_000, 45_000, 60_000, 20_000, 5_000, 15_000, 10,
            List.of("uniform"))).hasMessageContaining(ConsumerGroupConfig.HEARTBEAT_INTERVAL_MS);
        assertThatThrownBy(() -> new ConsumerGroupConfig(6_000, 1_000, 60_000, 6_000, 1_000, 15_000, 10,
            List.of("uniform"))).hasMessageContaining("must be less than " + ConsumerGroupConfig.SESSION_TIMEOUT_MS);
        assertThatThrownBy(() -> new ConsumerGroupConfig(45_000, 45_000, 60_000, 5_000, 5_000, 15_000, 0,
            List.of("uniform"))).hasMessageContaining(ConsumerGroupConfig.MAX_SIZE);
        assertThatThrownBy(() -> new ConsumerGroupConfig(45_000, 45_000, 60_000, 5_000, 5_000, 15_000, 10,
            List.of())).hasMessageContaining(ConsumerGroupConfig.ASSIGNORS);
    }
}
