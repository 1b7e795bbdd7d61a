package io.cairn.log.bench;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * Leader appends (with a background scheduler, as under LogManager: a rolled segment is fsynced off the append
 * path, as Kafka does) of 16 KiB and 64 KiB batches against a raw {@code FileChannel.write} loop of the same bytes, in
 * the same run: MB/s = ops/s × batch size; the note reports the ratio. The log is emptied at 1 GiB (as the raw
 * file is), so disk use stays bounded; {@code -p segmentMiB=256} adds rolls and their background fsyncs.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class AppendBenchmark {

    private static final long RESET_BYTES = 1L << 30;

    @Param({"16384", "65536"})
    public int batchBytes;

    /** 2047 MiB: no roll inside the 1 GiB window (the append path alone); 256: four rolls with their fsyncs. */
    @Param({"2047"})
    public int segmentMiB;

    private Path dir;
    private PartitionLog log;
    private ByteBuffer batch;
    private FileChannel raw;
    private long rawPosition;
    private long appended;
    private ScheduledThreadPoolExecutor scheduler;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchSupport.tempDir("append");
        LogConfig config = LogConfig.builder().segmentBytes(segmentMiB << 20).timestampAfterMaxMs(Long.MAX_VALUE)
            .build();
        scheduler = new ScheduledThreadPoolExecutor(1);
        LogEnvironment env = new LogEnvironment(Time.SYSTEM, FileLayer.DEFAULT, OpenResources.unbounded(),
            OpenResources.unbounded(), scheduler);
        log = PartitionLog.open(dir.resolve("bench-0"), config, env, true);
        batch = BenchSupport.batchOf(batchBytes);
        raw = FileChannel.open(dir.resolve("raw.bin"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.READ);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        scheduler.shutdownNow();
        raw.close();
        BenchSupport.deleteTree(dir);
    }

    @Benchmark
    public long logAppend() {
        // The append assigns the offsets in place; a producer's batch comes with base offset 0 (outside the CRC).
        batch.putLong(batch.position(), 0L);
        long last = log.appendAsLeader(batch.duplicate(), 0, AppendOrigin.CLIENT).lastOffset();
        appended += batch.remaining();
        if (appended >= RESET_BYTES) {
            log.truncateFullyAndStartAt(log.logEndOffset());
            appended = 0;
        }
        return last;
    }

    @Benchmark
    public long rawFileChannelWrite() throws IOException {
        ByteBuffer src = batch.duplicate();
        while (src.hasRemaining()) {
            rawPosition += raw.write(src, rawPosition);
        }
        if (rawPosition >= RESET_BYTES) {
            raw.truncate(0);
            rawPosition = 0;
        }
        return rawPosition;
    }
}
