package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class LogConfigsTest {

    @Test
    void aTopicOverrideBeatsThisBrokerWhichBeatsTheClusterDefaultWhichBeatsTheStaticDefault() {
        // Given
        Map<String, String> staticDefaults = Map.of("retention.ms", "100", "segment.bytes", "2000000",
                "cleanup.policy", "compact", "max.message.bytes", "10");
        Map<String, String> node = Map.of("log.retention.ms", "300", "message.max.bytes", "4000000");
        Map<String, String> cluster = Map.of("log.retention.ms", "200", "log.segment.bytes", "3000000");
        Map<String, String> topic = Map.of("max.message.bytes", "5");

        // When
        Map<String, String> effective = LogConfigs.merge(
                LogConfigs.merge(staticDefaults, LogConfigs.dynamicDefaults(node, cluster)), topic);

        // Then
        assertThat(effective).containsEntry("retention.ms", "300").containsEntry("segment.bytes", "3000000")
                .containsEntry("cleanup.policy", "compact").containsEntry("max.message.bytes", "5");
        assertThat(LogConfigs.toLogConfig(effective).retentionMs()).isEqualTo(300);
    }

    @Test
    void onlyTheFirstSynonymOfATopicKeyActedOnByTheBrokerIsALiveDefault() {
        // Then
        assertThat(LogConfigs.isLiveDefault("log.retention.ms")).isTrue();
        assertThat(LogConfigs.isLiveDefault("log.cleaner.min.cleanable.ratio")).isTrue();
        assertThat(LogConfigs.isLiveDefault("message.max.bytes")).isTrue();
        assertThat(LogConfigs.isLiveDefault("compression.type")).isTrue();
        assertThat(LogConfigs.isLiveDefault("log.retention.hours")).isFalse();
        assertThat(LogConfigs.isLiveDefault("log.flush.scheduler.interval.ms")).isFalse();
        assertThat(LogConfigs.isLiveDefault("log.preallocate")).isFalse();
        assertThat(LogConfigs.isLiveDefault("min.insync.replicas")).isTrue();
        assertThat(LogConfigs.isLiveDefault("unclean.leader.election.enable")).isFalse();
        assertThat(LogConfigs.dynamicDefaults(Map.of("unclean.leader.election.enable", "true",
                "log.retention.hours", "1"), Map.of())).isEmpty();
    }
}
