package io.cairn.log.bench;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/** Appends/s in durable mode (fsync before the append returns, group commit) with 1, 8 and 64 writers. */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class DurableAppendBenchmark {

    private Path dir;
    private PartitionLog log;
    private ByteBuffer batch;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchSupport.tempDir("durable");
        LogConfig config = LogConfig.builder().durable(true).segmentBytes(256 << 20)
            .timestampAfterMaxMs(Long.MAX_VALUE).build();
        log = PartitionLog.open(dir.resolve("durable-0"), config, LogEnvironment.of(Time.SYSTEM), true);
        batch = BenchSupport.batchOf(1024);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        BenchSupport.deleteTree(dir);
    }

    private long append() {
        return log.appendAsLeader(batch.duplicate(), 0, AppendOrigin.CLIENT).lastOffset();
    }

    @Benchmark
    @Threads(1)
    public long writers01() {
        return append();
    }

    @Benchmark
    @Threads(8)
    public long writers08() {
        return append();
    }

    @Benchmark
    @Threads(64)
    public long writers64() {
        return append();
    }
}
