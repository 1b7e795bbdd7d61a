package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.LogConfig;
import io.cairn.log.LogManager;
import io.cairn.log.Scheduler;
import io.cairn.log.Time;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Kafka's DynamicThreadPool: sizes from this broker's, the cluster default's or the static value, Kafka's checks. */
class DynamicThreadPoolsTest {

    private final List<String> resized = new CopyOnWriteArrayList<>();
    private final DynamicThreadPools pools = new DynamicThreadPools(1,
            Map.of(DynamicThreadPools.NUM_IO_THREADS, 8, DynamicThreadPools.NUM_REPLICA_FETCHERS, 1),
            Map.of(DynamicThreadPools.NUM_IO_THREADS, n -> resized.add("io=" + n),
                    DynamicThreadPools.NUM_REPLICA_FETCHERS, n -> resized.add("fetchers=" + n)));

    private static MetadataImage image(Map<String, String> broker1, Map<String, String> cluster) {
        return new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(), Map.of(),
                Map.of(ConfigResource.broker("1"), broker1, ConfigResource.broker(""), cluster), 0L, 0L, Map.of(),
                Map.of(), Map.of());
    }

    @Test
    void aChangeIsCheckedAgainstTheSizeNowWithKafkasMessages() {
        // Given
        MetadataImage none = image(Map.of(), Map.of());

        // Then
        assertThat(pools.validate("1", Map.of("num.io.threads", "16"), none)).isEmpty();
        assertThat(pools.validate("1", Map.of("num.io.threads", "4"), none)).isEmpty();
        assertThat(pools.validate("1", Map.of("num.io.threads", "17"), none)).contains(wrapped("Dynamic thread "
                + "count update validation failed for num.io.threads=17, value should not be greater than double the "
                + "current value 8"));
        assertThat(pools.validate("1", Map.of("num.io.threads", "3"), none)).contains(wrapped("Dynamic thread "
                + "count update validation failed for num.io.threads=3, value should be at least half the current "
                + "value 8"));
        assertThat(pools.validate("", Map.of("num.replica.fetchers", "0"), none)).contains(wrapped(
                "Dynamic thread count update validation failed for num.replica.fetchers=0, value should be at least 1"));
        // This broker's own value wins over a cluster default, so the default's change does not reach it.
        assertThat(pools.validate("", Map.of("num.io.threads", "100"), image(Map.of("num.io.threads", "8"),
                Map.of()))).isEmpty();
    }

    @Test
    void theBrokersValueWinsOverTheClusterDefaultWhichWinsOverTheStaticOne() {
        // When: a cluster default
        pools.apply(image(Map.of(), Map.of("num.io.threads", "12", "num.replica.fetchers", "2")));

        // Then
        assertThat(resized).containsExactlyInAnyOrder("io=12", "fetchers=2");
        assertThat(pools.currentSize("num.io.threads")).isEqualTo(12);

        // When: this broker's own value, then nothing left
        resized.clear();
        pools.apply(image(Map.of("num.io.threads", "6"), Map.of("num.io.threads", "12", "num.replica.fetchers",
                "2")));
        assertThat(resized).containsExactly("io=6");
        resized.clear();
        pools.apply(image(Map.of(), Map.of()));

        // Then
        assertThat(resized).containsExactlyInAnyOrder("io=8", "fetchers=1");
        assertThat(pools.currentSize("num.io.threads")).isEqualTo(8);
    }

    @Test
    void aCommittedSizeOutsideKafkasBoundsIsNotApplied() {
        // When: a value another broker accepted against its own sizes
        pools.apply(image(Map.of("num.io.threads", "64"), Map.of()));

        // Then
        assertThat(resized).isEmpty();
        assertThat(pools.currentSize("num.io.threads")).isEqualTo(8);
    }

    @Test
    void recoveryThreadsAreCheckedAsKafkasAndGivenToTheLogManagersAndReadFromTheImageAtStart(@TempDir Path dir) {
        // Given: two log directories loaded with Kafka's default of 2 threads each
        List<LogManager> managers = List.of(
                LogManager.start(dir.resolve("a"), LogConfig.defaults(), Time.SYSTEM, LogManager.Options.defaults(),
                        null, 2),
                LogManager.start(dir.resolve("b"), LogConfig.defaults(), Time.SYSTEM, LogManager.Options.defaults(),
                        null, 2));
        String key = DynamicThreadPools.NUM_RECOVERY_THREADS_PER_DATA_DIR;
        DynamicThreadPools recovery = new DynamicThreadPools(1, Map.of(key, 2), Map.of(key,
                n -> managers.forEach(m -> m.resizeRecoveryThreadPool(n))));
        MetadataImage clusterWide = image(Map.of(), Map.of(key, "4"));

        // When
        recovery.apply(clusterWide);

        // Then
        assertThat(managers).allSatisfy(m -> assertThat(m.recoveryThreads()).isEqualTo(4));
        assertThat(recovery.validate("1", Map.of(key, "9"), clusterWide)).contains(wrapped("Dynamic thread count "
                + "update validation failed for " + key + "=9, value should not be greater than double the current "
                + "value 4"));
        assertThat(DynamicThreadPools.effectiveSize(clusterWide, 1, key, 2)).isEqualTo(4);
        assertThat(DynamicThreadPools.effectiveSize(image(Map.of(key, "3"), Map.of(key, "4")), 1, key, 2))
                .isEqualTo(3);
        assertThat(DynamicThreadPools.effectiveSize(image(Map.of(), Map.of()), 1, key, 2)).isEqualTo(2);
        managers.forEach(LogManager::close);
    }

    @Test
    void backgroundThreadsResizeTheSharedSchedulerLive() {
        // Given: Kafka's default of 10 threads
        try (Scheduler scheduler = new Scheduler(10)) {
            DynamicThreadPools background = new DynamicThreadPools(1, Map.of(DynamicThreadPools.BACKGROUND_THREADS,
                    10), Map.of(DynamicThreadPools.BACKGROUND_THREADS, scheduler::resize));

            // When: a cluster default, then this broker's own value
            background.apply(image(Map.of(), Map.of("background.threads", "20")));
            int clusterWide = scheduler.poolSize();
            background.apply(image(Map.of("background.threads", "12"), Map.of("background.threads", "20")));

            // Then
            assertThat(clusterWide).isEqualTo(20);
            assertThat(scheduler.poolSize()).isEqualTo(12);
            assertThat(background.validate("1", Map.of("background.threads", "25"), image(Map.of(), Map.of())))
                    .contains(wrapped("Dynamic thread count update validation failed for background.threads=25, "
                            + "value should not be greater than double the current value 12"));
            assertThat(background.validate("1", Map.of("background.threads", "5"), image(Map.of(), Map.of())))
                    .contains(wrapped("Dynamic thread count update validation failed for background.threads=5, "
                            + "value should be at least half the current value 12"));
        }
    }

    /** As Kafka's DynamicBrokerConfig wraps a reconfigurable's refusal. */
    private static String wrapped(String refusal) {
        return "Invalid value org.apache.kafka.common.config.ConfigException: " + refusal
                + " for configuration Invalid dynamic configuration";
    }
}
