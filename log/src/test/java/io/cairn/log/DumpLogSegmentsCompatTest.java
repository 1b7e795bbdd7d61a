package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.segment.LogSegment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Kafka's own {@code kafka.tools.DumpLogSegments} reads our segments and indexes and finds nothing wrong. */
class DumpLogSegmentsCompatTest {

    @TempDir
    Path tmp;

    @Test
    void dumpLogSegmentsShouldReadOurSegmentsAndIndexesWithoutErrors() throws Exception {
        // Given: several segments with index entries, mixed codecs, idempotent and transactional batches
        MockTime time = new MockTime();
        LogConfig config = LogConfig.builder().segmentBytes(4096).indexIntervalBytes(100).build();
        PartitionLog log = PartitionLog.open(tmp.resolve("dump-0"), config, LogEnvironment.of(time), true);
        Compression[] codecs = {Compression.NONE, Compression.gzip().build(), Compression.snappy().build(),
            Compression.lz4().build(), Compression.zstd().build()};
        for (int i = 0; i < 60; i++) {
            time.sleep(i % 7 == 0 ? 0 : 13);
            log.appendAsLeader(TestBatches.withCompression(codecs[i % codecs.length], time.milliseconds() - (i % 3),
                "value-" + i, "other-" + i, "x".repeat(i)), i / 20, AppendOrigin.CLIENT);
            if (i % 10 == 5) {
                log.appendAsLeader(TestBatches.idempotent(42L, (short) 0, i / 10, time.milliseconds(), "idem-" + i), i / 20,
                    AppendOrigin.CLIENT);
                log.appendAsLeader(TestBatches.transactional(77L, (short) 1, i / 10, time.milliseconds(), "txn-" + i),
                    i / 20, AppendOrigin.CLIENT);
                log.appendAsLeader(TestBatches.marker(77L, (short) 1, i % 20 == 5, time.milliseconds()), i / 20,
                    AppendOrigin.COORDINATOR);
            }
        }
        log.close();
        List<String> files = new ArrayList<>();
        for (long base : io.cairn.log.recovery.LogLoader.segmentBaseOffsets(log.dir())) {
            String stem = log.dir().resolve(LogSegment.fileName(base)).toString();
            files.add(stem + ".log");
            files.add(stem + ".index");
            files.add(stem + ".timeindex");
            if (log.dir().resolve(LogSegment.fileName(base) + ".txnindex").toFile().exists()) {
                files.add(stem + ".txnindex");
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;

        // When
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            kafka.tools.DumpLogSegments.main(new String[] {"--files", String.join(",", files), "--deep-iteration"});
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }

        // Then
        String stdout = out.toString(StandardCharsets.UTF_8);
        String stderr = err.toString(StandardCharsets.UTF_8);
        assertThat(files.size()).isGreaterThan(9);
        assertThat(stderr).doesNotContain("Mismatches").doesNotContain("Non-consecutive")
            .doesNotContain("Exception").doesNotContain("not found").doesNotContain("mismatch");
        assertThat(stdout).doesNotContain("invalid bytes").doesNotContain("mismatch").doesNotContain("not monotonic")
            .doesNotContain("Exception").doesNotContain("is empty");
        assertThat(stdout.toLowerCase()).contains("isvalid: true").doesNotContain("isvalid: false");
        assertThat(stdout).contains("offset: 0 ", "endTxnMarker: ABORT", "endTxnMarker: COMMIT",
            "producerId: 77");
        assertThat(stdout.split("\n")).filteredOn(l -> l.startsWith("| offset: ")).hasSize((int) log.logEndOffset());
        assertThat(stdout).contains("timestamp: ").contains("position: ");
        System.out.println(stdout.lines().filter(l -> l.startsWith("Dumping")).count() + " files dumped");
    }
}
