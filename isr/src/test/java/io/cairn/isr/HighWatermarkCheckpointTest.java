package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.io.FileLayer;
import io.cairn.metadata.image.TopicPartition;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Kafka's {@code replication-offset-checkpoint} format: written atomically, read back, damage ignored. */
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
