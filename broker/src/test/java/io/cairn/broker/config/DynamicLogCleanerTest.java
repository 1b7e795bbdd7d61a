package io.cairn.broker.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.Time;
import io.cairn.log.cleaner.LogCleaner;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The cleaner's buffers change live: Kafka's per-thread minimum checked, the new sizes handed to the cleaners. */
class DynamicLogCleanerTest {

    private final LogCleaner cleaner = new LogCleaner(List::of, Time.SYSTEM, Double.MAX_VALUE);
    private final DynamicLogCleaner dynamic = new DynamicLogCleaner(1,
            BrokerConfig.fromMap(Map.of("log.cleaner.threads", "2")).cleaner(), () -> List.of(cleaner));

    @AfterEach
    void close() {
        cleaner.close();
    }

    private static MetadataImage image(Map<String, String> broker1, Map<String, String> cluster) {
        return new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(), Map.of(),
                Map.of(ConfigResource.broker("1"), broker1, ConfigResource.broker(""), cluster), 0L, 0L, Map.of(),
                Map.of(), Map.of());
    }

    @Test
    void theBufferKeysAreCheckedAsKafkaChecksThemAndApplied() {
        // Given two threads and Kafka's defaults
        cleaner.start(2, 60_000);
        MetadataImage none = image(Map.of(), Map.of());

        // When / Then: 2 MiB over 2 threads is not more than 1 MiB each; a bit more is; the cluster default counts
        assertThat(dynamic.validate("1", Map.of("log.cleaner.dedupe.buffer.size", "2097152"), none)).contains(
                "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.");
        assertThat(dynamic.validate("1", Map.of("log.cleaner.dedupe.buffer.size", "2097154"), none)).isEmpty();
        assertThat(dynamic.validate("", Map.of("log.cleaner.threads", "4"),
                image(Map.of("log.cleaner.dedupe.buffer.size", "4194304"), Map.of()))).contains(
                "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.");
        assertThat(dynamic.validate("1", Map.of("log.cleaner.io.buffer.load.factor", "0"), none).orElseThrow())
                .contains("offset map is too small");
        assertThat(dynamic.validate("1", Map.of("log.cleaner.io.buffer.load.factor", "0.5",
                "log.cleaner.io.buffer.size", "1024"), none)).isEmpty();

        // When committed
        dynamic.apply(image(Map.of("log.cleaner.dedupe.buffer.size", "16777216",
                "log.cleaner.io.buffer.load.factor", "0.5"), Map.of("log.cleaner.io.buffer.size", "65536")));

        // Then the cleaner's threads restarted with the new sizes
        assertThat(cleaner.bufferSizes()).isEqualTo(new LogCleaner.BufferSizes(16777216, 0.5, 65536));
        assertThat(cleaner.threads()).isEqualTo(2);
        assertThat(dynamic.current().dedupeBufferSize()).isEqualTo(16777216);

        // and a value that cannot run is not applied
        dynamic.apply(image(Map.of("log.cleaner.dedupe.buffer.size", "1024"), Map.of()));
        assertThat(cleaner.bufferSizes()).isEqualTo(new LogCleaner.BufferSizes(16777216, 0.5, 65536));
    }
}
