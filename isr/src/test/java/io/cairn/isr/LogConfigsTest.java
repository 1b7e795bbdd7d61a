package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.LogConfig;
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
        assertThat(LogConfigs.isLiveDefault("log.local.retention.ms")).isFalse();
        assertThat(LogConfigs.isLiveDefault("log.preallocate")).isTrue();
        assertThat(LogConfigs.isLiveDefault("log.cleaner.max.compaction.lag.ms")).isTrue();
        assertThat(LogConfigs.isLiveDefault("min.insync.replicas")).isTrue();
        assertThat(LogConfigs.isLiveDefault("unclean.leader.election.enable")).isTrue();
        assertThat(LogConfigs.isLiveDefault("producer.id.expiration.ms")).isTrue();
        assertThat(LogConfigs.dynamicDefaults(Map.of("log.local.retention.ms", "1",
                "log.retention.hours", "1"), Map.of())).isEmpty();
    }

    @Test
    void preallocationCompactionLagAndProducerExpiryFollowTheirDynamicBrokerKeys() {
        // Given: server.properties' producer expiry, a cluster-wide preallocation and compaction lag, and this
        // broker's own producer expiry
        Map<String, String> staticDefaults = Map.of("producer.id.expiration.ms", "60000", "cleanup.policy", "compact",
                "segment.ms", "600000");
        Map<String, String> node = Map.of("producer.id.expiration.ms", "1000");
        Map<String, String> cluster = Map.of("log.preallocate", "true", "log.cleaner.max.compaction.lag.ms", "5000",
                "producer.id.expiration.ms", "2000");

        // When
        LogConfig config = LogConfigs.toLogConfig(LogConfigs.merge(staticDefaults,
                LogConfigs.dynamicDefaults(node, cluster)));

        // Then
        assertThat(config.preallocate()).isTrue();
        assertThat(config.initFileSize()).isEqualTo(config.segmentBytes());
        assertThat(config.maxCompactionLagMs()).isEqualTo(5000);
        assertThat(config.maxSegmentMs()).isEqualTo(5000);
        assertThat(config.producerIdExpirationMs()).isEqualTo(1000);
        assertThat(LogConfigs.toLogConfig(staticDefaults).producerIdExpirationMs()).isEqualTo(60000);
        assertThat(LogConfigs.toLogConfig(staticDefaults).initFileSize()).isZero();
    }
}
