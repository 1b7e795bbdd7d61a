package io.cairn.log.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;

/** Shared helpers of the benchmarks: batches of a given size built by kafka-clients, temp dirs. */
final class BenchSupport {

    private BenchSupport() {
    }

    /** An uncompressed batch of about {@code bytes} bytes made of 1 KiB records. */
    static ByteBuffer batchOf(int bytes) {
        int records = Math.max(1, bytes / 1024);
        SimpleRecord[] rs = new SimpleRecord[records];
        byte[] value = new byte[Math.max(1, bytes / records - 20)];
        for (int i = 0; i < records; i++) {
            rs[i] = new SimpleRecord(System.currentTimeMillis(), null, value);
        }
        ByteBuffer built = MemoryRecords.withRecords(Compression.NONE, rs).buffer();
        ByteBuffer copy = ByteBuffer.allocateDirect(built.remaining());
        copy.put(built).flip();
        return copy;
    }

    static Path tempDir(String name) throws IOException {
        return Files.createTempDirectory("cairn-bench-" + name);
    }

    static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
