package io.cairn.log;

import static io.cairn.log.TestBatches.offsetsAndValues;
import static io.cairn.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.io.OpenResources;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.error.KafkaStorageException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write that fails (a full disk) takes the log directory offline ({@link LogDirHealth}, Kafka's
 * {@code LogDirFailureChannel}): the listener is told once, and nothing more is written to the directory, even once
 * writes would succeed again, until the log is opened anew; a segment whose write failed keeps no index entry for
 * the bytes it did not take.
 */
class LogDirFailureTest {

    private static final String SEGMENT = "00000000000000000000.log";

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();

    @Test
    void aFailedAppendTakesTheDirectoryOfflineAndTheLogOpensAgainAtItsLastWholeBatch() {
        // Given: a log with two records whose segment writes will fail
        RecordingFileLayer layer = new RecordingFileLayer();
        List<String> told = new CopyOnWriteArrayList<>();
        LogEnvironment env = new LogEnvironment(time, layer, OpenResources.unbounded(), OpenResources.unbounded(),
            null, LogFlushListener.NONE,
            new LogDirHealth((dir, message, cause) -> told.add(dir + " | " + message + " | " + cause.getMessage())));
        Path dir = tmp.resolve("t-0");
        PartitionLog log = PartitionLog.open(dir, LogConfig.defaults(), env, true);
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);
        layer.failWritesTo(SEGMENT);

        // When
        assertThatThrownBy(() -> log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT))
            .isInstanceOf(KafkaStorageException.class)
            .hasMessageContaining("cannot append offsets 2 to 2");

        // Then: told once, with the directory and the cause; the log end did not move
        assertThat(told).singleElement().asString().startsWith(tmp + " | ").contains("cannot append to " + dir.resolve(SEGMENT));
        assertThat(env.health().isOnline()).isFalse();
        assertThat(log.logEndOffset()).isEqualTo(2);

        // When: writes would succeed again (space freed), the directory still refuses them
        layer.failWritesTo(null);
        layer.clear();
        assertThatThrownBy(() -> log.appendAsLeader(values(time.milliseconds(), "d"), 0, AppendOrigin.CLIENT))
            .isInstanceOf(KafkaStorageException.class).hasMessageContaining("offline");
        assertThatThrownBy(log::roll).isInstanceOf(KafkaStorageException.class);
        assertThatThrownBy(() -> log.truncateTo(1)).isInstanceOf(KafkaStorageException.class);
        assertThat(layer.events()).noneMatch(event -> event.startsWith("write "));
        assertThat(told).hasSize(1);
        log.closeWithoutFlush();

        // Then: opened again (a restart), the log ends after its last whole batch and takes appends
        PartitionLog reopened = PartitionLog.open(dir, LogConfig.defaults(), LogEnvironment.of(time), false);
        assertThat(reopened.logEndOffset()).isEqualTo(2);
        reopened.appendAsLeader(values(time.milliseconds(), "e"), 0, AppendOrigin.CLIENT);
        assertThat(PartitionLogTest.readAll(reopened, 0)).containsExactly("0:a", "1:b", "2:e");
        reopened.close();
    }

    @Test
    void aSegmentWhoseWriteFailedTakesTheSameOffsetsOnceWritesSucceed() throws Exception {
        // Given: a segment indexing every batch, whose second write fails
        RecordingFileLayer layer = new RecordingFileLayer();
        LogSegment segment = LogSegment.open(tmp, 0L, new LogSegment.Options(layer, OpenResources.unbounded(),
            OpenResources.unbounded(), 1024 * 1024, 1, 0L, 0L), true);
        segment.append(atOffset(values(0L, "a"), 0));
        layer.failWritesTo(SEGMENT);
        assertThatThrownBy(() -> segment.append(atOffset(values(0L, "b"), 1)))
            .isInstanceOf(UncheckedIOException.class);

        // When: the write is retried once it can succeed
        layer.failWritesTo(null);
        segment.append(atOffset(values(0L, "b"), 1));

        // Then: no index entry was left for the failed write, and both batches read back
        int size = segment.log().sizeInBytes();
        try (FetchDataInfo read = segment.read(0L, size, size, true)) {
            assertThat(offsetsAndValues(read.records().readBytes())).containsExactly("0:a", "1:b");
        }
        assertThat(segment.offsetIndex().lookup(1L).offset()).isEqualTo(1L);
        segment.close();
    }

    private static ByteBuffer atOffset(ByteBuffer batch, long baseOffset) {
        // the base offset is outside the batch's CRC
        batch.putLong(batch.position(), baseOffset);
        return batch;
    }
}
