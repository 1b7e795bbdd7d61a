package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotEnoughReplicasException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader's ISR transitions (Kafka's {@code Partition} ISR rules), driven by simulated follower fetches, a manual
 * clock and a controller that answers when the test says. Replicas [1, 2, 3], this broker (1) leads in leader epoch 5
 * and partition epoch 7.
 */
class PartitionIsrTest {

    private static final int ME = 1;
    private static final long LAG_MS = 30_000L;
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid TOPIC_ID = new Uuid(42L, 7L);

    @TempDir
    Path dir;

    private final IsrHarness world = new IsrHarness(ME, LAG_MS, 1, 2, 3);
    private final List<String> events = new ArrayList<>();
    private PartitionLog log;

    private Partition leader(List<Integer> isr, int minIsr) {
        log = PartitionLog.open(dir.resolve("orders-0"), LogConfig.defaults(), LogEnvironment.of(Time.SYSTEM), true);
        return new Partition(TP, TOPIC_ID, ME, log, registration(isr, 5, 7), minIsr, new PartitionListener() {
            @Override
            public void onHighWatermarkAdvanced(Partition partition) {
                events.add("hw " + partition.highWatermark());
            }

            @Override
            public void onIsrChanged(Partition partition) {
                events.add("isr " + partition.inSyncReplicaIds());
            }
        }, world.time, world.context);
    }

    private static PartitionRegistration registration(List<Integer> isr, int leaderEpoch, int partitionEpoch) {
        return new PartitionRegistration(List.of(1, 2, 3), isr, ME, leaderEpoch, partitionEpoch);
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
            builder.append(1L, ("k" + i).getBytes(StandardCharsets.UTF_8), ("v" + i).getBytes(StandardCharsets.UTF_8));
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

    private void fetch(Partition p, int follower, long offset) {
        p.updateFollowerFetchState(follower, offset, 0L, world.time.milliseconds(), p.logEndOffset(),
            world.epochOf(follower));
    }

    private static List<Integer> sentIsr(Map.Entry<AlterPartitionRequestData, ?> request) {
        List<Integer> isr = new ArrayList<>();
        request.getKey().topics().get(0).partitions().get(0).newIsrWithEpochs().forEach(b -> isr.add(b.brokerId()));
        return isr;
    }

    @Test
    void aFollowerNotCaughtUpForTheLagTimeIsShrunkAwayOnceTheControllerCommits() {
        // Given every follower caught up at offset 5, then follower 3 stops fetching while 2 keeps up
        Partition p = leader(List.of(1, 2, 3), 1);
        p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, -1);
        fetch(p, 2, 5);
        fetch(p, 3, 5);
        p.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, -1);
        world.time.sleep(LAG_MS);
        fetch(p, 2, 8);
        p.maybeShrinkIsr();
        assertThat(world.nextSent()).as("not before the lag time has passed").isNull();
        world.time.sleep(1);

        // When
        p.maybeShrinkIsr();

        // Then the shrink is proposed, with broker epochs, and the leaving follower still holds the HW back
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> request =
            world.nextSent();
        AlterPartitionRequestData.PartitionData sent = request.getKey().topics().get(0).partitions().get(0);
        assertThat(request.getKey().brokerId()).isEqualTo(ME);
        assertThat(request.getKey().brokerEpoch()).isEqualTo(world.epochOf(ME));
        assertThat(sentIsr(request)).containsExactly(1, 2);
        assertThat(sent.newIsrWithEpochs().get(1).brokerEpoch()).isEqualTo(world.epochOf(2));
        assertThat(sent.leaderEpoch()).isEqualTo(5);
        assertThat(sent.partitionEpoch()).isEqualTo(7);
        assertThat(p.highWatermark()).isEqualTo(5);
        assertThat(p.inSyncReplicaIds()).containsExactly(1, 2, 3);
        world.accept(request, ME);
        assertThat(p.inSyncReplicaIds()).containsExactly(1, 2);
        assertThat(p.registration().partitionEpoch()).isEqualTo(8);
        assertThat(p.highWatermark()).isEqualTo(8);
        assertThat(events).contains("hw 8", "isr [1, 2]");
    }

    @Test
    void onlyAFollowerFetchThatRaisesTheHighWatermarkWakesItsWaiters() {
        // Given every follower caught up at offset 5
        Partition p = leader(List.of(1, 2, 3), 1);
        p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, -1);
        fetch(p, 2, 5);
        fetch(p, 3, 5);
        assertThat(p.highWatermark()).isEqualTo(5);
        events.clear();

        // When followers fetch again at the same offsets (the steady state between appends), then one moves on
        // while the other still holds the high watermark back, then the other catches up
        fetch(p, 2, 5);
        fetch(p, 3, 5);
        p.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, -1);
        fetch(p, 2, 8);
        fetch(p, 2, 8);
        List<String> beforeCatchUp = List.copyOf(events);
        fetch(p, 3, 8);

        // Then the waiters heard of the high watermark once, when it moved
        assertThat(beforeCatchUp).isEmpty();
        assertThat(p.highWatermark()).isEqualTo(8);
        assertThat(events).containsExactly("hw 8");
    }

    @Test
    void aFollowerThatNeverFetchedIsOutOfSyncAfterTheLagTimeFromTheElection() {
        // Given
        Partition p = leader(List.of(1, 2), 1);

        // When
        world.time.sleep(LAG_MS + 1);
        p.maybeShrinkIsr();

        // Then
        assertThat(sentIsr(world.nextSent())).containsExactly(1);
    }

    @Test
    void aCaughtUpEligibleFollowerJoinsAndCountsForTheHighWatermarkBeforeTheCommit() throws Exception {
        // Given a leader alone in the ISR with 4 records
        Partition p = leader(List.of(1), 1);
        p.appendRecordsToLeader(batch(4), AppendOrigin.CLIENT, -1);
        assertThat(p.highWatermark()).isEqualTo(4);

        // When follower 2 fetches from the high watermark, as a follower fetch of Fetch v15+ (with its epoch)
        try (LogReadResult ignored = p.fetchRecords(new LogReadRequest(2, 4, 5, 5, 0L, world.epochOf(2)),
                FetchIsolation.LOG_END, 1 << 20, true, true)) {
            assertThat(ignored.logEndOffset()).isEqualTo(4);
        }

        // Then the expansion is proposed and the joining replica already holds the HW back
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> request =
            world.nextSent();
        assertThat(sentIsr(request)).containsExactly(1, 2);
        LogAppendInfo appended = p.appendRecordsToLeader(batch(2), AppendOrigin.CLIENT, -1);
        assertThat(p.highWatermark()).isEqualTo(4);
        assertThat(p.checkEnoughReplicasReachOffset(appended.lastOffset() + 1)).isEmpty();
        world.accept(request, ME);
        assertThat(p.inSyncReplicaIds()).containsExactly(1, 2);
        fetch(p, 2, 6);
        assertThat(p.highWatermark()).isEqualTo(6);
        assertThat(p.checkEnoughReplicasReachOffset(6)).contains(Errors.NONE);
    }

    @Test
    void aFencedShuttingDownOrOtherEpochFollowerDoesNotJoin() {
        // Given
        Partition p = leader(List.of(1), 1);
        world.brokers.put(2, world.brokers.get(2).withFenced(true));
        world.brokers.put(3, world.brokers.get(3).withControlledShutdown(true));

        // When
        fetch(p, 2, 0);
        fetch(p, 3, 0);

        // Then
        assertThat(world.nextSent()).isNull();
        world.register(2, 40L);
        p.updateFollowerFetchState(2, 0, 0L, world.time.milliseconds(), 0, 41L);
        assertThat(world.nextSent()).as("a fetch epoch the metadata does not know yet").isNull();
        p.updateFollowerFetchState(2, 0, 0L, world.time.milliseconds(), 0, 40L);
        assertThat(sentIsr(world.nextSent())).containsExactly(1, 2);
    }

    @Test
    void aFetchOfAnEarlierIncarnationIsRefused() {
        // Given
        Partition p = leader(List.of(1), 1);

        // When / Then
        assertThatThrownBy(() -> p.updateFollowerFetchState(2, 0, 0L, world.time.milliseconds(), 0,
            world.epochOf(2) - 1)).isInstanceOf(NotLeaderOrFollowerException.class)
            .hasMessageContaining("stale fetch state");
        assertThatThrownBy(() -> p.fetchRecords(new LogReadRequest(2, 0, 5, -1, 0L, world.epochOf(2) - 1),
            FetchIsolation.LOG_END, 1 << 20, true, true)).isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(p.followerState(2).orElseThrow().brokerEpoch()).isEmpty();
    }

    @Test
    void aFollowerMustReachTheStartOfTheCurrentLeaderEpochToJoin() {
        // Given 5 records of epoch 5 with follower 3 at 3 (so HW 3), then a new leader epoch 6 starting at 5
        Partition p = leader(List.of(1, 3), 1);
        p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, -1);
        fetch(p, 3, 3);
        p.update(registration(List.of(1, 3), 6, 8));
        assertThat(p.highWatermark()).isEqualTo(3);

        // When follower 2 reaches the HW but not the epoch start
        fetch(p, 2, 4);

        // Then
        assertThat(world.nextSent()).isNull();
        fetch(p, 2, 5);
        assertThat(sentIsr(world.nextSent())).containsExactly(1, 3, 2);
    }

    @Test
    void onlyOneIsrChangeIsInFlightAtATime() {
        // Given a shrink of 3 in flight
        Partition p = leader(List.of(1, 3), 1);
        world.time.sleep(LAG_MS + 1);
        p.maybeShrinkIsr();
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> shrink =
            world.nextSent();

        // When follower 2 catches up meanwhile
        fetch(p, 2, 0);
        p.maybeShrinkIsr();

        // Then nothing else is sent until the answer, after which 2 may join
        assertThat(world.nextSent()).isNull();
        world.accept(shrink, ME);
        fetch(p, 2, 0);
        assertThat(sentIsr(world.nextSent())).containsExactly(1, 2);
    }

    @Test
    void newMetadataReplacesAPendingChangeAndTheLateAnswerIsIgnored() {
        // Given an expansion in flight
        Partition p = leader(List.of(1), 1);
        fetch(p, 2, 0);
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> expand =
            world.nextSent();

        // When the metadata brings a newer partition epoch first (the controller moved on)
        p.update(registration(List.of(1, 3), 5, 9));
        world.accept(expand, ME);

        // Then
        assertThat(p.inSyncReplicaIds()).containsExactly(1, 3);
        assertThat(p.registration().partitionEpoch()).isEqualTo(9);
    }

    @Test
    void anAnswerOfAnOlderPartitionEpochOrAnotherLeaderEpochIsIgnored() {
        // Given
        Partition p = leader(List.of(1), 1);
        fetch(p, 2, 0);
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> expand =
            world.nextSent();

        // When
        world.answer(expand, new AlterPartitionResponseData.PartitionData().setLeaderId(ME).setLeaderEpoch(4)
            .setIsr(new ArrayList<>(List.of(1, 2))).setPartitionEpoch(8));

        // Then the state stays pending: no other change is proposed, the ISR is the committed one
        assertThat(p.inSyncReplicaIds()).containsExactly(1);
        fetch(p, 3, 0);
        assertThat(world.nextSent()).isNull();
    }

    @Test
    void theMetadataEchoOfAnAppliedAnswerChangesNothing() {
        // Given a shrink applied from the controller's answer
        Partition p = leader(List.of(1, 2), 1);
        world.time.sleep(LAG_MS + 1);
        p.maybeShrinkIsr();
        world.accept(world.nextSent(), ME);
        events.clear();

        // When the metadata commits the same change
        p.update(registration(List.of(1), 5, 8));

        // Then
        assertThat(p.inSyncReplicaIds()).containsExactly(1);
        assertThat(events).isEmpty();
    }

    @Test
    void theMetadataEchoOfAnEarlierAnswerKeepsTheChangeInFlightThatIsBasedOnIt() {
        // Given follower 2 shrunk away (answer applied, partition epoch 8), then rejoining: an expansion based on 8
        Partition p = leader(List.of(1, 2), 1);
        world.time.sleep(LAG_MS + 1);
        p.maybeShrinkIsr();
        world.accept(world.nextSent(), ME);
        p.appendRecordsToLeader(batch(2), AppendOrigin.CLIENT, 1);
        fetch(p, 2, 2);
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> expand =
            world.nextSent();

        // When the metadata's echo of the shrink (partition epoch 8) arrives
        p.update(registration(List.of(1), 5, 8));

        // Then the joining follower still holds the HW back, and the controller's commit is applied
        p.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, 1);
        assertThat(p.highWatermark()).isEqualTo(2);
        world.accept(expand, ME);
        assertThat(p.inSyncReplicaIds()).containsExactly(1, 2);
        assertThat(p.registration().partitionEpoch()).isEqualTo(9);
    }

    @Test
    void anIneligibleReplicaAnswerRestoresTheCommittedState() {
        // Given
        Partition p = leader(List.of(1), 1);
        fetch(p, 2, 0);
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> expand =
            world.nextSent();

        // When
        world.answer(expand, new AlterPartitionResponseData.PartitionData()
            .setErrorCode(Errors.INELIGIBLE_REPLICA.code()));

        // Then a later fetch may propose again
        assertThat(p.inSyncReplicaIds()).containsExactly(1);
        fetch(p, 2, 0);
        assertThat(sentIsr(world.nextSent())).containsExactly(1, 2);
    }

    @Test
    void anInvalidUpdateVersionWaitsForMetadataAndARetriableErrorIsRetried() {
        // Given
        Partition p = leader(List.of(1), 1);
        fetch(p, 2, 0);

        // When the controller is not the active one any more, then rejects the partition epoch
        world.answer(world.nextSent(), new AlterPartitionResponseData.PartitionData()
            .setErrorCode(Errors.NOT_CONTROLLER.code()));
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> retried =
            world.nextSent();
        world.answer(retried, new AlterPartitionResponseData.PartitionData()
            .setErrorCode(Errors.INVALID_UPDATE_VERSION.code()));

        // Then the retry was the same proposal, and nothing more is sent until new metadata
        assertThat(sentIsr(retried)).containsExactly(1, 2);
        fetch(p, 2, 0);
        assertThat(world.nextSent()).isNull();
        p.update(registration(List.of(1), 5, 8));
        fetch(p, 2, 0);
        assertThat(world.nextSent().getKey().topics().get(0).partitions().get(0).partitionEpoch()).isEqualTo(8);
    }

    @Test
    void acksAllIsRefusedBeforeTheAppendOnceTheShrinkLeavesTooFewReplicas() {
        // Given min.insync.replicas 2 and follower 2 lagging
        Partition p = leader(List.of(1, 2), 2);
        p.appendRecordsToLeader(batch(2), AppendOrigin.CLIENT, -1);
        world.time.sleep(LAG_MS + 1);
        p.maybeShrinkIsr();
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> shrink =
            world.nextSent();
        p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, -1);

        // When
        world.accept(shrink, ME);

        // Then
        assertThatThrownBy(() -> p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, -1))
            .isInstanceOf(NotEnoughReplicasException.class).hasMessageContaining("min.isr requirement of 2");
        assertThat(p.isUnderMinIsr()).isTrue();
        p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, 1);
        assertThat(p.highWatermark()).as("no HW progress under min ISR").isZero();
        assertThat(p.checkEnoughReplicasReachOffset(3)).isEmpty();
    }

    @Test
    void anAppendWhoseOffsetIsReachedAfterTheIsrShrankBelowMinIsrIsNotEnoughReplicasAfterAppend() {
        // Given min.insync.replicas 2, follower 2 has the 5 records (HW 5)
        Partition p = leader(List.of(1, 2), 2);
        p.appendRecordsToLeader(batch(5), AppendOrigin.CLIENT, -1);
        fetch(p, 2, 5);
        assertThat(p.highWatermark()).isEqualTo(5);

        // When the ISR shrinks to the leader before the waiting produce re-checks
        world.time.sleep(LAG_MS + 1);
        p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, 1);
        p.maybeShrinkIsr();
        world.accept(world.nextSent(), ME);

        // Then
        assertThat(p.checkEnoughReplicasReachOffset(5)).contains(Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND);
    }

    @Test
    void minInsyncReplicasAboveTheReplicationFactorIsBoundedByIt() {
        // Given min.insync.replicas 5 on three replicas, all in sync
        Partition p = leader(List.of(1, 2, 3), 5);

        // When
        LogAppendInfo info = p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, -1);
        fetch(p, 2, 1);
        fetch(p, 3, 1);

        // Then
        assertThat(p.isUnderMinIsr()).isFalse();
        assertThat(p.checkEnoughReplicasReachOffset(info.lastOffset() + 1)).contains(Errors.NONE);
    }

    @Test
    void aCaughtUpEligibleFollowerOutsideTheIsrHoldsTheHighWatermarkUntilItJoins() {
        // Given follower 2 caught up with the leader at 3, but its expansion was refused
        Partition p = leader(List.of(1), 1);
        p.appendRecordsToLeader(batch(3), AppendOrigin.CLIENT, -1);
        fetch(p, 2, 3);
        world.answer(world.nextSent(), new AlterPartitionResponseData.PartitionData()
            .setErrorCode(Errors.INELIGIBLE_REPLICA.code()));

        // When the leader appends, within the lag time
        p.appendRecordsToLeader(batch(2), AppendOrigin.CLIENT, 1);

        // Then the HW waits for the follower that is about to join
        assertThat(p.highWatermark()).isEqualTo(3);
        world.time.sleep(LAG_MS + 1);
        p.appendRecordsToLeader(batch(1), AppendOrigin.CLIENT, 1);
        assertThat(p.highWatermark()).isEqualTo(6);
    }
}
