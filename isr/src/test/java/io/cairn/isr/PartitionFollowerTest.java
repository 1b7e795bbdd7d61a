package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader's side of replication in {@link Partition}: follower fetches record positions and last caught-up times
 * (Kafka's {@code Replica}), move the high watermark, are checked against the assignment and their last fetched
 * epoch, all on a clock the test drives.
 */
class PartitionFollowerTest {

    private static final int ME = 1;
    private static final int FOLLOWER = 2;
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @TempDir
    Path dir;

    private final MockTime clock = new MockTime(100);
    private PartitionLog log;

    private Partition leader(List<Integer> isr) {
        return leader(isr, LogConfig.defaults());
    }

    private Partition leader(List<Integer> isr, LogConfig config) {
        log = PartitionLog.open(dir.resolve("orders-0"), config, LogEnvironment.of(Time.SYSTEM), true);
        return new Partition(TP, new Uuid(42L, 7L), ME, log, new PartitionRegistration(List.of(ME, FOLLOWER), isr, ME,
            3, 0), 1, partition -> { }, clock, IsrHarness.quiet());
    }

    @AfterEach
    void closeLog() {
        if (log != null) {
            log.close();
        }
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

    private void followerFetch(Partition p, long offset, long atMs) {
        clock.setCurrentTimeMs(atMs);
        try (LogReadResult ignored = p.fetchRecords(new LogReadRequest(FOLLOWER, offset, 3, -1, 0L),
                FetchIsolation.LOG_END, 1 << 20, true, true)) {
            assertThat(ignored.divergingEpoch()).isNull();
        }
    }

    @Test
    void anInSyncFollowerCountsAsCaughtUpFromTheElectionAndItsFetchesMoveTheHighWatermark() {
        // Given
        Partition p = leader(List.of(ME, FOLLOWER));
        p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, 1);

        // When
        followerFetch(p, 5, 1_000);

        // Then
        ReplicaState state = p.followerState(FOLLOWER).orElseThrow();
        assertThat(state.logEndOffset()).isEqualTo(5);
        assertThat(state.logStartOffset()).isZero();
        assertThat(state.lastFetchTimeMs()).isEqualTo(1_000);
        assertThat(state.lastCaughtUpTimeMs()).isEqualTo(1_000);
        assertThat(p.highWatermark()).isEqualTo(5);
    }

    @Test
    void aFollowerBehindSmallAppendsIsCaughtUpAsOfTheFetchWhoseLeaderEndItReached() {
        // Given: elected at t=100 with the follower in the ISR, the follower fetches behind a growing log.
        Partition p = leader(List.of(ME, FOLLOWER));
        p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, 1);
        followerFetch(p, 0, 1_000);
        assertThat(p.followerState(FOLLOWER).orElseThrow().lastCaughtUpTimeMs()).isEqualTo(100);
        p.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, 1);

        // When: at t=2000 it reaches 5, the leader's end when its fetch of t=1000 arrived (now the end is 8).
        followerFetch(p, 5, 2_000);

        // Then
        assertThat(p.followerState(FOLLOWER).orElseThrow().lastCaughtUpTimeMs()).isEqualTo(1_000);
        followerFetch(p, 6, 3_000);
        assertThat(p.followerState(FOLLOWER).orElseThrow().lastCaughtUpTimeMs()).isEqualTo(1_000);
        followerFetch(p, 8, 4_000);
        assertThat(p.followerState(FOLLOWER).orElseThrow().lastCaughtUpTimeMs()).isEqualTo(4_000);
        assertThat(p.highWatermark()).isEqualTo(8);
    }

    @Test
    void aFollowerOutsideTheIsrNeverCountedAsCaughtUpAndDoesNotHoldTheHighWatermark() {
        // Given
        Partition p = leader(List.of(ME));
        p.appendRecordsToLeader(batch(4), AppendOrigin.CLIENT, 1);

        // When
        followerFetch(p, 1, 1_000);

        // Then
        assertThat(p.followerState(FOLLOWER).orElseThrow().lastCaughtUpTimeMs()).isZero();
        assertThat(p.highWatermark()).isEqualTo(4);
    }

    @Test
    void aReadThatCompletesADelayedFetchDoesNotRecordThePositionAgain() {
        // Given
        Partition p = leader(List.of(ME, FOLLOWER));
        p.appendRecordsToLeader(batch(2), AppendOrigin.CLIENT, 1);

        // When
        try (LogReadResult read = p.fetchRecords(new LogReadRequest(FOLLOWER, 2, 3, -1, 0L), FetchIsolation.LOG_END,
                1 << 20, true, false)) {
            // Then
            assertThat(read.logEndOffset()).isEqualTo(2);
        }
        assertThat(p.followerState(FOLLOWER).orElseThrow().logEndOffset()).isEqualTo(-1);
        assertThat(p.highWatermark()).isZero();
    }

    @Test
    void aBrokerThatIsNoReplicaIsRefusedWithUnknownLeaderEpochWhenItNamedOneElseNotLeader() {
        // Given
        Partition p = leader(List.of(ME, FOLLOWER));

        // When / Then
        assertThatThrownBy(() -> p.fetchRecords(new LogReadRequest(7, 0, 3, -1, 0L), FetchIsolation.LOG_END, 1024,
            true, true)).isInstanceOf(UnknownLeaderEpochException.class);
        assertThatThrownBy(() -> p.fetchRecords(new LogReadRequest(7, 0, Partition.NO_EPOCH, -1, 0L),
            FetchIsolation.LOG_END, 1024, true, true)).isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(p.followerState(7)).isEmpty();
    }

    @Test
    void aDivergedFollowerGetsTheEpochToTruncateToAndItsPositionIsNotRecorded() {
        // Given: the leader has 3 records of epoch 3; the follower claims epoch 3 up to offset 6.
        Partition p = leader(List.of(ME, FOLLOWER));
        p.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, 1);

        // When
        try (LogReadResult read = p.fetchRecords(new LogReadRequest(FOLLOWER, 6, 3, 3, 0L), FetchIsolation.LOG_END,
                1 << 20, true, true)) {
            // Then
            assertThat(read.divergingEpoch()).isEqualTo(new EpochEndOffset(3, 3));
            assertThat(read.info().records().length()).isZero();
        }
        assertThat(p.followerState(FOLLOWER).orElseThrow().logEndOffset()).isEqualTo(-1);
        assertThat(p.hasDiverged(3, 3, 6)).isTrue();
        assertThat(p.hasDiverged(3, 3, 3)).isFalse();
        assertThatThrownBy(() -> p.fetchRecords(new LogReadRequest(FOLLOWER, 3, 3, 9, 0L), FetchIsolation.LOG_END,
            1024, true, true)).isInstanceOf(OffsetOutOfRangeException.class);
    }

    @Test
    void retentionNeverDeletesASegmentAtOrAboveTheHighWatermark() {
        // Given: small segments whose records are long expired, and an in-sync follower that has copied nothing
        Partition p = leader(List.of(ME, FOLLOWER), LogConfig.defaults().toBuilder().segmentBytes(300).retentionMs(1)
            .build());
        for (int i = 0; i < 8; i++) {
            p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, 1);
        }
        assertThat(log.numberOfSegments()).isGreaterThan(2);
        assertThat(p.highWatermark()).isZero();

        // When
        int deletedBeforeTheFollowerFetched = log.deleteOldSegments();

        // Then: nothing goes while the follower lacks it (Kafka's deletableSegments)
        assertThat(deletedBeforeTheFollowerFetched).isZero();
        assertThat(log.logStartOffset()).isZero();

        // When: the follower has copied the first 20 records
        followerFetch(p, 20, 1_000);
        int deleted = log.deleteOldSegments();

        // Then: only segments wholly below the high watermark went
        assertThat(p.highWatermark()).isEqualTo(20);
        assertThat(deleted).isPositive();
        assertThat(log.logStartOffset()).isPositive().isLessThanOrEqualTo(20);
        assertThat(log.logEndOffset()).isEqualTo(40);
    }
}
