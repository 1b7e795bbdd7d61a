package io.cairn.log.cleaner;

import static io.cairn.log.TestBatches.keyed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.LogInvariants;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.RecordValidationException;
import io.cairn.log.ShmTempDirFactory;
import io.cairn.log.TestBatches;
import io.cairn.wire.error.InvalidRecordException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CleanerTest {

    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    private final MockTime time = new MockTime();

    private final java.util.concurrent.ScheduledThreadPoolExecutor scheduler =
        new java.util.concurrent.ScheduledThreadPoolExecutor(1);

    private final List<PartitionLog> opened = new ArrayList<>();

    @org.junit.jupiter.api.AfterEach
    void stopScheduler() throws InterruptedException {
        opened.forEach(PartitionLog::close);
        scheduler.shutdownNow();
        scheduler.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
    }

    /** A compacted log; replaced segments linger 5 s for readers (file.delete.delay.ms), as in production. */
    private PartitionLog compacted(LogConfig.Builder builder) {
        LogConfig config = builder.cleanupPolicy("compact").fileDeleteDelayMs(5000).build();
        LogEnvironment env = new LogEnvironment(time, io.cairn.log.io.FileLayer.DEFAULT,
            io.cairn.log.io.OpenResources.unbounded(), io.cairn.log.io.OpenResources.unbounded(), scheduler);
        PartitionLog log = PartitionLog.open(tmp.resolve("c-0"), config, env, true);
        opened.add(log);
        return log;
    }

    private static Cleaner cleaner(MockTime time) {
        return new Cleaner(new Throttler(Double.MAX_VALUE, time));
    }

    /** key → (offset, value) of every record in the log. */
    static Map<String, List<String>> byKey(PartitionLog log) {
        Map<String, List<String>> out = new HashMap<>();
        long next = log.logStartOffset();
        long end = log.logEndOffset();
        while (next < end) {
            try (FetchDataInfo info = log.read(next, Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
                List<MutableRecordBatch> batches = TestBatches.batches(info.records().readBytes());
                if (batches.isEmpty()) {
                    break;
                }
                for (MutableRecordBatch b : batches) {
                    b.ensureValid();
                    if (b.lastOffset() < next) {
                        throw new AssertionError("offsets went back: " + b.lastOffset() + " after " + next);
                    }
                    next = b.nextOffset();
                    if (b.isControlBatch()) {
                        continue;
                    }
                    for (Record r : b) {
                        String key = StandardCharsets.UTF_8.decode(r.key()).toString();
                        String value = r.hasValue() ? StandardCharsets.UTF_8.decode(r.value()).toString() : "null";
                        out.computeIfAbsent(key, k -> new ArrayList<>()).add(r.offset() + "=" + value);
                    }
                }
            }
        }
        return out;
    }

    @Test
    void keysOverwrittenManyTimesShouldConvergeToOneRecordPerKeyWithTheirOriginalOffsets() {
        // Given
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600));
        Map<String, String> latest = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            String key = "k" + (i % 7);
            String value = "v" + i;
            long offset = log.appendAsLeader(keyed(time.milliseconds(), key, value), 0, AppendOrigin.CLIENT)
                .firstOffset();
            latest.put(key, offset + "=" + value);
        }
        log.roll();

        // When
        Optional<Cleaner.CleanResult> result = cleaner(time).cleanIfNeeded(log);

        // Then
        assertThat(result).isPresent();
        assertThat(result.get().recordsRemoved()).isEqualTo(200 - 7);
        Map<String, List<String>> after = byKey(log);
        assertThat(after).hasSize(7);
        after.forEach((key, records) -> assertThat(records).containsExactly(latest.get(key)));
        LogInvariants.verify(log);
        assertThat(log.logEndOffset()).isEqualTo(200);
    }

    @Test
    void aWriteThatFailsWhileCleaningTakesTheDirectoryOfflineAndKeepsTheSegment() {
        // Given: a compacted log whose cleaned segment cannot be written (a full disk)
        io.cairn.log.RecordingFileLayer layer = new io.cairn.log.RecordingFileLayer();
        List<String> told = new java.util.concurrent.CopyOnWriteArrayList<>();
        LogEnvironment env = new LogEnvironment(time, layer, io.cairn.log.io.OpenResources.unbounded(),
            io.cairn.log.io.OpenResources.unbounded(), scheduler, io.cairn.log.LogFlushListener.NONE,
            new io.cairn.log.LogDirHealth((dir, message, cause) -> told.add(message)));
        PartitionLog log = PartitionLog.open(tmp.resolve("c-0"),
            LogConfig.builder().cleanupPolicy("compact").segmentBytes(600).build(), env, true);
        for (int i = 0; i < 40; i++) {
            // the first segment's keys are its own, so its cleaned copy is written to
            String key = i < 8 ? "u" + i : "k" + (i % 3);
            log.appendAsLeader(keyed(time.milliseconds(), key, "v" + i), 0, AppendOrigin.CLIENT);
        }
        log.roll();
        Map<String, List<String>> before = byKey(log);
        layer.failWritesTo("00000000000000000000.log.cleaned");

        // When / Then: Kafka's cleaner takes the directory offline on an I/O error
        assertThatThrownBy(() -> cleaner(time).cleanIfNeeded(log))
            .isInstanceOf(io.cairn.wire.error.KafkaStorageException.class)
            .hasMessageContaining("cannot clean segment 00000000000000000000");
        assertThat(told).singleElement().asString().contains("cannot clean segment 00000000000000000000");
        assertThat(env.health().isOnline()).isFalse();
        assertThat(byKey(log)).isEqualTo(before);
        log.closeWithoutFlush();
    }

    @Test
    void theActiveSegmentShouldNeverBeCleaned() {
        // Given: everything in the active segment
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(1 << 20));
        for (int i = 0; i < 20; i++) {
            log.appendAsLeader(keyed(time.milliseconds(), "same", "v" + i), 0, AppendOrigin.CLIENT);
        }

        // When
        Optional<Cleaner.CleanResult> result = cleaner(time).cleanIfNeeded(log);

        // Then
        assertThat(result).isEmpty();
        assertThat(byKey(log).get("same")).hasSize(20);
    }

    @Test
    void compressedBatchesShouldBeRebuiltWithTheirCodecAndOffsets() {
        // Given
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600));
        SimpleRecord[] records = {new SimpleRecord(time.milliseconds(), "a".getBytes(), "1".getBytes()),
            new SimpleRecord(time.milliseconds(), "b".getBytes(), "1".getBytes()),
            new SimpleRecord(time.milliseconds(), "a".getBytes(), "2".getBytes())};
        log.appendAsLeader(MemoryRecords.withRecords(Compression.zstd().build(), records).buffer(), 0,
            AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "b", "2"), 0, AppendOrigin.CLIENT);
        log.roll();

        // When
        cleaner(time).cleanIfNeeded(log);

        // Then
        assertThat(byKey(log)).containsEntry("a", List.of("2=2")).containsEntry("b", List.of("3=2"));
        try (FetchDataInfo info = log.read(0, 10_000, Long.MAX_VALUE, true)) {
            MutableRecordBatch first = TestBatches.batches(info.records().readBytes()).get(0);
            assertThat(first.compressionType().name).isEqualTo("zstd");
            assertThat(first.baseOffset()).isZero();
        }
    }

    @Test
    void tombstonesShouldBeKeptUntilDeleteRetentionMsThenDropped() {
        // Given
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600).deleteRetentionMs(10_000));
        log.appendAsLeader(keyed(time.milliseconds(), "gone", "v"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "gone", null), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "kept", "v"), 0, AppendOrigin.CLIENT);
        log.roll();
        Cleaner cleaner = cleaner(time);
        long horizonExpected = time.milliseconds() + 10_000;
        cleaner.clean(log, Cleaner.cleanable(log).orElseThrow());
        Map<String, List<String>> beforeHorizon = byKey(log);
        long stampedHorizon;
        try (FetchDataInfo info = log.read(1, 10_000, Long.MAX_VALUE, true)) {
            MutableRecordBatch batch = TestBatches.batches(info.records().readBytes()).get(0);
            batch.ensureValid();
            stampedHorizon = batch.deleteHorizonMs().orElse(-1L);
        }
        time.sleep(5_000);
        cleaner.clean(log, new Cleaner.Cleanable(List.copyOf(log.segments()).subList(0, log.numberOfSegments() - 1),
            0, log.logEndOffset(), 1.0));
        assertThat(byKey(log)).containsKey("gone");
        time.sleep(5_001);
        log.appendAsLeader(keyed(time.milliseconds(), "kept", "w"), 0, AppendOrigin.CLIENT);
        log.roll();

        // When
        cleaner.clean(log, new Cleaner.Cleanable(List.copyOf(log.segments()).subList(0, log.numberOfSegments() - 1),
            0, log.logEndOffset(), 1.0));

        // Then: the first clean stamped the tombstone's batch with its delete horizon, the second dropped it
        assertThat(beforeHorizon).containsEntry("gone", List.of("1=null"));
        assertThat(stampedHorizon).isEqualTo(horizonExpected);
        Map<String, List<String>> after = byKey(log);
        assertThat(after).doesNotContainKey("gone");
        assertThat(after).containsEntry("kept", List.of("3=w"));
    }

    @Test
    void minCleanableDirtyRatioAndMinCompactionLagShouldHoldCleaningBack() {
        // Given
        PartitionLog lagged = compacted(LogConfig.builder().segmentBytes(600).minCompactionLagMs(60_000));
        for (int i = 0; i < 30; i++) {
            lagged.appendAsLeader(keyed(time.milliseconds(), "k", "v" + i), 0, AppendOrigin.CLIENT);
        }
        lagged.roll();
        lagged.updateConfig(lagged.config().toBuilder().minCompactionLagMs(60_000).minCleanableDirtyRatio(0.99)
            .build());
        Cleaner cleaner = cleaner(time);

        // When
        Optional<Cleaner.CleanResult> tooYoung = cleaner.cleanIfNeeded(lagged);
        time.sleep(60_001);
        lagged.updateConfig(lagged.config().toBuilder().minCleanableDirtyRatio(0.5).build());
        Optional<Cleaner.CleanResult> oldEnough = cleaner.cleanIfNeeded(lagged);
        for (int i = 0; i < 2; i++) {
            lagged.appendAsLeader(keyed(time.milliseconds(), "k", "late" + i), 0, AppendOrigin.CLIENT);
        }
        lagged.roll();
        time.sleep(60_001);
        lagged.updateConfig(lagged.config().toBuilder().minCleanableDirtyRatio(0.9).build());
        Optional<Cleaner.CleanResult> notDirtyEnough = cleaner.cleanIfNeeded(lagged);

        // Then
        assertThat(tooYoung).isEmpty();
        assertThat(oldEnough).isPresent();
        assertThat(notDirtyEnough).isEmpty();
    }

    @Test
    void aDirtyRecordOlderThanMaxCompactionLagMsShouldBeCleanedWhateverTheDirtyRatio() {
        // Given: a cleaned log, then two records more, far below its min.cleanable.dirty.ratio
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600));
        for (int i = 0; i < 30; i++) {
            log.appendAsLeader(keyed(time.milliseconds(), "k", "v" + i), 0, AppendOrigin.CLIENT);
        }
        log.roll();
        Cleaner cleaner = cleaner(time);
        assertThat(cleaner.cleanIfNeeded(log)).isPresent();
        for (int i = 0; i < 2; i++) {
            log.appendAsLeader(keyed(time.milliseconds(), "k", "late" + i), 0, AppendOrigin.CLIENT);
        }
        log.roll();
        log.updateConfig(log.config().toBuilder().minCleanableDirtyRatio(0.99).maxCompactionLagMs(10_000).build());
        Optional<Cleaner.CleanResult> young = cleaner.cleanIfNeeded(log);

        // When: the late records get older than max.compaction.lag.ms
        time.sleep(10_001);
        Optional<Cleaner.CleanResult> overdue = cleaner.cleanIfNeeded(log);

        // Then
        assertThat(young).isEmpty();
        assertThat(overdue).isPresent();
        assertThat(byKey(log).get("k")).singleElement().asString().endsWith("=late1");
    }

    @Test
    void theActiveSegmentOfACompactedLogRollsOnceItsFirstBatchIsOlderThanMaxCompactionLagMs() {
        // Given: segment.ms far longer than max.compaction.lag.ms
        PartitionLog log = compacted(LogConfig.builder().segmentMs(3_600_000).maxCompactionLagMs(1_000));
        log.appendAsLeader(keyed(time.milliseconds(), "k", "v0"), 0, AppendOrigin.CLIENT);
        time.sleep(1_001);
        log.appendAsLeader(keyed(time.milliseconds(), "k", "v1"), 0, AppendOrigin.CLIENT);
        LogCleaner background = new LogCleaner(() -> List.of(log), time, Double.MAX_VALUE);

        // When
        Optional<Cleaner.CleanResult> result = background.cleanDirtiest();

        // Then: v0 went to an inactive segment, found 1 ms past its lag (Kafka's max-compaction-delay-secs)
        background.close();
        assertThat(log.numberOfSegments()).isEqualTo(2);
        assertThat(result).isPresent();
        assertThat(background.stats().maxCompactionDelayMs()).isOne();
    }

    @Test
    void controlBatchesShouldBeKeptAndCompactedTopicsShouldRejectKeylessRecords() {
        // Given
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600));
        ByteBuffer txn = MemoryRecords.withTransactionalRecords(Compression.NONE, 5L, (short) 0, 0,
            new SimpleRecord(time.milliseconds(), "t".getBytes(), "1".getBytes())).buffer();
        log.appendAsLeader(txn, 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(5L, (short) 0, true, time.milliseconds()), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(keyed(time.milliseconds(), "t", "2"), 0, AppendOrigin.CLIENT);
        log.roll();

        // When
        cleaner(time).clean(log, Cleaner.cleanable(log).orElseThrow());

        // Then
        try (FetchDataInfo info = log.read(0, 10_000, Long.MAX_VALUE, true)) {
            List<MutableRecordBatch> batches = TestBatches.batches(info.records().readBytes());
            assertThat(batches).filteredOn(MutableRecordBatch::isControlBatch).hasSize(1);
        }
        assertThat(byKey(log)).containsEntry("t", List.of("2=2"));
        assertThatThrownBy(() -> log.appendAsLeader(TestBatches.values(time.milliseconds(), "no key"), 0,
            AppendOrigin.CLIENT)).isInstanceOf(RecordValidationException.class)
            .hasCauseInstanceOf(InvalidRecordException.class);
    }

    /** Cleans every segment but the active one from offset 0 (what a full pass after the checkpoint would do). */
    private static void cleanAll(Cleaner cleaner, PartitionLog log) {
        cleaner.clean(log, new Cleaner.Cleanable(List.copyOf(log.segments()).subList(0, log.numberOfSegments() - 1),
            0, log.logEndOffset(), 1.0));
    }

    private static ByteBuffer txnKeyed(long producerId, int sequence, long timestamp, String key, String value) {
        return MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, (short) 0, sequence,
            new SimpleRecord(timestamp, key.getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8))).buffer();
    }

    private static ByteBuffer idempotentKeyed(long producerId, int sequence, long timestamp, String... keyValues) {
        SimpleRecord[] records = new SimpleRecord[keyValues.length / 2];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(timestamp, keyValues[2 * i].getBytes(StandardCharsets.UTF_8),
                keyValues[2 * i + 1].getBytes(StandardCharsets.UTF_8));
        }
        return MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, (short) 0, sequence, records)
            .buffer();
    }

    private static List<MutableRecordBatch> allBatches(PartitionLog log) {
        try (FetchDataInfo info = log.read(log.logStartOffset(), Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            return TestBatches.batches(info.records().readBytes());
        }
    }

    @Test
    void keysOfAnAbortedTransactionDoNotSupersedeCommittedRecords() {
        // Given a committed value, then an aborted transaction writing the same key
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600));
        log.appendAsLeader(keyed(time.milliseconds(), "k", "committed"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(txnKeyed(7L, 0, time.milliseconds(), "k", "aborted"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(7L, (short) 0, false, time.milliseconds()), 0,
            AppendOrigin.COORDINATOR);
        log.appendAsLeader(keyed(time.milliseconds(), "other", "v"), 0, AppendOrigin.CLIENT);
        log.roll();

        // When
        cleaner(time).clean(log, Cleaner.cleanable(log).orElseThrow());

        // Then: Kafka's buildOffsetMap skips aborted batches, so the committed value survives and the aborted one,
        // which read_committed consumers never see, is removed
        assertThat(byKey(log)).containsEntry("k", List.of("0=committed")).containsEntry("other", List.of("3=v"));
        try (FetchDataInfo committed = log.readCommitted(0, 10_000, log.logEndOffset())) {
            assertThat(committed.abortedTransactions()).extracting(t -> t.producerId()).containsExactly(7L);
        }
    }

    @Test
    void aCommitMarkerGoesAfterDeleteRetentionMsOnceItsTransactionHasNoBatchesLeft() {
        // Given a committed transaction whose only record is superseded, by a producer that then expires
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600).deleteRetentionMs(10_000)
            .producerIdExpirationMs(60_000));
        log.appendAsLeader(txnKeyed(5L, 0, time.milliseconds(), "t", "1"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(5L, (short) 0, true, time.milliseconds()), 0,
            AppendOrigin.COORDINATOR);
        log.appendAsLeader(keyed(time.milliseconds(), "t", "2"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "u", "3"), 0, AppendOrigin.CLIENT);
        log.roll();
        Cleaner cleaner = cleaner(time);

        // When the transaction's batch goes (the producer expired), then the marker is stamped, then its horizon
        // passes
        cleanAll(cleaner, log);
        boolean markerWhileBatchLeft = allBatches(log).stream().anyMatch(MutableRecordBatch::isControlBatch);
        time.sleep(60_001);
        log.removeExpiredProducers();
        cleanAll(cleaner, log);
        cleanAll(cleaner, log);
        List<MutableRecordBatch> stamped = allBatches(log).stream().filter(MutableRecordBatch::isControlBatch)
            .toList();
        time.sleep(10_001);
        cleanAll(cleaner, log);

        // Then
        assertThat(markerWhileBatchLeft).isTrue();
        assertThat(stamped).hasSize(1);
        assertThat(stamped.get(0).deleteHorizonMs()).hasValue(time.milliseconds() - 10_001 + 10_000);
        assertThat(allBatches(log)).noneMatch(MutableRecordBatch::isControlBatch);
        assertThat(byKey(log)).containsEntry("t", List.of("2=2")).containsEntry("u", List.of("3=3"));
    }

    @Test
    void aProducersLastBatchIsKeptEmptySoItsSequenceStateSurvives() {
        // Given an idempotent producer whose only batch is wholly superseded
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600));
        log.appendAsLeader(idempotentKeyed(9L, 0, time.milliseconds(), "p", "1"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "p", "2"), 0, AppendOrigin.CLIENT);
        log.roll();
        log.appendAsLeader(keyed(time.milliseconds(), "q", "3"), 0, AppendOrigin.CLIENT);

        // When the log is cleaned and the producer state is then rebuilt from it (a truncation does that)
        cleaner(time).clean(log, Cleaner.cleanable(log).orElseThrow());
        log.truncateTo(2);
        boolean retryIsDuplicate = log.appendAsLeader(idempotentKeyed(9L, 0, time.milliseconds(), "p", "1"), 0,
            AppendOrigin.CLIENT).duplicate();

        // Then: Kafka's isBatchLastRecordOfProducer keeps the batch, with no records, so the retry of sequence 0 is
        // still recognised as a duplicate
        MutableRecordBatch first = allBatches(log).get(0);
        assertThat(first.producerId()).isEqualTo(9L);
        assertThat(first.baseOffset()).isZero();
        assertThat(first.lastSequence()).isZero();
        assertThat(first.countOrNull()).isZero();
        assertThat(retryIsDuplicate).isTrue();
        assertThat(byKey(log)).containsEntry("p", List.of("1=2"));
    }

    @Test
    void aPartlyCleanedBatchKeepsItsLastOffsetAndSequence() {
        // Given an idempotent batch of two records whose second is superseded
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(600));
        log.appendAsLeader(idempotentKeyed(9L, 0, time.milliseconds(), "a", "1", "b", "1"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "b", "2"), 0, AppendOrigin.CLIENT);
        log.roll();
        log.appendAsLeader(keyed(time.milliseconds(), "c", "3"), 0, AppendOrigin.CLIENT);

        // When
        cleaner(time).clean(log, Cleaner.cleanable(log).orElseThrow());
        log.truncateTo(3);
        boolean retryIsDuplicate = log.appendAsLeader(idempotentKeyed(9L, 0, time.milliseconds(), "a", "1", "b",
            "1"), 0, AppendOrigin.CLIENT).duplicate();

        // Then: Kafka's filterTo keeps the base offset, base sequence and last offset of the original batch
        MutableRecordBatch first = allBatches(log).get(0);
        assertThat(first.baseOffset()).isZero();
        assertThat(first.lastOffset()).isEqualTo(1);
        assertThat(first.baseSequence()).isZero();
        assertThat(first.lastSequence()).isEqualTo(1);
        assertThat(retryIsDuplicate).isTrue();
        assertThat(byKey(log)).containsEntry("a", List.of("0=1")).containsEntry("b", List.of("2=2"));
    }

    @Test
    void readersDuringACleanShouldNeverSeeAMissingKeyOrACorruptBatch() throws Exception {
        // Given
        PartitionLog log = compacted(LogConfig.builder().segmentBytes(2000));
        int keys = 20;
        for (int i = 0; i < 400; i++) {
            log.appendAsLeader(keyed(time.milliseconds(), "k" + (i % keys), "v" + i), 0, AppendOrigin.CLIENT);
        }
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                while (running.get()) {
                    Map<String, List<String>> seen = byKey(log);
                    if (seen.size() != keys) {
                        throw new AssertionError("reader saw " + seen.size() + " keys");
                    }
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        reader.start();

        // When
        Cleaner cleaner = cleaner(time);
        for (int round = 0; round < 6; round++) {
            for (int i = 0; i < 100; i++) {
                log.appendAsLeader(keyed(time.milliseconds(), "k" + (i % keys), "r" + round + "-" + i), 0,
                    AppendOrigin.CLIENT);
            }
            log.roll();
            Cleaner.cleanable(log).ifPresent(target -> cleaner.clean(log, target));
        }
        running.set(false);
        reader.join();

        // Then
        assertThat(failure.get()).isNull();
        assertThat(byKey(log).values()).allSatisfy(records -> assertThat(records).hasSize(1));
        LogInvariants.verify(log);
    }

    @Test
    void recordsSupersededOnlyAboveTheHighWatermarkShouldStayUntilItPassesThem() {
        // Given a and b at 0 and 1, overwritten at 2 and 3, and a high watermark of 2 (the overwrites not replicated)
        PartitionLog log = compacted(LogConfig.builder());
        log.appendAsLeader(keyed(time.milliseconds(), "a", "1"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "b", "1"), 0, AppendOrigin.CLIENT);
        log.roll();
        log.appendAsLeader(keyed(time.milliseconds(), "a", "2"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(time.milliseconds(), "b", "2"), 0, AppendOrigin.CLIENT);
        log.roll();
        log.updateHighWatermark(2);

        // When the log is cleaned, then again once the high watermark reached the log end
        Cleaner cleaner = cleaner(time);
        Cleaner.cleanable(log).ifPresent(target -> cleaner.clean(log, target));
        List<String> consumerRead;
        try (FetchDataInfo info = log.read(0, Integer.MAX_VALUE, log.highWatermark(), true)) {
            consumerRead = TestBatches.offsetsAndValues(info.records().readBytes());
        }
        log.updateHighWatermark(4);
        Cleaner.cleanable(log).ifPresent(target -> cleaner.clean(log, target));

        // Then: Kafka cleans only below the last stable offset, which the high watermark bounds, so a consumer reading
        // to the high watermark still finds a and b; once it passed the overwrites they go
        assertThat(consumerRead).containsExactly("0:1", "1:1");
        assertThat(byKey(log)).containsEntry("a", List.of("2=2")).containsEntry("b", List.of("3=2"));
    }

    @Test
    void throttlerShouldKeepTheRate() {
        // Given
        Throttler throttler = new Throttler(1000.0, time);
        long start = time.milliseconds();

        // When
        for (int i = 0; i < 10; i++) {
            throttler.maybeThrottle(500);
        }

        // Then
        assertThat(time.milliseconds() - start).isGreaterThanOrEqualTo(4000);
    }
}
