package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower replica serving a consumer's fetch (KIP-392, Kafka's {@code fetchRecords} with
 * {@code fetchOnlyLeader} false): only when the request allows it, up to the follower's own high watermark, with its
 * own log start and end offsets, and Kafka's errors when the offset is out of its range or the partition left it.
 */
class PartitionFollowerReadTest {

    private static final int LEADER = 1;
    private static final int FOLLOWER = 2;
    private static final int EPOCH = 4;
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final PartitionRegistration REGISTRATION = new PartitionRegistration(List.of(LEADER, FOLLOWER),
        List.of(LEADER, FOLLOWER), LEADER, EPOCH, 0);

    @TempDir
    Path dir;

    private PartitionLog leaderLog;
    private PartitionLog followerLog;
    private Partition follower;

    /** The follower holds offsets 0-4 of the leader's log and learnt high watermark 3. */
    @BeforeEach
    void replicate() {
        leaderLog = PartitionLog.open(dir.resolve("leader/orders-0"), LogConfig.defaults(),
            LogEnvironment.of(Time.SYSTEM), true);
        followerLog = PartitionLog.open(dir.resolve("follower/orders-0"), LogConfig.defaults(),
            LogEnvironment.of(Time.SYSTEM), true);
        Partition leader = new Partition(TP, new Uuid(42L, 7L), LEADER, leaderLog, REGISTRATION, 1, p -> { },
            Time.SYSTEM, IsrHarness.quiet());
        leader.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, 1);
        leader.appendRecordsToLeader(batch(2), AppendOrigin.CLIENT, 1);
        follower = new Partition(TP, new Uuid(42L, 7L), FOLLOWER, followerLog, REGISTRATION, 1, p -> { },
            Time.SYSTEM, IsrHarness.quiet());
        try (LogReadResult fetched = leader.fetchRecords(new LogReadRequest(FOLLOWER, 0, EPOCH, -1, 0L),
                FetchIsolation.LOG_END, 1 << 20, true, false)) {
            follower.appendRecordsToFollower(fetched.info().records().readBytes(), EPOCH);
        }
        follower.updateFollowerHighWatermark(3, EPOCH);
    }

    @AfterEach
    void closeLogs() {
        leaderLog.close();
        followerLog.close();
    }

    private static ByteBuffer batch(int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L, new byte[] {(byte) i}, new byte[] {(byte) i});
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

    private LogReadResult consumerRead(long offset, int epoch, boolean fetchOnlyFromLeader) {
        return follower.fetchRecords(new LogReadRequest(-1, offset, epoch, -1, -1L, -1L, fetchOnlyFromLeader),
            FetchIsolation.HIGH_WATERMARK, 1 << 20, true, true);
    }

    @Test
    void aConsumerReadsFromTheFollowerUpToTheFollowersHighWatermark() {
        // When
        try (LogReadResult read = consumerRead(0, EPOCH, false)) {
            // Then: the first batch (offsets 0-2) is below the follower's high watermark 3; the second is not
            assertThat(read.highWatermark()).isEqualTo(3);
            assertThat(read.logStartOffset()).isZero();
            assertThat(read.logEndOffset()).isEqualTo(5);
            assertThat(read.divergingEpoch()).isNull();
            assertThat(read.info().records().length()).isPositive();
            assertThat(read.info().records().readBytes().getLong(0)).as("base offset of the batch").isZero();
        }
        try (LogReadResult read = consumerRead(3, Partition.NO_EPOCH, false)) {
            assertThat(read.info().records().length()).as("at the high watermark").isZero();
        }
    }

    @Test
    void anOffsetBetweenTheFollowersHighWatermarkAndItsLogEndReadsNothing() {
        try (LogReadResult read = consumerRead(4, EPOCH, false)) {
            assertThat(read.info().records().length()).isZero();
            assertThat(read.highWatermark()).isEqualTo(3);
        }
    }

    @Test
    void anOffsetBeyondTheFollowersLogEndIsOutOfRange() {
        assertThatThrownBy(() -> consumerRead(6, EPOCH, false)).isInstanceOf(OffsetOutOfRangeException.class);
        try (LogReadResult read = consumerRead(5, EPOCH, false)) {
            assertThat(read.info().records().length()).as("the log end itself").isZero();
        }
    }

    @Test
    void aLeaderOnlyFetchAStaleEpochOrARemovedPartitionIsRefused() {
        assertThatThrownBy(() -> consumerRead(0, EPOCH, true)).isInstanceOf(NotLeaderOrFollowerException.class);
        assertThatThrownBy(() -> consumerRead(0, EPOCH - 1, false)).isInstanceOf(FencedLeaderEpochException.class);

        follower.close();

        assertThatThrownBy(() -> consumerRead(0, EPOCH, false)).isInstanceOf(NotLeaderOrFollowerException.class);
        assertThatThrownBy(() -> follower.read(0, EPOCH, 1024, FetchIsolation.HIGH_WATERMARK, true, false))
            .isInstanceOf(NotLeaderOrFollowerException.class);
    }

    @Test
    void aFollowersFetchIsAlwaysLeaderOnly() {
        assertThatThrownBy(() -> new LogReadRequest(FOLLOWER, 0, EPOCH, -1, 0L, -1L, false))
            .isInstanceOf(IllegalArgumentException.class);
    }
}
