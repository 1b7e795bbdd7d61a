package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.TimestampAndOffset;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.NotEnoughReplicasException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PartitionTest {

    private static final int ME = 1;
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @TempDir
    Path dir;

    private final List<Partition> advanced = new ArrayList<>();
    private final List<Integer> leadershipEpochs = new ArrayList<>();
    private PartitionLog log;

    private Partition partition(List<Integer> isr, int leader, int leaderEpoch, int minIsr) {
        log = PartitionLog.open(dir.resolve("orders-0"), LogConfig.defaults(), LogEnvironment.of(Time.SYSTEM), true);
        return new Partition(TP, new Uuid(42L, 7L), ME, log, registration(isr, leader, leaderEpoch, 0), minIsr,
            new PartitionListener() {
                @Override
                public void onHighWatermarkAdvanced(Partition partition) {
                    advanced.add(partition);
                }

                @Override
                public void onLeadershipChanged(Partition partition) {
                    leadershipEpochs.add(partition.leaderEpoch());
                }
            }, Time.SYSTEM, IsrHarness.quiet());
    }

    private static PartitionRegistration registration(List<Integer> isr, int leader, int leaderEpoch, int epoch) {
        return new PartitionRegistration(List.of(1, 2, 3), isr, leader, leaderEpoch, epoch);
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
            builder.append(System.currentTimeMillis(), ("k" + i).getBytes(StandardCharsets.UTF_8),
                ("v" + i).getBytes(StandardCharsets.UTF_8));
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

    @Test
    void aSoleInSyncLeaderMovesTheHighWatermarkToTheLogEndOnEveryAppend() {
        // Given
        Partition p = partition(List.of(ME), ME, 3, 1);

        // When
        LogAppendInfo first = p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, -1);
        LogAppendInfo second = p.appendRecordsToLeader(batch(2), AppendOrigin.CLIENT, 1);

        // Then
        assertThat(first.firstOffset()).isZero();
        assertThat(second.firstOffset()).isEqualTo(5);
        assertThat(p.highWatermark()).isEqualTo(7).isEqualTo(p.logEndOffset());
        assertThat(p.checkEnoughReplicasReachOffset(7)).contains(Errors.NONE);
        assertThat(advanced).hasSize(2).containsOnly(p);
        assertThat(log.latestEpoch()).isEqualTo(3);
    }

    @Test
    void acksAllOfAnAppendInAnEarlierLeaderEpochIsNotLeaderOrFollowerEvenWhenThisBrokerLeadsAgain() {
        // Given an acks=all append in leader epoch 0, waiting for follower 2
        Partition p = partition(List.of(ME, 2), ME, 0, 1);
        LogAppendInfo info = p.appendRecordsToLeader(batch(4), AppendOrigin.CLIENT, -1);
        long required = info.lastOffset() + 1;
        assertThat(p.checkEnoughReplicasReachOffset(required, 0)).isEmpty();

        // When this broker leads again in leader epoch 2 (another leader held epoch 1) and the offset is reached
        p.update(registration(List.of(ME, 2), ME, 2, 3));
        p.updateFollowerFetchState(2, 4, -1L, 0L, p.logEndOffset());

        // Then the old epoch's append fails (retriable) while one of the current epoch succeeds
        assertThat(p.highWatermark()).isEqualTo(4);
        assertThat(p.checkEnoughReplicasReachOffset(required, 0)).contains(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(p.checkEnoughReplicasReachOffset(required, 2)).contains(Errors.NONE);
    }

    @Test
    void acksAllWaitsUntilEveryInSyncFollowerHasTheRecords() {
        // Given
        Partition p = partition(List.of(ME, 2), ME, 0, 1);
        LogAppendInfo info = p.appendRecordsToLeader(batch(4), AppendOrigin.CLIENT, -1);

        // When
        long required = info.lastOffset() + 1;

        // Then
        assertThat(p.highWatermark()).isZero();
        assertThat(p.checkEnoughReplicasReachOffset(required)).isEmpty();
        p.updateFollowerFetchState(2, 2, -1L, 0L, p.logEndOffset());
        assertThat(p.highWatermark()).isEqualTo(2);
        assertThat(p.checkEnoughReplicasReachOffset(required)).isEmpty();
        p.updateFollowerFetchState(2, 4, -1L, 0L, p.logEndOffset());
        assertThat(p.checkEnoughReplicasReachOffset(required)).contains(Errors.NONE);
        assertThat(advanced).containsOnly(p);
    }

    @Test
    void consumersReadNothingBeyondTheHighWatermark() throws Exception {
        // Given
        Partition p = partition(List.of(ME, 2), ME, 0, 1);
        p.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, 1);

        // When
        try (LogReadResult consumer = p.read(0, Partition.NO_EPOCH, 1 << 20, FetchIsolation.HIGH_WATERMARK, true);
             LogReadResult replica = p.read(0, 0, 1 << 20, FetchIsolation.LOG_END, true)) {
            // Then
            assertThat(consumer.info().records().length()).isZero();
            assertThat(consumer.highWatermark()).isZero();
            assertThat(consumer.logEndOffset()).isEqualTo(3);
            assertThat(replica.info().records().length()).isPositive();
        }
        assertThat(p.fetchOffsetForTimestamp(TimestampAndOffset.LATEST_TIMESTAMP, FetchIsolation.HIGH_WATERMARK,
            Partition.NO_EPOCH)).get().extracting(TimestampAndOffset::offset).isEqualTo(0L);
    }

    @Test
    void acksAllIsRefusedBeforeTheAppendWhenTheIsrIsSmallerThanMinInsyncReplicas() {
        // Given
        Partition p = partition(List.of(ME), ME, 0, 2);

        // When / Then
        assertThatThrownBy(() -> p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, -1))
            .isInstanceOf(NotEnoughReplicasException.class).hasMessageContaining("min.isr");
        assertThat(p.logEndOffset()).isZero();
        assertThat(p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, 1).firstOffset()).isZero();
    }

    @Test
    void requestEpochsOlderOrNewerThanOursAreFencedOrUnknown() {
        // Given
        Partition p = partition(List.of(ME), ME, 5, 1);

        // When / Then
        assertThatThrownBy(() -> p.checkLeaderEpoch(4, true)).isInstanceOf(FencedLeaderEpochException.class);
        assertThatThrownBy(() -> p.checkLeaderEpoch(6, true)).isInstanceOf(UnknownLeaderEpochException.class);
        p.checkLeaderEpoch(5, true);
        p.checkLeaderEpoch(Partition.NO_EPOCH, true);
    }

    @Test
    void losingLeadershipFailsWaitersAndRefusesAppends() {
        // Given
        Partition p = partition(List.of(ME, 2), ME, 0, 1);
        p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, -1);

        // When
        p.update(registration(List.of(2), 2, 1, 1));

        // Then
        assertThat(p.checkEnoughReplicasReachOffset(1)).contains(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(leadershipEpochs).endsWith(1);
        assertThat(p.isLeader()).isFalse();
        assertThatThrownBy(() -> p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, 1))
            .isInstanceOf(NotLeaderOrFollowerException.class);
    }

    @Test
    void anOlderRegistrationIsIgnored() {
        // Given
        Partition p = partition(List.of(ME), ME, 2, 1);
        p.update(registration(List.of(ME), ME, 3, 5));

        // When
        p.update(registration(List.of(2), 2, 2, 4));

        // Then
        assertThat(p.leaderEpoch()).isEqualTo(3);
        assertThat(p.isLeader()).isTrue();
    }

    @Test
    void listenersAreToldOfEveryNewLeaderEpochOrLeaderButNotOfIsrChanges() {
        // Given a partition this broker leads in epoch 0 (creating it is the first leadership event)
        Partition p = partition(List.of(ME, 2), ME, 0, 1);

        // When the ISR shrinks, then another broker leads, then this one again
        p.update(registration(List.of(ME), ME, 0, 1));
        p.update(registration(List.of(2), 2, 1, 2));
        p.update(registration(List.of(ME, 2), ME, 2, 3));

        // Then (the coordinators unload and load their state on these events)
        assertThat(leadershipEpochs).containsExactly(0, 1, 2);
    }
}
