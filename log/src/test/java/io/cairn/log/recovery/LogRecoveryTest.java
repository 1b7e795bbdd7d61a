package io.cairn.log.recovery;

import static io.cairn.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.LogInvariants;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.TestBatches;
import io.cairn.log.producer.ProducerStateEntry;
import io.cairn.log.segment.LogSegment;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LogRecoveryTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();
    private final List<PartitionLog> opened = new ArrayList<>();
    private final LogConfig config = LogConfig.builder().segmentBytes(300).indexIntervalBytes(1).build();

    @AfterEach
    void closeLogs() {
        opened.forEach(PartitionLog::close);
    }

    private PartitionLog open(boolean clean) {
        PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), config, LogEnvironment.of(time), clean);
        opened.add(log);
        return log;
    }

    private PartitionLog crashed(int batches) {
        PartitionLog log = open(true);
        for (int i = 0; i < batches; i++) {
            log.appendAsLeader(values(time.milliseconds() + i, "v" + i), 1, AppendOrigin.CLIENT);
        }
        log.closeWithoutFlush();
        opened.remove(log);
        return log;
    }

    private static Path lastLogFile(PartitionLog log) {
        long last = LogLoader.segmentBaseOffsets(log.dir()).last();
        return log.dir().resolve(LogSegment.fileName(last) + LogSegment.LOG_SUFFIX);
    }

    @Test
    void uncleanOpenShouldTruncateATornTailAndRebuildIndexes() throws Exception {
        // Given
        PartitionLog before = crashed(10);
        Path file = lastLogFile(before);
        byte[] half = new byte[40];
        System.arraycopy(Files.readAllBytes(file), 0, half, 0, 40);
        Files.write(file, half, java.nio.file.StandardOpenOption.APPEND);

        // When
        PartitionLog log = open(false);

        // Then
        assertThat(log.logEndOffset()).isEqualTo(10);
        assertThat(LogInvariants.verify(log)).hasSize(10);
        LogAppendInfo next = log.appendAsLeader(values(time.milliseconds(), "after"), 2, AppendOrigin.CLIENT);
        assertThat(next.firstOffset()).isEqualTo(10);
    }

    @Test
    void uncleanOpenShouldCutAtACorruptBatchAndDropLaterSegments() throws Exception {
        // Given: recovery must start at the first segment, whose second batch is corrupt
        PartitionLog before = crashed(12);
        LogLoader.writeOffsets(LogEnvironment.of(time), before.dir(), 0L, 0L);
        Path segment = before.dir().resolve(LogSegment.fileName(0) + LogSegment.LOG_SUFFIX);
        long segmentsBefore = LogLoader.segmentBaseOffsets(before.dir()).size();
        try (RandomAccessFile raf = new RandomAccessFile(segment.toFile(), "rw")) {
            raf.seek(70 + 30);
            int b = raf.read();
            raf.seek(70 + 30);
            raf.write(b ^ 0xff);
        }

        // When
        PartitionLog log = open(false);

        // Then
        assertThat(segmentsBefore).isGreaterThan(2);
        assertThat(log.logEndOffset()).isEqualTo(1);
        assertThat(log.numberOfSegments()).isEqualTo(1);
        assertThat(LogLoader.segmentBaseOffsets(log.dir())).containsExactly(0L);
        assertThat(LogInvariants.verify(log)).containsExactly("0:v0");
        assertThat(log.appendAsLeader(values(time.milliseconds(), "x"), 3, AppendOrigin.CLIENT).firstOffset())
            .isEqualTo(1);
    }

    @Test
    void openShouldRebuildAMissingIndexEvenAfterACleanShutdown() throws Exception {
        // Given
        PartitionLog before = open(true);
        for (int i = 0; i < 10; i++) {
            before.appendAsLeader(values(time.milliseconds() + i, "v" + i), 1, AppendOrigin.CLIENT);
        }
        before.close();
        opened.remove(before);
        Path index = before.dir().resolve(LogSegment.fileName(0) + LogSegment.INDEX_SUFFIX);
        long entries = Files.size(index) / 8;
        Files.delete(index);

        // When
        PartitionLog log = open(true);

        // Then
        assertThat(entries).isPositive();
        assertThat(Files.size(index) / 8).isEqualTo(entries);
        assertThat(LogInvariants.verify(log)).hasSize(10);
    }

    @Test
    void uncleanOpenShouldIgnoreZeroedPreallocatedIndexTails() {
        // Given: the active segment's indexes were preallocated and never trimmed
        crashed(5);

        // When
        PartitionLog log = open(false);

        // Then
        assertThat(LogInvariants.verify(log)).hasSize(5);
        assertThat(log.logEndOffset()).isEqualTo(5);
    }

    @Test
    void retriedIdempotentBatchShouldStillBeADuplicateAfterRestart() {
        // Given
        PartitionLog log = open(true);
        log.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 0, time.milliseconds(), "a", "b"), 0,
            AppendOrigin.CLIENT);
        LogAppendInfo original = log.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 2, time.milliseconds(),
            "c"), 0, AppendOrigin.CLIENT);
        log.close();
        opened.remove(log);
        PartitionLog clean = open(true);

        // When
        LogAppendInfo retry = clean.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 2, time.milliseconds(),
            "c"), 0, AppendOrigin.CLIENT);

        // Then
        assertThat(retry.duplicate()).isTrue();
        assertThat(retry.firstOffset()).isEqualTo(original.firstOffset());
        assertThat(clean.logEndOffset()).isEqualTo(3);
        clean.closeWithoutFlush();
        opened.remove(clean);
        PartitionLog unclean = open(false);
        assertThat(unclean.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 2, time.milliseconds(), "c"), 0,
            AppendOrigin.CLIENT).duplicate()).isTrue();
        assertThat(unclean.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 3, time.milliseconds(), "d"), 0,
            AppendOrigin.CLIENT).firstOffset()).isEqualTo(3);
    }

    @Test
    void everyRetainedBatchOfAProducerShouldStillBeADuplicateAfterRestart() {
        // Given: five in-flight batches appended, none acknowledged (a broker stopped before it answered)
        PartitionLog log = open(true);
        log.appendAsLeader(values(time.milliseconds(), "other"), 0, AppendOrigin.CLIENT);
        List<LogAppendInfo> originals = new ArrayList<>();
        for (int i = 0; i < ProducerStateEntry.NUM_BATCHES_TO_RETAIN; i++) {
            originals.add(log.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 2 * i, time.milliseconds(),
                "a" + i, "b" + i), 0, AppendOrigin.CLIENT));
        }
        log.close();
        opened.remove(log);

        for (boolean clean : new boolean[] {true, false}) {
            PartitionLog reopened = open(clean);

            // When: the producer retries each of them, oldest first, after the restart
            // Then: each is answered as the duplicate it is, at its original offsets; nothing is appended again
            for (int i = 0; i < originals.size(); i++) {
                LogAppendInfo retry = reopened.appendAsLeader(TestBatches.idempotent(9L, (short) 0, 2 * i,
                    time.milliseconds(), "a" + i, "b" + i), 0, AppendOrigin.CLIENT);
                assertThat(retry.duplicate()).as("clean %s, batch %d", clean, i).isTrue();
                assertThat(retry.firstOffset()).isEqualTo(originals.get(i).firstOffset());
            }
            assertThat(reopened.logEndOffset()).isEqualTo(11);
            reopened.closeWithoutFlush();
            opened.remove(reopened);
        }
    }

    /** A log of committed, aborted and open transactions across three segments: [0, 4) [4, 9) [9, ...). */
    private PartitionLog transactions(PartitionLog log) {
        long now = time.milliseconds();
        log.appendAsLeader(TestBatches.transactional(1L, (short) 0, 0, now, "c0"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(1L, (short) 0, true, now), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(TestBatches.transactional(2L, (short) 0, 0, now, "x0"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(2L, (short) 0, false, now), 0, AppendOrigin.COORDINATOR);
        log.roll();
        log.appendAsLeader(TestBatches.transactional(3L, (short) 0, 0, now, "y0"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.transactional(1L, (short) 0, 1, now, "c1"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(1L, (short) 0, true, now), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(TestBatches.transactional(4L, (short) 0, 0, now, "z0"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(now, "plain"), 0, AppendOrigin.CLIENT);
        log.roll();
        // Transaction 3 started in the segment before; its ABORT lands here, while transaction 4 is still open.
        log.appendAsLeader(TestBatches.marker(3L, (short) 0, false, now), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(TestBatches.transactional(5L, (short) 0, 0, now, "w0"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(5L, (short) 0, false, now), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(TestBatches.marker(4L, (short) 0, false, now), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(TestBatches.transactional(6L, (short) 0, 0, now, "open"), 0, AppendOrigin.CLIENT);
        return log;
    }

    private static List<List<io.cairn.log.index.AbortedTxn>> txnIndexes(PartitionLog log) {
        List<List<io.cairn.log.index.AbortedTxn>> out = new ArrayList<>();
        for (LogSegment s : log.segments()) {
            out.add(s.txnIndex().allAbortedTxns());
        }
        return out;
    }

    @Test
    void uncleanOpenShouldRebuildTheTxnIndexOfEveryRecoveredSegment() {
        // Given: a crash (nothing flushed, recovery from the first segment)
        LogConfig big = LogConfig.builder().segmentBytes(1 << 20).indexIntervalBytes(1).build();
        PartitionLog before = transactions(PartitionLog.open(tmp.resolve("t-0"), big, LogEnvironment.of(time), true));
        List<List<io.cairn.log.index.AbortedTxn>> indexed = txnIndexes(before);
        long unstable = before.firstUnstableOffset();
        long end = before.logEndOffset();
        before.closeWithoutFlush();
        LogLoader.writeOffsets(LogEnvironment.of(time), before.dir(), 0L, 0L);

        // When
        PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), big, LogEnvironment.of(time), false);
        opened.add(log);

        // Then: every segment indexes the aborts whose markers it holds, with the last stable offsets of the first
        // append, and read_committed is told of them
        assertThat(indexed).containsExactly(
            List.of(new io.cairn.log.index.AbortedTxn(2L, 2, 3, 4)),
            List.of(),
            List.of(new io.cairn.log.index.AbortedTxn(3L, 4, 9, 7), new io.cairn.log.index.AbortedTxn(5L, 10, 11, 7),
                new io.cairn.log.index.AbortedTxn(4L, 7, 12, 13)));
        assertThat(log.logEndOffset()).isEqualTo(end);
        assertThat(txnIndexes(log)).isEqualTo(indexed);
        assertThat(log.firstUnstableOffset()).isEqualTo(unstable).isEqualTo(13);
        long[][] readsAndAborts = {{0, 2}, {4, 3, 4}, {9, 3, 5, 4}};
        for (long[] expected : readsAndAborts) {
            try (io.cairn.log.FetchDataInfo read = log.readCommitted(expected[0], 1 << 20, 13)) {
                assertThat(read.abortedTransactions()).as("read at %d", expected[0])
                    .extracting(io.cairn.log.index.AbortedTxn::producerId)
                    .containsExactlyElementsOf(java.util.Arrays.stream(expected).skip(1).boxed().toList());
            }
        }
    }

    @Test
    void uncleanOpenFromALaterSegmentShouldCompleteATransactionStartedBeforeIt() {
        // Given: the first two segments flushed (the recovery point at the third), a transaction open across them
        LogConfig big = LogConfig.builder().segmentBytes(1 << 20).indexIntervalBytes(1).build();
        PartitionLog before = transactions(PartitionLog.open(tmp.resolve("t-0"), big, LogEnvironment.of(time), true));
        List<List<io.cairn.log.index.AbortedTxn>> indexed = txnIndexes(before);
        before.closeWithoutFlush();
        LogLoader.writeOffsets(LogEnvironment.of(time), before.dir(), 9L, 0L);

        // When
        PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), big, LogEnvironment.of(time), false);
        opened.add(log);

        // Then: transactions 3 and 4, begun below the recovery point, are found aborted in the recovered segment
        assertThat(txnIndexes(log)).isEqualTo(indexed);
        assertThat(log.firstUnstableOffset()).isEqualTo(13);
    }

    @Test
    void compactionAfterACrashShouldKeepOnlyCommittedValues() {
        // Given: a committed value of k, an aborted overwrite, and a crash before anything was flushed
        LogConfig compacted = LogConfig.builder().segmentBytes(1 << 20).cleanupPolicy("compact").build();
        PartitionLog before = PartitionLog.open(tmp.resolve("c-0"), compacted, LogEnvironment.of(time), true);
        long now = time.milliseconds();
        before.appendAsLeader(TestBatches.keyed(now, "k", "committed"), 0, AppendOrigin.CLIENT);
        before.appendAsLeader(org.apache.kafka.common.record.MemoryRecords.withTransactionalRecords(
            org.apache.kafka.common.compress.Compression.NONE, 7L, (short) 0, 0,
            new org.apache.kafka.common.record.SimpleRecord(now, "k".getBytes(), "aborted".getBytes())).buffer(),
            0, AppendOrigin.CLIENT);
        before.appendAsLeader(TestBatches.marker(7L, (short) 0, false, now), 0, AppendOrigin.COORDINATOR);
        before.roll();
        before.appendAsLeader(TestBatches.keyed(now, "other", "v"), 0, AppendOrigin.CLIENT);
        before.closeWithoutFlush();
        LogLoader.writeOffsets(LogEnvironment.of(time), before.dir(), 0L, 0L);
        PartitionLog log = PartitionLog.open(tmp.resolve("c-0"), compacted, LogEnvironment.of(time), false);
        opened.add(log);
        log.updateHighWatermark(log.logEndOffset());

        // When
        io.cairn.log.cleaner.Cleaner cleaner = new io.cairn.log.cleaner.Cleaner(
            new io.cairn.log.cleaner.Throttler(Double.MAX_VALUE, time));
        cleaner.clean(log, io.cairn.log.cleaner.Cleaner.cleanable(log).orElseThrow());

        // Then: the aborted overwrite neither survives nor supersedes the committed value
        assertThat(LogInvariants.verify(log)).contains("0:committed").doesNotContain("1:aborted");
    }

    @Test
    void uncleanOpenShouldCutThePreallocatedTailOfTheActiveSegment() throws Exception {
        // Given: a crash with a preallocated active segment, its file 64 KiB of which three batches are data
        LogConfig preallocating = LogConfig.builder().segmentBytes(65_536).preallocate(true).build();
        PartitionLog before = PartitionLog.open(tmp.resolve("p-0"), preallocating, LogEnvironment.of(time), true);
        for (int i = 0; i < 3; i++) {
            before.appendAsLeader(values(time.milliseconds() + i, "v" + i), 1, AppendOrigin.CLIENT);
        }
        before.closeWithoutFlush();
        long crashedLength = Files.size(lastLogFile(before));

        // When
        PartitionLog log = PartitionLog.open(tmp.resolve("p-0"), preallocating, LogEnvironment.of(time), false);
        opened.add(log);
        log.appendAsLeader(values(time.milliseconds(), "after"), 1, AppendOrigin.CLIENT);

        // Then
        assertThat(crashedLength).isEqualTo(65_536);
        assertThat(log.logEndOffset()).isEqualTo(4);
        try (FetchDataInfo read = log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            assertThat(TestBatches.offsetsAndValues(read.records().readBytes()))
                    .containsExactly("0:v0", "1:v1", "2:v2", "3:after");
        }
        LogInvariants.verify(log);
    }
}
