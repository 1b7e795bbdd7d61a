package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.io.FileLayer;
import io.cairn.log.segment.LogSegment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * 10,000 partitions with three segments each (30,000 segments, more than this machine's 20,000 descriptors) open,
 * take appends and serve a read from every segment while open handles and mapped indexes stay within their bounds.
 */
class ManyPartitionsIT {

    private static final int PARTITIONS = Integer.getInteger("cairn.partitions", 10_000);
    private static final int MAX_HANDLES = 512;
    private static final int MAX_MAPPINGS = 1024;

    /** tmpfs when there is one: 120,000 files are created, and the disk's metadata journal is not under test. */
    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void tenThousandPartitionsShouldServeReadsWithinTheHandleAndMappingBounds() throws Exception {
        // Given: fsync is irrelevant here, so the file layer skips it to keep the test fast
        MockTime time = new MockTime();
        LogConfig config = LogConfig.builder().segmentBytes(100).segmentIndexBytes(4096).build();
        LogManager.Options options = new LogManager.Options(MAX_HANDLES, MAX_MAPPINGS, 0L, 0L, 0L, Double.MAX_VALUE,
            new NoSyncLayer());
        // When / Then
        run(tmp, config, time, options);
    }

    private void run(Path base, LogConfig config, MockTime time, LogManager.Options options) throws IOException {
        LogManager manager = LogManager.start(base, config, time, options);
        long fdsBefore = openDescriptors();
        long maxFds = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            PartitionLog log = manager.getOrCreateLog("topic", p, config, null);
            for (int b = 0; b < 3; b++) {
                log.appendAsLeader(TestBatches.values(time.milliseconds(), "p" + p + "-" + b), -1, AppendOrigin.CLIENT);
            }
            if (p % 1000 == 0) {
                maxFds = Math.max(maxFds, openDescriptors());
            }
        }

        // When: one read from every segment of every partition
        long segments = 0;
        for (int p = 0; p < PARTITIONS; p++) {
            PartitionLog log = manager.getLog("topic", p).orElseThrow();
            for (LogSegment s : List.copyOf(log.segments())) {
                if (s.size() == 0) {
                    continue;
                }
                try (FetchDataInfo info = log.read(s.baseOffset(), 1000, Long.MAX_VALUE, true)) {
                    assertThat(TestBatches.offsetsAndValues(info.records().readBytes()))
                        .containsExactly(s.baseOffset() + ":p" + p + "-" + s.baseOffset());
                }
                segments++;
            }
            if (p % 500 == 0) {
                maxFds = Math.max(maxFds, openDescriptors());
            }
            // the background roll flushes may hold one handle beyond the bound until they enforce it themselves
            assertThat(manager.environment().handles().openCount()).isLessThanOrEqualTo(MAX_HANDLES + 1);
            assertThat(manager.environment().mappings().openCount()).isLessThanOrEqualTo(MAX_MAPPINGS);
        }

        // Then
        assertThat(segments).isEqualTo(3L * PARTITIONS);
        assertThat(maxFds - fdsBefore).as("descriptors opened by the log").isLessThan(MAX_HANDLES + 100);
        System.out.println(PARTITIONS + " partitions, " + segments + " segments read, peak descriptors above "
            + "baseline " + (maxFds - fdsBefore) + ", mapped indexes " + manager.environment().mappings().openCount());
        manager.close();
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    /** Opens real files but makes {@code force} a no-op. */
    private static final class NoSyncLayer implements FileLayer {
        @Override
        public java.nio.channels.FileChannel open(Path path, java.nio.file.OpenOption... options)
            throws IOException {
            return DelegatingFileChannel.noSync(java.nio.channels.FileChannel.open(path, options));
        }
    }
}
