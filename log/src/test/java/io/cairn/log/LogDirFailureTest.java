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
    void aFailedLeaderEpochCheckpointTakesTheDirectoryOffline() {
        // Given: a log in epoch 0 whose leader-epoch checkpoint can no longer be written
        RecordingFileLayer layer = new RecordingFileLayer();
        List<String> told = new CopyOnWriteArrayList<>();
        PartitionLog log = openObserved(layer, told);
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        layer.failWritesTo("leader-epoch-checkpoint.tmp");

        // When: the first batch of epoch 1 (a new leader) is appended
        assertThatThrownBy(() -> log.appendAsLeader(values(time.milliseconds(), "b"), 1, AppendOrigin.CLIENT))
            .isInstanceOf(KafkaStorageException.class)
            .hasMessageContaining("cannot record the leader epochs and transactions of offsets 1 to 1");

        // Then: the directory is offline and the failure told once
        assertThat(told).singleElement().asString().contains("leader-epoch-checkpoint");
        assertThatThrownBy(() -> log.appendAsLeader(values(time.milliseconds(), "c"), 1, AppendOrigin.CLIENT))
            .isInstanceOf(KafkaStorageException.class).hasMessageContaining("offline");
        log.closeWithoutFlush();
    }

    @Test
    void aFailedProducerSnapshotAtARollTakesTheDirectoryOffline() {
        // Given: a log whose producer snapshot for offset 1 cannot be written
        RecordingFileLayer layer = new RecordingFileLayer();
        List<String> told = new CopyOnWriteArrayList<>();
        PartitionLog log = openObserved(layer, told);
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        layer.failWritesTo("00000000000000000001.snapshot.tmp");

        // When / Then
        assertThatThrownBy(log::roll).isInstanceOf(KafkaStorageException.class).hasMessageContaining("cannot roll");
        assertThat(told).singleElement().asString().contains("00000000000000000001.snapshot");
        log.closeWithoutFlush();
    }

    @Test
    void aFailedOffsetsCheckpointTakesTheDirectoryOffline() {
        // Given: a log whose offsets checkpoint (recovery point, log start offset) cannot be written
        RecordingFileLayer layer = new RecordingFileLayer();
        List<String> told = new CopyOnWriteArrayList<>();
        PartitionLog log = openObserved(layer, told);
        log.appendAsLeader(values(time.milliseconds(), "a", "b"), 0, AppendOrigin.CLIENT);
        layer.failWritesTo("log-offsets-checkpoint.tmp");

        // When: DeleteRecords moves the log start offset, which is persisted at once
        assertThatThrownBy(() -> log.deleteRecordsBefore(1))
            .isInstanceOf(KafkaStorageException.class)
            .hasMessageContaining("cannot write the offsets checkpoint");

        // Then
        assertThat(told).singleElement().asString().contains("log-offsets-checkpoint");
        assertThatThrownBy(() -> log.truncateTo(1)).isInstanceOf(KafkaStorageException.class)
            .hasMessageContaining("offline");
        log.closeWithoutFlush();
    }

    @Test
    void aFailedLeaderEpochCheckpointAtATruncationTakesTheDirectoryOffline() {
        // Given: a follower's log with epochs 0 and 1, whose leader-epoch checkpoint cannot be written
        RecordingFileLayer layer = new RecordingFileLayer();
        List<String> told = new CopyOnWriteArrayList<>();
        PartitionLog log = openObserved(layer, told);
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "b"), 1, AppendOrigin.CLIENT);
        layer.failWritesTo("leader-epoch-checkpoint.tmp");

        // When: it truncates away epoch 1 (it diverged from its leader)
        assertThatThrownBy(() -> log.truncateTo(1))
            .isInstanceOf(KafkaStorageException.class)
            .hasMessageContaining("cannot truncate to offset 1");

        // Then
        assertThat(told).singleElement().asString().contains("leader-epoch-checkpoint");
        log.closeWithoutFlush();
    }

    @Test
    void aLogThatCannotBeCreatedTakesTheDirectoryOfflineAndNoneIsCreatedAfter() {
        // Given: a directory where a new partition's first segment cannot be written
        RecordingFileLayer layer = new RecordingFileLayer();
        List<String> told = new CopyOnWriteArrayList<>();
        LogEnvironment env = new LogEnvironment(time, layer, OpenResources.unbounded(), OpenResources.unbounded(),
            null, LogFlushListener.NONE, new LogDirHealth((dir, message, cause) -> told.add(message)));
        layer.failWritesTo("log-offsets-checkpoint.tmp");

        // When / Then
        assertThatThrownBy(() -> PartitionLog.open(tmp.resolve("t-0"), LogConfig.defaults(), env, true))
            .isInstanceOf(KafkaStorageException.class).hasMessageContaining("cannot open log " + tmp.resolve("t-0"));
        assertThat(told).singleElement().asString().contains("cannot open log");
        layer.failWritesTo(null);
        assertThatThrownBy(() -> PartitionLog.open(tmp.resolve("t-1"), LogConfig.defaults(), env, true))
            .isInstanceOf(KafkaStorageException.class).hasMessageContaining("offline");
        assertThat(tmp.resolve("t-1")).doesNotExist();
    }

    private PartitionLog openObserved(RecordingFileLayer layer, List<String> told) {
        LogEnvironment env = new LogEnvironment(time, layer, OpenResources.unbounded(), OpenResources.unbounded(),
            null, LogFlushListener.NONE,
            new LogDirHealth((dir, message, cause) -> told.add(dir + " | " + message + " | " + cause.getMessage())));
        return PartitionLog.open(tmp.resolve("t-0"), LogConfig.defaults(), env, true);
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
