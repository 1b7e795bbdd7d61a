package io.cairn.log.bench;

import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A follower's append of what one fetch brought (Kafka's {@code appendAsFollower}): 1 MiB of uncompressed batches
 * of {@code batchBytes} each, in the heap buffer a fetch response is decoded into, with the leader's offsets (rebased
 * to the log end before each append, outside the CRC) and epoch. Small batches make the per-batch header work show
 * next to the CRC and the write: 1 KiB batches are 1,024 batches a fetch, 16 KiB (the producer's default
 * {@code batch.size}) 64. ops/s × 1 MiB = MB/s. The log is emptied at 1 GiB, so disk use stays bounded.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class FollowerAppendBenchmark {

    private static final long RESET_BYTES = 1L << 30;
    private static final int FETCH_BYTES = 1 << 20;
    private static final int LEADER_EPOCH = 3;

    @Param({"1024", "16384"})
    public int batchBytes;

    private Path dir;
    private PartitionLog log;
    private ByteBuffer fetched;
    private long appended;
    private ScheduledThreadPoolExecutor scheduler;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchSupport.tempDir("follower-append");
        LogConfig config = LogConfig.builder().segmentBytes(2047 << 20).timestampAfterMaxMs(Long.MAX_VALUE)
            .build();
        scheduler = new ScheduledThreadPoolExecutor(1);
        LogEnvironment env = new LogEnvironment(Time.SYSTEM, FileLayer.DEFAULT, OpenResources.unbounded(),
            OpenResources.unbounded(), scheduler);
        log = PartitionLog.open(dir.resolve("bench-0"), config, env, true);
        ByteBuffer batch = BenchSupport.batchOf(batchBytes);
        int count = Math.max(1, FETCH_BYTES / batch.remaining());
        fetched = ByteBuffer.allocate(count * batch.remaining());
        for (int i = 0; i < count; i++) {
            fetched.put(batch.duplicate());
        }
        fetched.flip();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        scheduler.shutdownNow();
        BenchSupport.deleteTree(dir);
    }

    @Benchmark
    public long followerAppend() {
        rebase(fetched, log.logEndOffset());
        long last = log.appendAsFollower(fetched.duplicate()).lastOffset();
        appended += fetched.remaining();
        if (appended >= RESET_BYTES) {
            log.truncateFullyAndStartAt(log.logEndOffset());
            appended = 0;
        }
        return last;
    }

    /** Gives the batches consecutive base offsets from {@code base} and the leader epoch (both outside the CRC). */
    private static void rebase(ByteBuffer batches, long base) {
        long next = base;
        for (int at = batches.position(); at < batches.limit(); at += 12 + batches.getInt(at + 8)) {
            batches.putLong(at, next);
            batches.putInt(at + 12, LEADER_EPOCH);
            next += batches.getInt(at + 23) + 1L;
        }
    }
}
