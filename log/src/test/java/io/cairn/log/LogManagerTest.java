package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.log.io.FileLayer;
import io.cairn.wire.error.KafkaStorageException;
import io.cairn.wire.protocol.Uuid;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogManagerTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();

    @Test
    void aFailedDirectoryClosesWithoutTheCleanShutdownMarker() {
        // Given: a directory whose segment write failed (a full disk)
        RecordingFileLayer layer = new RecordingFileLayer();
        LogManager.Options options = new LogManager.Options(10_000, 30_000, 300_000L, Long.MAX_VALUE, 15_000L,
            Double.MAX_VALUE, layer);
        LogManager first = LogManager.start(tmp, LogConfig.defaults(), time, options);
        PartitionLog log = first.getOrCreateLog("orders", 0, LogConfig.defaults(), new Uuid(1, 2));
        log.appendAsLeader(TestBatches.values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        layer.failWritesTo("00000000000000000000.log");
        assertThatThrownBy(() -> log.appendAsLeader(TestBatches.values(time.milliseconds(), "b"), 0,
            AppendOrigin.CLIENT)).isInstanceOf(KafkaStorageException.class);

        // When
        first.close();

        // Then: no marker, so the next start recovers the log, which ends after its last whole batch
        assertThat(tmp.resolve(LogManager.CLEAN_SHUTDOWN_FILE)).doesNotExist();
        LogManager second = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        assertThat(second.hadCleanShutdown()).isFalse();
        assertThat(second.getLog("orders", 0).orElseThrow().logEndOffset()).isEqualTo(1);
        second.close();
    }

    @Test
    void closeShouldWriteTheCleanShutdownMarkerAndStartShouldConsumeIt() {
        // Given
        LogManager first = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        first.getOrCreateLog("orders", 3, LogConfig.defaults(), new Uuid(1, 2))
            .appendAsLeader(TestBatches.values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        boolean firstSawClean = first.hadCleanShutdown();

        // When
        first.close();
        boolean markerAfterClose = Files.exists(tmp.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        LogManager second = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());

        // Then
        assertThat(firstSawClean).isFalse();
        assertThat(markerAfterClose).isTrue();
        assertThat(second.hadCleanShutdown()).isTrue();
        assertThat(Files.exists(tmp.resolve(LogManager.CLEAN_SHUTDOWN_FILE))).isFalse();
        PartitionLog log = second.getLog("orders", 3).orElseThrow();
        assertThat(log.logEndOffset()).isEqualTo(1);
        assertThat(log.topicId()).contains(new Uuid(1, 2));
        assertThat(log.topic()).isEqualTo("orders");
        assertThat(log.partition()).isEqualTo(3);
        second.close();
    }

    @Test
    void logsAreLoadedByNumRecoveryThreadsPerDataDirThreadsAndANewCountIsKeptForTheNextWork() {
        // Given: four partitions on disk
        LogManager first = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        for (int p = 0; p < 4; p++) {
            first.getOrCreateLog("t", p, LogConfig.defaults(), null)
                .appendAsLeader(TestBatches.values(time.milliseconds(), "v" + p), 0, AppendOrigin.CLIENT);
        }
        first.close();
        Set<String> loaders = ConcurrentHashMap.newKeySet();
        FileLayer watching = (path, options) -> {
            if (path.getFileName().toString().endsWith(".log")) {
                loaders.add(Thread.currentThread().getName());
            }
            return FileChannel.open(path, options);
        };

        // When
        LogManager second = LogManager.start(tmp, LogConfig.defaults(), time, new LogManager.Options(10_000,
            30_000, 300_000L, Long.MAX_VALUE, 15_000L, Double.MAX_VALUE, watching), null, 2);
        second.resizeRecoveryThreadPool(3);

        // Then
        assertThat(second.allLogs()).hasSize(4).allSatisfy(log -> assertThat(log.logEndOffset()).isEqualTo(1));
        assertThat(loaders).hasSizeBetween(1, 2).allSatisfy(name -> assertThat(name).startsWith("log-recovery-"));
        assertThat(second.recoveryThreads()).isEqualTo(3);
        assertThatThrownBy(() -> second.resizeRecoveryThreadPool(0)).isInstanceOf(IllegalArgumentException.class);
        second.close();
        assertThat(Files.exists(tmp.resolve(LogManager.CLEAN_SHUTDOWN_FILE))).isTrue();
    }

    @Test
    void theProducerExpiryPassDropsProducersIdleLongerThanTheirLogsCurrentExpiration() {
        // Given: a producer that wrote once, then its log's producer.id.expiration.ms lowered live to 1 s
        LogManager manager = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults()
            .withProducerIdExpirationCheckMs(0));
        PartitionLog log = manager.getOrCreateLog("t", 0, LogConfig.defaults(), null);
        log.appendAsLeader(TestBatches.idempotent(7L, (short) 0, 0, time.milliseconds(), "a"), 0,
            AppendOrigin.CLIENT);
        log.updateConfig(log.config().toBuilder().producerIdExpirationMs(1_000).build());
        time.sleep(1_001);
        manager.runRetention();
        int afterRetention = log.activeProducers().size();

        // When
        manager.runProducerExpiration();

        // Then: retention leaves producers alone (Kafka's separate PeriodicProducerExpirationCheck)
        assertThat(afterRetention).isEqualTo(1);
        assertThat(log.activeProducers()).isEmpty();
        manager.close();
    }

    @Test
    void theCleanShutdownMarkerShouldCarryTheBrokerEpochAsKafkaWritesIt() throws Exception {
        // Given
        LogManager first = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());

        // When
        first.close(42L);
        String marker = Files.readString(tmp.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        LogManager second = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        LogManager afterCrash = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());

        // Then: KIP-966 registers with it; a start without the marker (a crash) has none
        assertThat(first.previousBrokerEpoch()).isEqualTo(-1L);
        assertThat(marker).isEqualTo("{\"version\":0,\"brokerEpoch\":42}");
        assertThat(second.previousBrokerEpoch()).isEqualTo(42L);
        assertThat(afterCrash.previousBrokerEpoch()).isEqualTo(-1L);
        second.close();
        afterCrash.close();
    }

    @Test
    void theManagersCleanerShouldCompactTheDirtiestCompactedPartition() {
        // Given
        LogManager manager = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        LogConfig compacted = LogConfig.builder().cleanupPolicy("compact").segmentBytes(500).fileDeleteDelayMs(0)
            .build();
        PartitionLog log = manager.getOrCreateLog("compacted", 0, compacted, null);
        for (int i = 0; i < 50; i++) {
            log.appendAsLeader(TestBatches.keyed(time.milliseconds(), "k", "v" + i), 0, AppendOrigin.CLIENT);
        }
        log.roll();

        // When
        var result = manager.cleaner().cleanDirtiest();

        // Then
        assertThat(result).isPresent();
        assertThat(LogInvariants.verify(log)).containsExactly("49:v49");
        manager.close();
    }

    @Test
    void theCleanerThreadsCleanEveryDirtyPartitionAndAReconfigurationRestartsThem() {
        // Given: two cleaner threads looking for work every 20 ms, and two dirty compacted partitions
        LogManager manager = LogManager.start(tmp, LogConfig.defaults(), Time.SYSTEM,
            LogManager.Options.defaults().withCleaner(2, 20, Double.MAX_VALUE));
        LogConfig compacted = LogConfig.builder().cleanupPolicy("compact").segmentBytes(500).fileDeleteDelayMs(0)
            .build();
        PartitionLog first = dirty(manager, "a", compacted, "x");
        PartitionLog second = dirty(manager, "b", compacted, "y");

        // Then (this check reads segments without the log's lock: racing the cleaner's swap of a segment, it may see
        // its file renamed away or its index closed, and tries again)
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().untilAsserted(() -> {
            assertThat(LogInvariants.verify(first)).containsExactly("49:x49");
            assertThat(LogInvariants.verify(second)).containsExactly("49:y49");
        });
        assertThat(manager.cleaner().threads()).isEqualTo(2);

        // When: down to one thread (log.cleaner.threads changed live), and more dirt
        manager.cleaner().reconfigure(1, 20, 1_000_000);
        PartitionLog third = dirty(manager, "c", compacted, "z");

        // Then
        assertThat(manager.cleaner().threads()).isEqualTo(1);
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().untilAsserted(() ->
            assertThat(LogInvariants.verify(third)).containsExactly("49:z49"));
        assertThat(manager.cleaner().stats().dead()).isFalse();
        manager.close();
    }

    /** A compacted partition with 50 values of one key, the active segment rolled so all of it is cleanable. */
    private PartitionLog dirty(LogManager manager, String topic, LogConfig config, String prefix) {
        PartitionLog log = manager.getOrCreateLog(topic, 0, config, null);
        for (int i = 0; i < 50; i++) {
            log.appendAsLeader(TestBatches.keyed(System.currentTimeMillis(), "k", prefix + i), 0,
                AppendOrigin.CLIENT);
        }
        log.roll();
        return log;
    }

    @Test
    void theCleanersStatsShouldTellTheLastLookAndPassAsKafkasGaugesDo() {
        // Given
        LogManager manager = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        LogConfig compacted = LogConfig.builder().cleanupPolicy("compact").segmentBytes(500).fileDeleteDelayMs(0)
            .build();
        PartitionLog log = manager.getOrCreateLog("compacted", 0, compacted, null);
        for (int i = 0; i < 50; i++) {
            log.appendAsLeader(TestBatches.keyed(time.milliseconds(), "k", "v" + i), 0, AppendOrigin.CLIENT);
        }
        log.roll();
        manager.cleaner().cleanDirtiest();
        time.sleep(250);

        // When
        var stats = manager.cleaner().stats();

        // Then: everything was dirty; the pass kept one record of 50
        assertThat(stats.maxDirtyPercent()).isEqualTo(100);
        assertThat(stats.recopyPercent()).isBetween(1, 20);
        assertThat(stats.timeSinceLastRunMs()).isEqualTo(250);
        assertThat(stats.uncleanablePartitions()).isZero();
        assertThat(stats.uncleanableBytes()).isZero();
        assertThat(stats.dead()).isFalse();
        manager.close();
    }

    @Test
    void startWithoutMarkerShouldRecoverAndDeleteLogShouldRemoveTheDirectory() {
        // Given
        LogManager first = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        PartitionLog log = first.getOrCreateLog("t-with-dash", 0, LogConfig.defaults(), null);
        log.appendAsLeader(TestBatches.values(time.milliseconds(), "a", "b"), 0, AppendOrigin.CLIENT);
        log.closeWithoutFlush();

        // When
        LogManager second = LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
        PartitionLog recovered = second.getLog("t-with-dash", 0).orElseThrow();
        long end = recovered.logEndOffset();
        second.deleteLog("t-with-dash", 0);

        // Then
        assertThat(second.hadCleanShutdown()).isFalse();
        assertThat(end).isEqualTo(2);
        assertThat(second.getLog("t-with-dash", 0)).isEmpty();
        assertThat(Files.exists(tmp.resolve("t-with-dash-0"))).isFalse();
        second.close();
    }
}
