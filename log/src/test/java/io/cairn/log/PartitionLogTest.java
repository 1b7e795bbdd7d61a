package io.cairn.log;

import io.cairn.log.epoch.EpochEntry;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.error.RecordTooLargeException;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.RecordBatch;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static io.cairn.log.TestBatches.concat;
import static io.cairn.log.TestBatches.offsetsAndValues;
import static io.cairn.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;


class PartitionLogTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeLogs() {
        opened.forEach(PartitionLog::close);
    }

    private PartitionLog open(LogConfig config) {
        return open(config, true);
    }

    private PartitionLog open(LogConfig config, boolean clean) {
        PartitionLog log = PartitionLog.open(tmp.resolve("topic-0"), config, LogEnvironment.of(time), clean);
        opened.add(log);
        return log;
    }

    /** Reads from {@code from} to the end, one segment per read as Kafka returns them. */
    static List<String> readAll(PartitionLog log, long from) {
        List<String> out = new ArrayList<>();
        long next = from;
        while (next < log.logEndOffset()) {
            try (FetchDataInfo info = log.read(next, Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
                List<String> got = offsetsAndValues(info.records().readBytes());
                if (got.isEmpty()) {
                    break;
                }
                out.addAll(got);
                next = Long.parseLong(got.get(got.size() - 1).split(":")[0]) + 1;
            }
        }
        return out;
    }

    @Test
    void leaderAppendShouldAssignOffsetsAndEpochOutsideTheCrc() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(values(time.milliseconds(), "a", "b"), 3, AppendOrigin.CLIENT);

        // When
        LogAppendInfo info = log.appendAsLeader(concat(values(time.milliseconds(), "c"),
            values(time.milliseconds(), "d", "e")), 4, AppendOrigin.CLIENT);

        // Then
        assertThat(info.firstOffset()).isEqualTo(2);
        assertThat(info.lastOffset()).isEqualTo(4);
        assertThat(info.recordCount()).isEqualTo(3);
        assertThat(log.logEndOffset()).isEqualTo(5);
        try (FetchDataInfo read = log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            List<MutableRecordBatch> batches = TestBatches.batches(read.records().readBytes());
            assertThat(batches).extracting(MutableRecordBatch::baseOffset).containsExactly(0L, 2L, 3L);
            assertThat(batches).extracting(MutableRecordBatch::partitionLeaderEpoch).containsExactly(3, 4, 4);
            batches.forEach(MutableRecordBatch::ensureValid);
        }
        assertThat(log.epochEntries()).containsExactly(new EpochEntry(3, 0), new EpochEntry(4, 2));
    }

    @Test
    void leaderAppendShouldRejectACorruptBatch() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer batch = values(time.milliseconds(), "a");
        batch.put(batch.limit() - 1, (byte) (batch.get(batch.limit() - 1) ^ 1));

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(batch, 0, AppendOrigin.CLIENT))
            .isInstanceOf(CorruptRecordException.class);
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void leaderAppendShouldRejectABatchLargerThanMaxMessageBytes() {
        // Given
        PartitionLog log = open(LogConfig.builder().maxMessageBytes(100).build());
        ByteBuffer batch = values(time.milliseconds(), "x".repeat(200));

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(batch, 0, AppendOrigin.CLIENT))
            .isInstanceOf(RecordTooLargeException.class);
    }

    @Test
    void leaderAppendShouldRejectWrongMagicInconsistentCountAndTruncatedInput() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer badMagic = values(time.milliseconds(), "a");
        badMagic.put(RecordBatch.MAGIC_OFFSET, (byte) 1);
        ByteBuffer badCount = values(time.milliseconds(), "a", "b");
        badCount.putInt(RecordBatch.RECORDS_COUNT_OFFSET, 5);
        badCount.putInt(RecordBatch.CRC_OFFSET, (int) RecordBatch.of(badCount, 0).computeChecksum());
        ByteBuffer truncated = values(time.milliseconds(), "a");
        truncated.limit(truncated.limit() - 3);

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(badMagic, 0, AppendOrigin.CLIENT))
            .isInstanceOf(InvalidRecordException.class);
        assertThatThrownBy(() -> log.appendAsLeader(badCount, 0, AppendOrigin.CLIENT))
            .isInstanceOf(InvalidRecordException.class);
        assertThatThrownBy(() -> log.appendAsLeader(truncated, 0, AppendOrigin.CLIENT))
            .isInstanceOf(CorruptRecordException.class);
    }

    @Test
    void leaderAppendShouldRejectRecordsWhoseOffsetDeltasDoNotFollow() {
        // Given: two records whose second offset delta is rewritten from 1 to 5, CRC recomputed
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer batch = values(time.milliseconds(), "a", "b");
        int second = RecordBatch.RECORD_BATCH_OVERHEAD + 1 + batch.get(RecordBatch.RECORD_BATCH_OVERHEAD) / 2;
        int offsetDeltaAt = second + 1 + 1 + 1;
        assertThat(batch.get(offsetDeltaAt)).isEqualTo((byte) 2);
        batch.put(offsetDeltaAt, (byte) 10);
        batch.putInt(RecordBatch.CRC_OFFSET, (int) RecordBatch.of(batch, 0).computeChecksum());

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(batch, 0, AppendOrigin.CLIENT))
            .isInstanceOf(InvalidRecordException.class).hasMessageContaining("offset delta 5");
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void logAppendTimeShouldStampTheBatchAndKeepItsCrcValid() {
        // Given
        PartitionLog log = open(LogConfig.builder().logAppendTime(true).build());
        time.sleep(5000);

        // When
        LogAppendInfo info = log.appendAsLeader(values(12L, "a"), 0, AppendOrigin.CLIENT);

        // Then
        assertThat(info.logAppendTime()).isEqualTo(time.milliseconds());
        try (FetchDataInfo read = log.read(0, 1000, Long.MAX_VALUE, true)) {
            MutableRecordBatch batch = TestBatches.batches(read.records().readBytes()).get(0);
            batch.ensureValid();
            assertThat(batch.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
            assertThat(batch.maxTimestamp()).isEqualTo(time.milliseconds());
        }
    }

    @Test
    void followerAppendShouldKeepOffsetsAndRejectOverlapsAndGaps() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer first = values(time.milliseconds(), "a", "b");
        assign(first, 0, 1);
        log.appendAsFollower(first);
        ByteBuffer overlap = values(time.milliseconds(), "c");
        assign(overlap, 1, 1);
        ByteBuffer gap = values(time.milliseconds(), "c");
        assign(gap, 5, 1);
        ByteBuffer next = values(time.milliseconds(), "c");
        assign(next, 2, 2);

        // When
        assertThatThrownBy(() -> log.appendAsFollower(overlap)).isInstanceOf(UnexpectedAppendOffsetException.class);
        assertThatThrownBy(() -> log.appendAsFollower(gap)).isInstanceOf(UnexpectedAppendOffsetException.class);
        LogAppendInfo info = log.appendAsFollower(next);

        // Then
        assertThat(info.firstOffset()).isEqualTo(2);
        assertThat(readAll(log, 0)).containsExactly("0:a", "1:b", "2:c");
        assertThat(log.epochEntries()).containsExactly(new EpochEntry(1, 0), new EpochEntry(2, 2));
    }

    @Test
    void followerAppendShouldRejectABatchThatDoesNotFollowTheOneBeforeItInTheSameAppend() {
        // Given: the first batch follows the log end, the second leaves a gap after it (not a compacted topic)
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer first = values(time.milliseconds(), "a", "b");
        assign(first, 0, 1);
        ByteBuffer afterGap = values(time.milliseconds(), "c");
        assign(afterGap, 3, 1);

        // When
        Throwable thrown = catchThrowable(() -> log.appendAsFollower(concat(first, afterGap)));

        // Then: nothing of the append is written, and the exception names the whole append's offsets
        assertThat(thrown).isInstanceOfSatisfying(UnexpectedAppendOffsetException.class, e -> {
            assertThat(e.firstOffset()).isZero();
            assertThat(e.lastOffset()).isEqualTo(3);
        });
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void followerAppendShouldReportTheEpochAndOffsetsOfItsBatches() {
        // Given: batches of two leader epochs, the later one with the larger timestamp
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer older = values(time.milliseconds(), "a", "b");
        assign(older, 0, 1);
        ByteBuffer newer = values(time.milliseconds() + 5, "c");
        assign(newer, 2, 4);

        // When
        LogAppendInfo info = log.appendAsFollower(concat(older, newer));

        // Then
        assertThat(info.firstOffset()).isZero();
        assertThat(info.lastOffset()).isEqualTo(2);
        assertThat(info.lastLeaderEpoch()).isEqualTo(4);
        assertThat(info.maxTimestamp()).isEqualTo(time.milliseconds() + 5);
        assertThat(info.offsetOfMaxTimestamp()).isEqualTo(2);
        assertThat(info.recordCount()).isEqualTo(3);
        assertThat(log.epochEntries()).containsExactly(new EpochEntry(1, 0), new EpochEntry(4, 2));
    }

    @Test
    void aFollowerTakesABatchItsLeaderAcceptedAboveMaxMessageBytesAndNamesTheOffsetsOfAnOverlap() {
        // Given: a batch larger than this log's max.message.bytes (the topic's limit changed after the leader took it)
        PartitionLog log = open(LogConfig.defaults().toBuilder().maxMessageBytes(80).build());
        ByteBuffer large = values(time.milliseconds(), "a".repeat(100), "b");
        assign(large, 0, 1);

        // When
        log.appendAsFollower(large.duplicate());

        // Then: taken, as Kafka's appendAsFollower ignores the record size; an overlap names its offsets
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThatThrownBy(() -> log.appendAsLeader(values(time.milliseconds(), "a".repeat(100)), 1,
            AppendOrigin.CLIENT)).isInstanceOf(RecordTooLargeException.class);
        assertThatThrownBy(() -> log.appendAsFollower(large.duplicate()))
            .isInstanceOfSatisfying(UnexpectedAppendOffsetException.class, overlap -> {
                assertThat(overlap.firstOffset()).isZero();
                assertThat(overlap.lastOffset()).isEqualTo(1);
            });
    }

    @Test
    void followerAppendOnACompactedTopicShouldAcceptGapsLeftByTheLeadersCleaner() {
        // Given
        PartitionLog log = open(LogConfig.builder().cleanupPolicy("compact").build());
        ByteBuffer first = TestBatches.keyed(time.milliseconds(), "k", "a");
        assign(first, 0, 1);
        ByteBuffer afterGap = TestBatches.keyed(time.milliseconds(), "k", "b");
        assign(afterGap, 7, 1);

        // When
        log.appendAsFollower(concat(first, afterGap));

        // Then
        assertThat(log.logEndOffset()).isEqualTo(8);
        assertThat(readAll(log, 0)).containsExactly("0:a", "7:b");
    }

    @Test
    void segmentJitterShouldRollEarlierButNeverLaterThanSegmentMs() {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentMs(10_000).segmentJitterMs(5_000).build());
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        log.roll();
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);
        LogSegment active = log.segments().stream().reduce((a, b) -> b).orElseThrow();

        // When
        time.sleep(10_001);
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);

        // Then
        assertThat(active.rollJitterMs()).isBetween(0L, 4_999L);
        assertThat(log.numberOfSegments()).isEqualTo(3);
    }

    @Test
    void appendShouldRollWhenTheSegmentIsFull() {
        // Given
        ByteBuffer sample = values(time.milliseconds(), "0123456789");
        PartitionLog log = open(LogConfig.builder().segmentBytes(sample.remaining() * 3).build());

        // When
        for (int i = 0; i < 7; i++) {
            log.appendAsLeader(values(time.milliseconds(), "0123456789"), 0, AppendOrigin.CLIENT);
        }

        // Then
        assertThat(log.segments()).extracting(LogSegment::baseOffset).containsExactly(0L, 3L, 6L);
        assertThat(readAll(log, 0)).hasSize(7);
        assertThat(log.recoveryPoint()).isEqualTo(6);
    }

    @Test
    void appendShouldRollWhenTheSegmentIsOlderThanSegmentMs() {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentMs(1000).build());
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        time.sleep(500);
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);

        // When
        time.sleep(600);
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);

        // Then
        assertThat(log.segments()).extracting(LogSegment::baseOffset).containsExactly(0L, 2L);
    }

    @Test
    void oldProducerTimestampsRollByTheirOwnSpreadNotByTheWallClock() {
        // Given: timestamps from long ago, within segment.ms of each other
        PartitionLog log = open(LogConfig.builder().segmentMs(1000).timestampBeforeMaxMs(Long.MAX_VALUE).build());
        long then = time.milliseconds() - 365L * 24 * 3600 * 1000;

        // When
        log.appendAsLeader(values(then, "a"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(then + 500, "b"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(then + 900, "c"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(then + 1_001, "d"), 0, AppendOrigin.CLIENT);

        // Then: only the batch more than segment.ms after the segment's first one rolled
        assertThat(log.segments()).extracting(LogSegment::baseOffset).containsExactly(0L, 3L);
    }

    @Test
    void appendShouldRollWhenTheOffsetIndexIsFull() {
        // Given: two index entries fit, one entry per batch
        PartitionLog log = open(LogConfig.builder().segmentIndexBytes(24).indexIntervalBytes(1).build());

        // When
        for (int i = 0; i < 5; i++) {
            log.appendAsLeader(values(time.milliseconds(), "v" + i), 0, AppendOrigin.CLIENT);
        }

        // Then
        assertThat(log.numberOfSegments()).isGreaterThan(1);
        assertThat(readAll(log, 0)).hasSize(5);
        LogSegment first = log.segments().iterator().next();
        assertThat(first.offsetIndex().file()).hasSize(first.offsetIndex().entries() * 8L);
    }

    @Test
    void readInsideABatchShouldReturnTheWholeBatch() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(values(time.milliseconds(), "a", "b", "c"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "d"), 0, AppendOrigin.CLIENT);

        // When
        List<String> records = readAll(log, 1);

        // Then
        assertThat(records).containsExactly("0:a", "1:b", "2:c", "3:d");
    }

    @Test
    void readShouldReturnAtLeastOneBatchEvenAboveMaxBytes() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer big = values(time.milliseconds(), "x".repeat(500));
        int bigSize = big.remaining();
        log.appendAsLeader(big, 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "y"), 0, AppendOrigin.CLIENT);

        // When
        try (FetchDataInfo minOne = log.read(0, 10, Long.MAX_VALUE, true);
             FetchDataInfo strict = log.read(0, 10, Long.MAX_VALUE, false)) {

            // Then
            assertThat(minOne.records().length()).isEqualTo(bigSize);
            assertThat(minOne.firstEntryIncomplete()).isFalse();
            assertThat(strict.records().length()).isEqualTo(10);
            assertThat(strict.firstEntryIncomplete()).isTrue();
        }
    }

    @Test
    void readShouldStopAtMaxOffset() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(values(time.milliseconds(), "a", "b"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);

        // When
        List<String> belowHighWatermark;
        try (FetchDataInfo info = log.read(0, Integer.MAX_VALUE, 2, true)) {
            belowHighWatermark = offsetsAndValues(info.records().readBytes());
        }

        // Then
        assertThat(belowHighWatermark).containsExactly("0:a", "1:b");
        try (FetchDataInfo atEnd = log.read(3, 100, Long.MAX_VALUE, true)) {
            assertThat(atEnd.records().length()).isZero();
        }
        assertThatThrownBy(() -> log.read(4, 100, Long.MAX_VALUE, true))
            .isInstanceOf(OffsetOutOfRangeException.class);
    }

    @Test
    void readShouldCrossSegmentsAndCloseSlicesIndependently() {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentBytes(100).build());
        for (int i = 0; i < 6; i++) {
            log.appendAsLeader(values(time.milliseconds(), "v" + i), 0, AppendOrigin.CLIENT);
        }

        // When
        List<String> all = new ArrayList<>();
        long next = 0;
        while (next < log.logEndOffset()) {
            try (FetchDataInfo info = log.read(next, 1, Long.MAX_VALUE, true)) {
                List<String> got = offsetsAndValues(info.records().readBytes());
                all.addAll(got);
                next += got.size();
            }
        }

        // Then
        assertThat(log.numberOfSegments()).isGreaterThan(2);
        assertThat(all).containsExactly("0:v0", "1:v1", "2:v2", "3:v3", "4:v4", "5:v5");
    }

    @Test
    void truncateToShouldRemoveWholeAndPartialSegmentsAndFixIndexes() {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentBytes(200).indexIntervalBytes(1).build());
        for (int i = 0; i < 10; i++) {
            log.appendAsLeader(values(time.milliseconds() + i, "v" + i), i / 3, AppendOrigin.CLIENT);
        }
        int segmentsBefore = log.numberOfSegments();

        // When
        log.truncateTo(4);

        // Then
        assertThat(segmentsBefore).isGreaterThan(2);
        assertThat(log.logEndOffset()).isEqualTo(4);
        assertThat(readAll(log, 0)).containsExactly("0:v0", "1:v1", "2:v2", "3:v3");
        assertThat(log.epochEntries()).containsExactly(new EpochEntry(0, 0), new EpochEntry(1, 3));
        LogSegment active = log.segments().stream().reduce((a, b) -> b).orElseThrow();
        assertThat(active.offsetIndex().lastEntry().offset()).isLessThan(4);
        log.appendAsLeader(values(time.milliseconds(), "new"), 5, AppendOrigin.CLIENT);
        assertThat(readAll(log, 4)).containsExactly("4:new");
    }

    @Test
    void truncateToShouldRestoreProducerStateFromTheLatestSnapshotBelowIt() {
        // Given: producer 9's only batch in a segment that retention removed, a producer snapshot at the roll after
        // it, and a transaction of producer 7 opened after the snapshot and aborted later
        PartitionLog log = open(LogConfig.builder().segmentBytes(1 << 20).indexIntervalBytes(1).build());
        log.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 0, time.milliseconds(), "p9"), 0,
            AppendOrigin.CLIENT);
        log.roll();
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        log.deleteRecordsBefore(1);
        log.deleteOldSegments();
        log.appendAsLeader(TestBatches.transactional(7L, (short) 0, 0, time.milliseconds(), "t"), 0,
            AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(7L, (short) 0, false, time.milliseconds()), 0,
            AppendOrigin.COORDINATOR);

        // When: a follower's truncation below the ABORT marker
        log.truncateTo(4);

        // Then: producer 9 is still known (its state comes from the snapshot, not a rescan of what is left), the
        // transaction is open again and holds the last stable offset, and its index entry is gone
        assertThat(log.logStartOffset()).isEqualTo(1);
        assertThat(log.activeProducers()).extracting(p -> p.producerId()).containsExactlyInAnyOrder(9L, 7L);
        assertThat(log.firstUnstableOffset()).isEqualTo(2);
        assertThat(log.segments()).allSatisfy(s -> assertThat(s.txnIndex().allAbortedTxns()).isEmpty());
        assertThat(log.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 1, time.milliseconds(), "p9b"), 0,
            AppendOrigin.CLIENT).firstOffset()).isEqualTo(4);
    }

    @Test
    void readCommittedShouldListOnlyTheAbortedTransactionsOverlappingTheRecordsRead() {
        // Given: an aborted transaction at the start, then many more aborted ones
        PartitionLog log = open(LogConfig.builder().segmentBytes(1 << 20).indexIntervalBytes(1).build());
        for (long pid = 1; pid <= 20; pid++) {
            log.appendAsLeader(TestBatches.transactional(pid, (short) 0, 0, time.milliseconds(), "x" + pid), 0,
                AppendOrigin.CLIENT);
            log.appendAsLeader(TestBatches.marker(pid, (short) 0, false, time.milliseconds()), 0,
                AppendOrigin.COORDINATOR);
        }

        // When: a fetch whose byte limit takes the first batch only
        try (FetchDataInfo first = log.readCommitted(0, 1, log.logEndOffset())) {
            // Then: the bound is the records read, not the last stable offset (Kafka's upper bound)
            assertThat(offsetsAndValues(first.records().readBytes())).containsExactly("0:x1");
            assertThat(first.abortedTransactions()).extracting(t -> t.producerId()).containsExactly(1L);
        }
        try (FetchDataInfo all = log.readCommitted(0, 1 << 20, log.logEndOffset())) {
            assertThat(all.abortedTransactions()).hasSize(20);
        }
    }

    @Test
    void listOffsetsShouldAnswerEarliestLatestByTimestampAndMaxTimestamp() {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentBytes(150).indexIntervalBytes(1).build());
        long t0 = time.milliseconds();
        log.appendAsLeader(TestBatches.timestamped(new long[] {t0, t0 + 10, t0 + 5}), 1, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.timestamped(new long[] {t0 + 50, t0 + 20}), 2, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.timestamped(new long[] {t0 + 30}), 2, AppendOrigin.CLIENT);

        // When
        Optional<TimestampAndOffset> earliest = log.fetchOffsetByTimestamp(TimestampAndOffset.EARLIEST_TIMESTAMP);
        Optional<TimestampAndOffset> latest = log.fetchOffsetByTimestamp(TimestampAndOffset.LATEST_TIMESTAMP);
        Optional<TimestampAndOffset> max = log.fetchOffsetByTimestamp(TimestampAndOffset.MAX_TIMESTAMP);
        Optional<TimestampAndOffset> local = log.fetchOffsetByTimestamp(
            TimestampAndOffset.EARLIEST_LOCAL_TIMESTAMP);
        Optional<TimestampAndOffset> at7 = log.fetchOffsetByTimestamp(t0 + 7);
        Optional<TimestampAndOffset> at25 = log.fetchOffsetByTimestamp(t0 + 25);
        Optional<TimestampAndOffset> after = log.fetchOffsetByTimestamp(t0 + 51);

        // Then
        assertThat(earliest).contains(new TimestampAndOffset(-1, 0, 1));
        assertThat(latest).contains(new TimestampAndOffset(-1, 6, 2));
        assertThat(max).contains(new TimestampAndOffset(t0 + 50, 3, 2));
        assertThat(local).contains(new TimestampAndOffset(-1, 0, 1));
        assertThat(at7).contains(new TimestampAndOffset(t0 + 10, 1, 1));
        assertThat(at25).contains(new TimestampAndOffset(t0 + 50, 3, 2));
        assertThat(after).isEmpty();
    }

    @Test
    void compressedBatchesShouldBeStoredAsSentAndFoundByTimestamp() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer zstd = TestBatches.withCompression(Compression.zstd().build(), time.milliseconds(), "a", "b");
        ByteBuffer original = ByteBuffer.allocate(zstd.remaining()).put(zstd.duplicate()).flip();

        // When
        log.appendAsLeader(zstd, 0, AppendOrigin.CLIENT);

        // Then
        assertThat(readAll(log, 0)).containsExactly("0:a", "1:b");
        try (FetchDataInfo info = log.read(0, 1000, Long.MAX_VALUE, true)) {
            ByteBuffer stored = info.records().readBytes();
            assertThat(stored.slice(RecordBatch.ATTRIBUTES_OFFSET, stored.remaining() - RecordBatch.ATTRIBUTES_OFFSET))
                .isEqualTo(original.slice(RecordBatch.ATTRIBUTES_OFFSET, original.remaining() - RecordBatch.ATTRIBUTES_OFFSET));
        }
        assertThat(log.fetchOffsetByTimestamp(time.milliseconds())).map(TimestampAndOffset::offset).contains(0L);
    }

    @Test
    void preallocatedSegmentsAreAllocatedInFullAndTrimmedOnRollAndClose() throws Exception {
        // Given: preallocation turned on live, so the next segment is the first preallocated one
        PartitionLog log = open(LogConfig.builder().segmentBytes(4096).build());
        log.updateConfig(log.config().toBuilder().preallocate(true).build());
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        LogSegment rolledTo = log.roll();
        Path rolledToFile = rolledTo.log().file();
        long allocated = Files.size(rolledToFile);
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);

        // When
        LogSegment last = log.roll();
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);
        log.close();
        opened.remove(log);

        // Then: allocated in full while active, trimmed to its batches when rolled and when closed
        assertThat(allocated).isEqualTo(4096);
        assertThat(Files.size(rolledToFile)).isEqualTo(rolledTo.size()).isLessThan(4096);
        assertThat(Files.size(last.log().file())).isEqualTo(last.size()).isLessThan(4096);
        PartitionLog reopened = open(LogConfig.builder().segmentBytes(4096).preallocate(true).build());
        assertThat(readAll(reopened, 0)).containsExactly("0:a", "1:b", "2:c");
        reopened.appendAsLeader(values(time.milliseconds(), "d"), 0, AppendOrigin.CLIENT);
        assertThat(readAll(reopened, 0)).containsExactly("0:a", "1:b", "2:c", "3:d");
    }

    @Test
    void reopenAfterCleanCloseShouldKeepEverything() {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentBytes(120).build());
        for (int i = 0; i < 5; i++) {
            log.appendAsLeader(values(time.milliseconds(), "v" + i), 7, AppendOrigin.CLIENT);
        }
        log.writeTopicId(new Uuid(1234L, 5678L));
        log.close();
        opened.remove(log);

        // When
        PartitionLog reopened = open(LogConfig.builder().segmentBytes(120).build());

        // Then
        assertThat(reopened.logEndOffset()).isEqualTo(5);
        assertThat(readAll(reopened, 0)).hasSize(5);
        assertThat(reopened.topicId()).contains(new Uuid(1234L, 5678L));
        assertThat(reopened.epochEntries()).containsExactly(new EpochEntry(7, 0));
        reopened.appendAsLeader(values(time.milliseconds(), "after"), 8, AppendOrigin.CLIENT);
        assertThat(readAll(reopened, 5)).containsExactly("5:after");
    }

    @Test
    void partitionMetadataAndEpochCheckpointShouldUseKafkasFormats() throws Exception {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        Uuid topicId = new Uuid(0x1234_5678_9abc_def0L, 0x0fed_cba9_8765_4321L);

        // When
        log.writeTopicId(topicId);
        log.appendAsLeader(values(time.milliseconds(), "a"), 2, AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "b"), 5, AppendOrigin.CLIENT);

        // Then
        String metadata = Files.readString(log.dir().resolve("partition.metadata"), StandardCharsets.UTF_8);
        assertThat(metadata).isEqualTo("version: 0\ntopic_id: "
            + org.apache.kafka.common.Uuid.fromString(topicId.toString()) + "\n");
        assertThat(Files.readAllLines(log.dir().resolve("leader-epoch-checkpoint")))
            .containsExactly("0", "2", "2 0", "5 1");
        try (Stream<Path> files = Files.list(log.dir())) {
            assertThat(files.map(p -> p.getFileName().toString()).collect(Collectors.toList()))
                .contains("00000000000000000000.log", "00000000000000000000.index",
                    "00000000000000000000.timeindex");
        }
    }

    @Test
    void durableModeShouldReportAppendsOnlyAfterTheyAreFlushed() throws Exception {
        // Given
        PartitionLog log = open(LogConfig.builder().durable(true).build());
        int writers = 8;
        int perWriter = 50;
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());

        // When
        for (int w = 0; w < writers; w++) {
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; i < perWriter; i++) {
                        LogAppendInfo info = log.appendAsLeader(values(time.milliseconds(), "x"), 0,
                            AppendOrigin.CLIENT);
                        if (log.flushedOffset() <= info.lastOffset()) {
                            throw new AssertionError("append " + info.lastOffset() + " returned before its fsync");
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }

        // Then
        assertThat(failures).isEmpty();
        assertThat(log.logEndOffset()).isEqualTo(writers * perWriter);
        assertThat(log.flushedOffset()).isEqualTo(writers * perWriter);
    }

    @Test
    void flushMessagesShouldMoveTheRecoveryPoint() {
        // Given
        PartitionLog log = open(LogConfig.builder().flushMessages(3).build());

        // When
        log.appendAsLeader(values(time.milliseconds(), "a", "b"), 0, AppendOrigin.CLIENT);
        long before = log.recoveryPoint();
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);

        // Then
        assertThat(before).isZero();
        assertThat(log.recoveryPoint()).isEqualTo(3);
    }

    @Test
    void flushMsShouldFlushWhenTheIntervalPassed() {
        // Given
        PartitionLog log = open(LogConfig.builder().flushMs(1000).build());
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        log.maybeFlushByTime();
        long before = log.recoveryPoint();

        // When
        time.sleep(1000);
        log.maybeFlushByTime();

        // Then
        assertThat(before).isZero();
        assertThat(log.recoveryPoint()).isEqualTo(1);
    }

    /** Sets a batch's base offset and leader epoch, as a leader would have before a follower receives it. */
    private static void assign(ByteBuffer batch, long baseOffset, int leaderEpoch) {
        RecordBatch view = RecordBatch.of(batch, 0);
        view.setBaseOffset(baseOffset);
        view.setPartitionLeaderEpoch(leaderEpoch);
    }
}
