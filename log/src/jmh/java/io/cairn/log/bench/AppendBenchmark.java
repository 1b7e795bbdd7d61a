package io.cairn.log.bench;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 * Leader appends of 16 KiB and 64 KiB batches against a raw {@code FileChannel.write} loop of the same bytes, in
 * the same run: MB/s = ops/s × batch size; the note reports the ratio. The log rolls at 256 MiB and is emptied at
 * 1 GiB (as the raw file is), so disk use stays bounded.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class AppendBenchmark {

    private static final long RESET_BYTES = 1L << 30;

    @Param({"16384", "65536"})
    public int batchBytes;

    private Path dir;
    private PartitionLog log;
    private ByteBuffer batch;
    private FileChannel raw;
    private long rawPosition;
    private long appended;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchSupport.tempDir("append");
        LogConfig config = LogConfig.builder().segmentBytes(256 << 20).timestampAfterMaxMs(Long.MAX_VALUE).build();
        log = PartitionLog.open(dir.resolve("bench-0"), config, LogEnvironment.of(Time.SYSTEM), true);
        batch = BenchSupport.batchOf(batchBytes);
        raw = FileChannel.open(dir.resolve("raw.bin"), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.READ);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        raw.close();
        BenchSupport.deleteTree(dir);
    }

    @Benchmark
    public long logAppend() {
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
