package io.cairn.broker.group.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.share.partition.SharePartitionConfig;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShareGroupConfigsTest {

    /** A broker with a 30 s lock, allowed 15-60 s (Kafka's defaults). */
    private final ShareGroupConfigs configs = new ShareGroupConfigs(ShareGroupConfig.defaults(),
        SharePartitionConfig.DEFAULTS, 15_000, 60_000);

    @Test
    void aGroupWithoutConfigsHasTheBrokerValues() {
        ShareGroupConfigs.Settings settings = configs.settings(Map.of());

        assertThat(settings.recordLockDurationMs()).isEqualTo(30_000);
        assertThat(settings.resetToEarliest()).isFalse();
        assertThat(settings.resetDuration()).isEmpty();
        assertThat(configs.brokerDefaults()).containsExactly(Map.entry("share.session.timeout.ms", "45000"),
            Map.entry("share.heartbeat.interval.ms", "5000"), Map.entry("share.record.lock.duration.ms", "30000"),
            Map.entry("share.auto.offset.reset", "latest"), Map.entry("share.isolation.level", "read_uncommitted"));
        assertThat(settings.readCommitted()).isFalse();
    }

    @Test
    void aGroupsConfigsOverrideTheBrokers() {
        ShareGroupConfigs.Settings settings = configs.settings(Map.of("share.record.lock.duration.ms", "20000",
            "share.auto.offset.reset", "EARLIEST", "share.isolation.level", "read_committed"));

        assertThat(settings.recordLockDurationMs()).isEqualTo(20_000);
        assertThat(settings.resetToEarliest()).isTrue();
        assertThat(settings.readCommitted()).isTrue();
        assertThat(configs.settings(Map.of("share.auto.offset.reset", "by_duration:PT1H")).resetDuration())
            .contains(Duration.ofHours(1));
    }

    @Test
    void validValuesPass() {
        assertThat(configs.validate(Map.of("share.session.timeout.ms", "60000", "share.heartbeat.interval.ms", "15000",
            "share.isolation.level", "read_committed"))).isEmpty();
        assertThat(configs.validate(Map.of("share.record.lock.duration.ms", "15000",
            "share.auto.offset.reset", "latest"))).isEmpty();
        assertThat(configs.validate(Map.of("share.auto.offset.reset", "by_duration:P1DT2H"))).isEmpty();
        assertThat(configs.validate(Map.of())).isEmpty();
    }

    @Test
    void kafkasRulesRefuseBadValuesWithItsMessages() {
        assertThat(configs.validate(Map.of("share.record.lock.duration.ms", "10000"))).contains(
            "share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms");
        assertThat(configs.validate(Map.of("share.record.lock.duration.ms", "60001"))).contains(
            "share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms");
        assertThat(configs.validate(Map.of("share.record.lock.duration.ms", "999"))).contains(
            "Invalid value 999 for configuration share.record.lock.duration.ms: Value must be at least 1000");
        assertThat(configs.validate(Map.of("share.record.lock.duration.ms", "soon"))).contains(
            "Invalid value soon for configuration share.record.lock.duration.ms: Not a number of type INT");
        assertThat(configs.validate(Map.of("share.auto.offset.reset", "none"))).hasValueSatisfying(
            message -> assertThat(message).startsWith("Invalid value none for configuration share.auto.offset.reset"));
        assertThat(configs.validate(Map.of("share.auto.offset.reset", "by_duration:-PT1H"))).contains(
            "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Negative duration is not"
                + " supported.");
        assertThat(configs.validate(Map.of("share.isolation.level", "READ_COMMITTED"))).contains(
            "Invalid value READ_COMMITTED for configuration share.isolation.level: String must be one of:"
                + " read_committed, read_uncommitted");
        assertThat(configs.validate(Map.of("share.session.timeout.ms", "30000"))).contains(
            "share.session.timeout.ms must be greater than or equal to group.share.min.session.timeout.ms");
        assertThat(configs.validate(Map.of("share.session.timeout.ms", "60001"))).contains(
            "share.session.timeout.ms must be less than or equal to group.share.max.session.timeout.ms");
        assertThat(configs.validate(Map.of("share.heartbeat.interval.ms", "4999"))).contains(
            "share.heartbeat.interval.ms must be greater than or equal to group.share.min.heartbeat.interval.ms");
        assertThat(configs.validate(Map.of("share.heartbeat.interval.ms", "15001"))).contains(
            "share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms");
        assertThat(configs.validate(Map.of("consumer.session.timeout.ms", "45000"))).contains(
            "Unknown group config name: consumer.session.timeout.ms");
        assertThat(configs.validate(Map.of("unknown.key", "1"))).contains("Unknown group config name: unknown.key");
    }
}
