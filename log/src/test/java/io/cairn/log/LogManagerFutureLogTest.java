package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A log directory's future logs (Kafka's {@code LogManager.futureLogs}): named {@code <topic>-<partition>.<id>-future},
 * loaded apart from the partition logs after a restart, promoted into place by a rename, and what a crash leaves
 * ({@code -delete} directories) removed at start.
 */
class LogManagerFutureLogTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();

    /** {@code batch} with base offset {@code offset} (the field is outside the CRC). */
    private static ByteBuffer at(long offset, ByteBuffer batch) {
        batch.putLong(batch.position(), offset);
        return batch;
    }

    private LogManager start() {
        return LogManager.start(tmp, LogConfig.defaults(), time, LogManager.Options.defaults());
    }

    @Test
    void futureDirectoryNamesAreKafkasAndParseBackToTheirPartition() {
        // When
        String name = LogDirNames.futureDirName("my.topic-x", 12);

        // Then
        assertThat(name).matches("my\\.topic-x-12\\.[0-9a-f]{32}-future");
        assertThat(name).hasSize(LogDirNames.futureDirNameLength("my.topic-x", 12));
        assertThat(LogDirNames.isFuture(name)).isTrue();
        assertThat(LogDirNames.partitionNameOf(name)).isEqualTo("my.topic-x-12");
        assertThat(LogDirNames.isFuture("my.topic-x-12")).isFalse();
        assertThat(LogDirNames.isFuture("orders-0.abc-future")).isFalse();
        assertThat(LogDirNames.isPartitionDir("orders-0.1f-delete")).isFalse();
    }

    @Test
    void aFutureLogSurvivesARestartApartFromThePartitionsLog() {
        // Given
        LogManager first = start();
        PartitionLog future = first.createFutureLog("orders", 3, LogConfig.defaults(), new Uuid(1, 2), 5L);
        future.appendAsFollower(at(5, TestBatches.values(time.milliseconds(), "a")));
        first.close();

        // When
        LogManager second = start();

        // Then
        assertThat(second.getLog("orders", 3)).isEmpty();
        assertThat(second.allLogs()).isEmpty();
        PartitionLog loaded = second.getFutureLog("orders", 3).orElseThrow();
        assertThat(loaded.topic()).isEqualTo("orders");
        assertThat(loaded.partition()).isEqualTo(3);
        assertThat(loaded.logStartOffset()).isEqualTo(5);
        assertThat(loaded.logEndOffset()).isEqualTo(6);
        assertThat(loaded.topicId()).contains(new Uuid(1, 2));
        assertThat(LogDirNames.isFuture(loaded.dir().getFileName().toString())).isTrue();
        second.close();
    }

    @Test
    void promotingRenamesTheFutureLogIntoPlaceAndTheNextStartLoadsItAsThePartitionsLog() {
        // Given
        LogManager first = start();
        first.createFutureLog("orders", 3, LogConfig.defaults(), new Uuid(1, 2), 0L)
            .appendAsFollower(TestBatches.values(time.milliseconds(), "a", "b"));

        // When
        PartitionLog promoted = first.promoteFutureLog("orders", 3, LogConfig.defaults());
        first.close();
        LogManager second = start();

        // Then
        assertThat(promoted.dir()).isEqualTo(tmp.resolve("orders-3"));
        assertThat(second.allFutureLogs()).isEmpty();
        assertThat(second.getLog("orders", 3).orElseThrow().logEndOffset()).isEqualTo(2);
        second.close();
    }

    @Test
    void deletedLogsAndFutureLogsAreRenamedAwayAndWhatACrashLeftIsRemovedAtStart() throws Exception {
        // Given
        LogManager first = start();
        first.getOrCreateLog("orders", 0, LogConfig.defaults(), null);
        first.createFutureLog("orders", 1, LogConfig.defaults(), null, 0L);
        Files.createDirectories(tmp.resolve("orders-2.0123abcd-delete"));

        // When
        first.deleteLog("orders", 0);
        first.deleteFutureLog("orders", 1);
        first.close();
        LogManager second = start();

        // Then
        assertThat(second.allLogs()).isEmpty();
        assertThat(second.allFutureLogs()).isEmpty();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            try (var children = Files.list(tmp)) {
                return children.noneMatch(p -> p.getFileName().toString().startsWith("orders"));
            }
        });
        second.close();
    }
}
