package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogDirNames;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica move's future log ({@link FutureLogSync}, {@link Partition#copyToFutureLog},
 * {@link Partition#maybeReplaceCurrentWithFutureLog}): it copies the current log's batches with their offsets,
 * epochs and producer state, gives up what the current log truncated or deleted, and swaps in only once it ends
 * where the current log ends.
 */
class PartitionFutureLogTest {

    private static final int ME = 1;
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @TempDir
    Path dir;

    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeLogs() {
        opened.forEach(PartitionLog::close);
    }

    private PartitionLog open(String parent, String name) {
        PartitionLog log = PartitionLog.open(dir.resolve(parent).resolve(name), LogConfig.defaults(),
            LogEnvironment.of(Time.SYSTEM), true);
        opened.add(log);
        return log;
    }

    private PartitionLog future() {
        return open("b", LogDirNames.futureDirName("orders", 0));
    }

    private Partition leader(PartitionLog log) {
        return new Partition(TP, new Uuid(42L, 7L), ME, log, new PartitionRegistration(List.of(ME), List.of(ME), ME,
            3, 0), 1, partition -> { }, Time.SYSTEM, IsrHarness.quiet());
    }

    private static ByteBuffer batch(long producerId, int sequence, int records) {
        return build(new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE)
            .producer(producerId, (short) 0, sequence), records);
    }

    private static ByteBuffer followerBatch(long baseOffset, int epoch, int records) {
        return build(new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE)
            .baseOffset(baseOffset).partitionLeaderEpoch(epoch), records);
    }

    private static ByteBuffer build(RecordBatchBuilder builder, int records) {
        for (int i = 0; i < records; i++) {
            builder.append(1_000L, new byte[] {(byte) i}, new byte[] {(byte) i, 1, 2, 3});
        }
        ByteBuf buf = builder.build();
        try {
            ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), copy);
            return copy.flip();
        } finally {
            buf.release();
        }
    }

    private static ByteBuffer bytes(PartitionLog log) {
        try (FetchDataInfo info = log.read(log.logStartOffset(), Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            return info.records().readBytes();
        }
    }

    @Test
    void copyStepsReplicateBatchesEpochsAndProducersAndTheSwapCarriesTheHighWatermark() {
        // Given
        PartitionLog current = open("a", "orders-0");
        Partition p = leader(current);
        for (int i = 0; i < 4; i++) {
            p.appendRecordsToLeader(batch(7L, i * 3, 3), AppendOrigin.CLIENT, 1);
        }
        PartitionLog future = future();
        p.setFutureLog(future);
        assertThat(p.copyToFutureLog(1)).isPositive();
        assertThat(future.logEndOffset()).isEqualTo(3);
        p.appendRecordsToLeader(batch(7L, 12, 3), AppendOrigin.CLIENT, 1);

        // When
        boolean swapped = p.maybeReplaceCurrentWithFutureLog(10, 1, (old, next) -> next);

        // Then
        assertThat(swapped).isTrue();
        assertThat(p.log()).isSameAs(future);
        assertThat(p.futureLog()).isEmpty();
        assertThat(future.logEndOffset()).isEqualTo(15);
        assertThat(future.epochEntries()).isEqualTo(current.epochEntries());
        assertThat(future.lastRecordsOfActiveProducers()).isEqualTo(current.lastRecordsOfActiveProducers());
        assertThat(bytes(future)).isEqualTo(bytes(current));
        assertThat(future.highWatermark()).isEqualTo(15);
        p.appendRecordsToLeader(batch(7L, 15, 1), AppendOrigin.CLIENT, 1);
        assertThat(future.logEndOffset()).isEqualTo(16);
        assertThat(current.logEndOffset()).isEqualTo(15);
    }

    @Test
    void theSwapWaitsWhenTheFutureCannotCatchUpWithinItsSteps() {
        // Given
        PartitionLog current = open("a", "orders-0");
        Partition p = leader(current);
        for (int i = 0; i < 5; i++) {
            p.appendRecordsToLeader(batch(7L, i, 1), AppendOrigin.CLIENT, 1);
        }
        PartitionLog future = future();
        p.setFutureLog(future);

        // When
        boolean swapped = p.maybeReplaceCurrentWithFutureLog(2, 1, (old, next) -> next);

        // Then
        assertThat(swapped).isFalse();
        assertThat(p.log()).isSameAs(current);
        assertThat(p.futureLog()).contains(future);
        assertThat(p.futureLogLag()).isEqualTo(3);
    }

    @Test
    void theFutureGivesUpBatchesTheCurrentLogTruncatedAndTakesTheNewOnes() {
        // Given
        PartitionLog current = open("a", "orders-0");
        current.appendAsFollower(followerBatch(0, 1, 2));
        current.appendAsFollower(followerBatch(2, 1, 2));
        current.appendAsFollower(followerBatch(4, 1, 2));
        PartitionLog future = future();
        while (FutureLogSync.copyOnce(current, future, Integer.MAX_VALUE) > 0) {
            assertThat(future.logEndOffset()).isPositive();
        }
        current.truncateTo(2);
        current.appendAsFollower(followerBatch(2, 2, 3));

        // When
        FutureLogSync.copyOnce(current, future, Integer.MAX_VALUE);

        // Then
        assertThat(future.logEndOffset()).isEqualTo(5);
        assertThat(FutureLogSync.caughtUp(current, future)).isTrue();
        assertThat(future.epochEntries()).isEqualTo(current.epochEntries());
        assertThat(bytes(future)).isEqualTo(bytes(current));
    }

    @Test
    void theFutureRestartsAtTheCurrentLogStartWhenItEndsBelowIt() {
        // Given
        PartitionLog current = open("a", "orders-0");
        current.appendAsFollower(followerBatch(0, 1, 2));
        current.appendAsFollower(followerBatch(2, 1, 2));
        current.appendAsFollower(followerBatch(4, 1, 2));
        PartitionLog future = future();
        current.deleteRecordsBefore(4);

        // When
        FutureLogSync.copyOnce(current, future, Integer.MAX_VALUE);

        // Then
        assertThat(future.logStartOffset()).isEqualTo(4);
        assertThat(future.logEndOffset()).isEqualTo(6);
        assertThat(bytes(future)).isEqualTo(bytes(current));
    }

    @Test
    void theSwapTakesTheCurrentLogStartOffset() {
        // Given
        PartitionLog current = open("a", "orders-0");
        Partition p = leader(current);
        for (int i = 0; i < 3; i++) {
            p.appendRecordsToLeader(batch(7L, i * 2, 2), AppendOrigin.CLIENT, 1);
        }
        PartitionLog future = future();
        p.setFutureLog(future);
        p.copyToFutureLog(Integer.MAX_VALUE);
        current.deleteRecordsBefore(3);

        // When
        boolean swapped = p.maybeReplaceCurrentWithFutureLog(1, Integer.MAX_VALUE, (old, next) -> next);

        // Then
        assertThat(swapped).isTrue();
        assertThat(p.log().logStartOffset()).isEqualTo(3);
        assertThat(p.logEndOffset()).isEqualTo(6);
    }
}
