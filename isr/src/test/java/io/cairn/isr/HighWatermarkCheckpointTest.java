package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.io.FileLayer;
import io.cairn.metadata.image.TopicPartition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's {@code replication-offset-checkpoint} format: written atomically and durably, read back, damage ignored.
 */
class HighWatermarkCheckpointTest {

    @TempDir
    Path dir;

    @Test
    void theCheckpointIsKafkasVersionCountAndTopicPartitionOffsetLines() throws Exception {
        // Given
        Map<TopicPartition, Long> highWatermarks = new LinkedHashMap<>();
        highWatermarks.put(new TopicPartition("orders", 0), 1042L);
        highWatermarks.put(new TopicPartition("pay.ments_x", 3), 77L);

        // When
        HighWatermarkCheckpoint.write(FileLayer.DEFAULT, dir, highWatermarks);

        // Then
        assertThat(Files.readAllLines(dir.resolve("replication-offset-checkpoint")))
            .containsExactly("0", "2", "orders 0 1042", "pay.ments_x 3 77");
        assertThat(Files.exists(dir.resolve("replication-offset-checkpoint.tmp"))).isFalse();
        assertThat(HighWatermarkCheckpoint.read(dir)).isEqualTo(highWatermarks);
    }

    @Test
    void theCheckpointIsRenamedIntoPlaceAndItsDirectoryFsyncedBeforeWriteReturns() throws Exception {
        // Given: a layer that notes what the log directory holds when it is fsynced
        List<String> seenAtDirectorySync = new ArrayList<>();
        FileLayer layer = new FileLayer() {
            @Override
            public FileChannel open(Path path, OpenOption... options) throws IOException {
                return FileChannel.open(path, options);
            }

            @Override
            public void fsyncDirectory(Path syncedDir) throws IOException {
                FileLayer.super.fsyncDirectory(syncedDir);
                try (Stream<Path> files = Files.list(syncedDir)) {
                    files.forEach(f -> seenAtDirectorySync.add(f.getFileName() + "="
                        + String.join("|", readLines(f))));
                }
            }
        };

        // When
        HighWatermarkCheckpoint.write(layer, dir, Map.of(new TopicPartition("orders", 0), 9L));

        // Then: the directory was fsynced after the rename, before write returned
        assertThat(seenAtDirectorySync).containsExactly("replication-offset-checkpoint=0|1|orders 0 9");
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void aMissingCheckpointReadsAsNothing() {
        // When / Then
        assertThat(HighWatermarkCheckpoint.read(dir)).isEmpty();
    }

    @Test
    void aDamagedCheckpointIsIgnoredAndAMalformedLineSkipped() throws Exception {
        // Given
        Path file = dir.resolve(HighWatermarkCheckpoint.FILE_NAME);
        Files.writeString(file, "7\n1\norders 0 5\n");
        assertThat(HighWatermarkCheckpoint.read(dir)).isEmpty();
        Files.writeString(file, "0\n3\norders 0 5\n");
        assertThat(HighWatermarkCheckpoint.read(dir)).isEmpty();

        // When
        Files.writeString(file, "0\n3\norders 0 5\norders x 6\npayments 1\n");

        // Then
        assertThat(HighWatermarkCheckpoint.read(dir)).containsExactly(Map.entry(new TopicPartition("orders", 0), 5L));
    }
}
