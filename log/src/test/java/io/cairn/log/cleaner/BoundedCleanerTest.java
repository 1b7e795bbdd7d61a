package io.cairn.log.cleaner;

import static io.cairn.log.TestBatches.keyed;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.LogInvariants;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.ShmTempDirFactory;
import io.cairn.log.TestBatches;
import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cleaner with an offset map smaller than the dirty keys (Kafka's full {@code SkimpyOffsetMap}): each pass
 * cleans the prefix it mapped and checkpoints there, leaves the rest as it was, and the passes together give the log
 * one unbounded pass gives.
 */
class BoundedCleanerTest {

    /** A map of 20 slots filled to half: 10 keys. */
    private static final Cleaner.Buffers TEN_KEYS = new Cleaner.Buffers(OffsetMap.ENTRY_BYTES * 20, 0.5, 1024);

    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    private final MockTime time = new MockTime();
    private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        opened.forEach(PartitionLog::close);
        scheduler.shutdownNow();
        scheduler.awaitTermination(30, TimeUnit.SECONDS);
    }

    private PartitionLog compacted(String name, int segmentBytes) {
        LogConfig config = LogConfig.builder().segmentBytes(segmentBytes).cleanupPolicy("compact")
            .fileDeleteDelayMs(5000).build();
        LogEnvironment env = new LogEnvironment(time, FileLayer.DEFAULT, OpenResources.unbounded(),
            OpenResources.unbounded(), scheduler);
        PartitionLog log = PartitionLog.open(tmp.resolve(name), config, env, true);
        opened.add(log);
        return log;
    }

    /**
     * Three rounds over 40 keys in batches of 4 keys (offsets 0-119), then an aborted transaction over k1, a
     * tombstone of k2 and a last value of k5; the last batch goes to the active segment.
     */
    private void fill(PartitionLog log) {
        long ts = time.milliseconds();
        for (int round = 0; round < 3; round++) {
            for (int b = 0; b < 10; b++) {
                String[] kv = new String[8];
                for (int i = 0; i < 4; i++) {
                    kv[2 * i] = "k" + (4 * b + i);
                    kv[2 * i + 1] = "r" + round + "-" + (4 * b + i);
                }
                log.appendAsLeader(keyed(ts, kv), 0, AppendOrigin.CLIENT);
            }
        }
        log.appendAsLeader(MemoryRecords.withTransactionalRecords(Compression.NONE, 7L, (short) 0, 0,
            new SimpleRecord(ts, bytes("k1"), bytes("aborted"))).buffer(), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(TestBatches.marker(7L, (short) 0, false, ts), 0, AppendOrigin.COORDINATOR);
        log.appendAsLeader(keyed(ts, "k2", null), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(keyed(ts, "k5", "last"), 0, AppendOrigin.CLIENT);
        log.roll();
        log.appendAsLeader(keyed(ts, "active", "v"), 0, AppendOrigin.CLIENT);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** offset → "key=value" of every data record at or after {@code from}. */
    private static Map<Long, String> recordsFrom(PartitionLog log, long from) {
        Map<Long, String> out = new TreeMap<>();
        CleanerTest.byKey(log).forEach((key, records) -> records.forEach(r -> {
            long offset = Long.parseLong(r.substring(0, r.indexOf('=')));
            if (offset >= from) {
                out.put(offset, key + r.substring(r.indexOf('=')));
            }
        }));
        return out;
    }

    /** Cleans {@code log} pass after pass until nothing is left to clean; returns the passes. */
    private List<Cleaner.CleanResult> cleanFully(PartitionLog log, Cleaner cleaner) {
        List<Cleaner.CleanResult> passes = new ArrayList<>();
        while (Cleaner.cleanable(log).isPresent()) {
            assertThat(passes).as("passes").hasSizeLessThan(50);
            Map<Long, String> before = recordsFrom(log, 0);
            Cleaner.CleanResult result = cleaner.clean(log, Cleaner.cleanable(log).orElseThrow());
            passes.add(result);
            // the checkpoint is where the pass stopped; everything from there on is as it was
            assertThat(Cleaner.readCheckpoint(log.dir())).isEqualTo(result.endOffset());
            assertThat(result.endOffset()).isGreaterThan(result.firstDirtyOffset());
            Map<Long, String> untouched = new TreeMap<>(before);
            untouched.keySet().removeIf(offset -> offset < result.endOffset());
            assertThat(recordsFrom(log, result.endOffset())).isEqualTo(untouched);
            LogInvariants.verify(log);
        }
        return passes;
    }

    @Test
    void aMapSmallerThanTheDirtyKeysShouldCleanInPassesToTheLogOnePassGives() {
        // Given the same log twice
        PartitionLog reference = compacted("ref-0", 400);
        PartitionLog bounded = compacted("bounded-0", 400);
        fill(reference);
        fill(bounded);
        long dirtyEnd = Cleaner.cleanable(bounded).orElseThrow().endOffset();

        // When one is cleaned by an unbounded-enough map and the other by a map of 10 keys
        Cleaner.CleanResult once = new Cleaner(new Throttler(Double.MAX_VALUE, time)).clean(reference,
            Cleaner.cleanable(reference).orElseThrow());
        List<Cleaner.CleanResult> passes = cleanFully(bounded, new Cleaner(new Throttler(Double.MAX_VALUE, time),
            TEN_KEYS));

        // Then the default map took it in one pass
        assertThat(once.endOffset()).isEqualTo(dirtyEnd);
        // the small one stopped in the third batch, at the first key it could not take (k10 at offset 10), so the
        // first pass cleaned [0, 10) and checkpointed at 10, as Kafka's latestOffset + 1
        assertThat(passes.get(0).firstDirtyOffset()).isZero();
        assertThat(passes.get(0).endOffset()).isEqualTo(10);
        assertThat(passes).hasSizeGreaterThan(4);
        for (int i = 1; i < passes.size(); i++) {
            assertThat(passes.get(i).firstDirtyOffset()).isEqualTo(passes.get(i - 1).endOffset());
        }
        assertThat(passes.get(passes.size() - 1).endOffset()).isEqualTo(dirtyEnd);
        // and both logs hold the same records at the same offsets
        assertThat(CleanerTest.byKey(bounded)).isEqualTo(CleanerTest.byKey(reference))
            .containsEntry("k1", List.of("81=r2-1"))
            .containsEntry("k2", List.of("122=null"))
            .containsEntry("k5", List.of("123=last"))
            .containsEntry("k39", List.of("119=r2-39"));
        assertThat(bounded.logEndOffset()).isEqualTo(reference.logEndOffset());
    }

    @Test
    void aFirstSegmentWithMoreKeysThanTheMapShouldBeCleanedInPartsNotSkipped() {
        // Given one large segment of 120 records over 40 keys, then the active segment
        PartitionLog reference = compacted("ref-0", 1 << 20);
        PartitionLog bounded = compacted("bounded-0", 1 << 20);
        fill(reference);
        fill(bounded);
        assertThat(bounded.segments()).hasSize(2);
        new Cleaner(new Throttler(Double.MAX_VALUE, time)).clean(reference,
            Cleaner.cleanable(reference).orElseThrow());

        // When the 10-key map cleans it
        Cleaner cleaner = new Cleaner(new Throttler(Double.MAX_VALUE, time), TEN_KEYS);
        Cleaner.CleanResult first = cleaner.clean(bounded, Cleaner.cleanable(bounded).orElseThrow());

        // Then the first pass rewrote that segment up to offset 10 and checkpointed inside it
        assertThat(first.segmentsCleaned()).isEqualTo(1);
        assertThat(first.endOffset()).isEqualTo(10);
        assertThat(Cleaner.readCheckpoint(bounded.dir())).isEqualTo(10);
        // nothing below 10 is superseded below 10, so the segment's records are all still there
        assertThat(recordsFrom(bounded, 0)).hasSize(124);

        // and the next passes finish it, each making progress, to the log one pass gives
        List<Cleaner.CleanResult> rest = cleanFully(bounded, cleaner);
        assertThat(rest).isNotEmpty().allSatisfy(r -> assertThat(r.segmentsCleaned()).isEqualTo(1));
        assertThat(CleanerTest.byKey(bounded)).isEqualTo(CleanerTest.byKey(reference));
        assertThat(recordsFrom(bounded, 0)).hasSize(41);
    }

    @Test
    void aReadBufferSmallerThanABatchShouldGrowForItAndCleanTheSame() {
        // Given the same log twice, and a cleaner whose read buffer (64 bytes) is smaller than every batch
        PartitionLog reference = compacted("ref-0", 400);
        PartitionLog small = compacted("small-0", 400);
        fill(reference);
        fill(small);
        Cleaner.Buffers tiny = new Cleaner.Buffers(Cleaner.Buffers.DEFAULT_DEDUPE_BUFFER_SIZE, 0.9, 64);

        // When
        Cleaner.CleanResult once = new Cleaner(new Throttler(Double.MAX_VALUE, time)).clean(reference,
            Cleaner.cleanable(reference).orElseThrow());
        Cleaner.CleanResult withTiny = new Cleaner(new Throttler(Double.MAX_VALUE, time), tiny).clean(small,
            Cleaner.cleanable(small).orElseThrow());

        // Then: one pass each, the same bytes read and written, the same records
        assertThat(withTiny).isEqualTo(once);
        assertThat(CleanerTest.byKey(small)).isEqualTo(CleanerTest.byKey(reference));
        LogInvariants.verify(small);
    }
}
