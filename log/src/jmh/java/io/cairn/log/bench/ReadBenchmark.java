package io.cairn.log.bench;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Sequential fetch reads of 1 MiB from a 256 MiB log, sent with zero copy ({@code transferTo}) to
 * {@code /dev/null} as a socket send would be: MB/s = ops/s × 1 MiB (page-cache resident). Every batch has the
 * same size and record count, so the next fetch offset follows from the slice length without reading it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ReadBenchmark {

    private static final int FETCH_BYTES = 1 << 20;

    private Path dir;
    private PartitionLog log;
    private FileChannel sink;
    private long next;
    private int batchSize;
    private int recordsPerBatch;
    private final ByteBuffer copyBuffer = ByteBuffer.allocateDirect(2 * FETCH_BYTES);

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        dir = BenchSupport.tempDir("read");
        LogConfig config = LogConfig.builder().segmentBytes(64 << 20).timestampAfterMaxMs(Long.MAX_VALUE).build();
        log = PartitionLog.open(dir.resolve("read-0"), config, LogEnvironment.of(Time.SYSTEM), true);
        ByteBuffer batch = BenchSupport.batchOf(64 * 1024);
        batchSize = batch.remaining();
        recordsPerBatch = batch.getInt(57);
        while (log.size() < (256L << 20)) {
            log.appendAsLeader(batch.duplicate(), 0, AppendOrigin.CLIENT);
        }
        sink = FileChannel.open(Path.of("/dev/null"), StandardOpenOption.WRITE);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        log.close();
        sink.close();
        BenchSupport.deleteTree(dir);
    }

    /** The copy path (TLS): the same fetch read into a reused direct buffer. */
    @Benchmark
    public long fetch1MiBCopy() throws IOException {
        if (next >= log.logEndOffset()) {
            next = 0;
        }
        try (FetchDataInfo info = log.read(next, FETCH_BYTES, Long.MAX_VALUE, true)) {
            copyBuffer.clear().limit(info.records().length());
            long read = info.records().channel().read(copyBuffer, info.records().position());
            next += (long) (info.records().length() / batchSize) * recordsPerBatch;
            return read;
        }
    }

    @Benchmark
    public long fetch1MiB() throws IOException {
        if (next >= log.logEndOffset()) {
            next = 0;
        }
        try (FetchDataInfo info = log.read(next, FETCH_BYTES, Long.MAX_VALUE, true)) {
            long sent = info.records().channel().transferTo(info.records().position(), info.records().length(),
                sink);
            next += (long) (info.records().length() / batchSize) * recordsPerBatch;
            return sent;
        }
    }
}
