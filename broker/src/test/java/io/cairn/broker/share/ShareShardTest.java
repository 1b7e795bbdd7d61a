package io.cairn.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotCoordinatorException;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateSummaryResponseData;
import io.cairn.wire.message.WriteShareGroupStateRequestData;
import io.cairn.wire.message.WriteShareGroupStateResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The share shard's rules, Kafka 4.1's {@code ShareCoordinatorShard}: epochs, snapshots, errors and replay. */
class ShareShardTest {

    private static final String GROUP = "g";
    private static final Uuid TOPIC = new Uuid(0x1234L, 0x5678L);
    private static final Uuid UNKNOWN = new Uuid(9L, 9L);
    private static final byte AVAILABLE = 0;
    private static final byte ACKNOWLEDGED = 2;
    private static final byte ARCHIVED = 4;

    private final ShareTestContext ctx = new ShareTestContext();
    private final ShareShard shard = new ShareShard(ctx, ShareShardTest::image, 2);

    private static MetadataImage image() {
        TopicImage topic = new TopicImage("t", TOPIC, Map.of(0, partition(), 1, partition()));
        return new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(TOPIC, topic), Map.of("t", TOPIC), Map.of(), 0L,
            0L, Map.of(), Map.of(), Map.of());
    }

    private static PartitionRegistration partition() {
        return new PartitionRegistration(List.of(1), List.of(1), 1, 0, 0);
    }

    private static <T> T done(CompletableFuture<T> future) {
        assertThat(future).isDone();
        return future.join();
    }

    private InitializeShareGroupStateResponseData.PartitionResult initialize(int partition, int stateEpoch,
                                                                            long startOffset) {
        return done(shard.initialize(GROUP, TOPIC, new InitializeShareGroupStateRequestData.PartitionData()
            .setPartition(partition).setStateEpoch(stateEpoch).setStartOffset(startOffset)));
    }

    private WriteShareGroupStateResponseData.PartitionResult write(Uuid topic, int partition, int stateEpoch,
                                                                  int leaderEpoch, long startOffset,
                                                                  StateBatch... batches) {
        return done(writeAsync(topic, partition, stateEpoch, leaderEpoch, startOffset, batches));
    }

    private CompletableFuture<WriteShareGroupStateResponseData.PartitionResult> writeAsync(
            Uuid topic, int partition, int stateEpoch, int leaderEpoch, long startOffset, StateBatch... batches) {
        WriteShareGroupStateRequestData.PartitionData data = new WriteShareGroupStateRequestData.PartitionData()
            .setPartition(partition).setStateEpoch(stateEpoch).setLeaderEpoch(leaderEpoch)
            .setStartOffset(startOffset);
        for (StateBatch b : batches) {
            data.stateBatches().add(new WriteShareGroupStateRequestData.StateBatch().setFirstOffset(b.firstOffset())
                .setLastOffset(b.lastOffset()).setDeliveryState(b.deliveryState())
                .setDeliveryCount(b.deliveryCount()));
        }
        return shard.write(GROUP, topic, data);
    }

    private ReadShareGroupStateResponseData.PartitionResult read(int partition, int leaderEpoch) {
        return done(shard.read(GROUP, TOPIC, partition, leaderEpoch));
    }

    private static StateBatch batch(long first, long last, byte state, int count) {
        return new StateBatch(first, last, state, (short) count);
    }

    private static SharePartitionKey key(int partition) {
        return new SharePartitionKey(GROUP, TOPIC, partition);
    }

    @Test
    void initializeWritesASnapshotAndReadAnswersIt() {
        assertThat(initialize(0, 3, 10L).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(ctx.written).hasSize(1);
        CoordinatorRecord record = ctx.written.get(0);
        assertThat(record.keyVersion()).isEqualTo(ShareRecords.SNAPSHOT);
        assertThat(shard.state(key(0))).hasValue(new ShareState(0, 3, 0, 10L, List.of(), 1_000L, 1_000L));

        ReadShareGroupStateResponseData.PartitionResult read = read(0, 0);
        assertThat(read.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(read.errorMessage()).isNull();
        assertThat(read.stateEpoch()).isEqualTo(3);
        assertThat(read.startOffset()).isEqualTo(10L);
        assertThat(read.stateBatches()).isEmpty();
        assertThat(ctx.written).as("the same leader epoch writes nothing").hasSize(1);

        // Initializing again bumps the snapshot epoch.
        initialize(0, 4, 20L);
        assertThat(shard.state(key(0)).orElseThrow().snapshotEpoch()).isEqualTo(1);
    }

    @Test
    void writeAndReadOfAnUninitializedSharePartitionAreInvalidRequests() {
        WriteShareGroupStateResponseData.PartitionResult written = write(TOPIC, 0, 0, 0, 0L, batch(0, 1, ARCHIVED, 1));
        assertThat(written.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(written.errorMessage()).isEqualTo("Write operation on uninitialized share partition not allowed.");
        ReadShareGroupStateResponseData.PartitionResult read = read(0, 0);
        assertThat(read.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(read.errorMessage()).isEqualTo("Read operation on uninitialized share partition not allowed.");
        assertThat(ctx.written).isEmpty();
    }

    @Test
    void negativePartitionsAndUnknownTopicsAreRejected() {
        assertThat(write(TOPIC, -1, 0, 0, 0L).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(write(TOPIC, -1, 0, 0, 0L).errorMessage())
            .isEqualTo("The partition id cannot be a negative number.");
        InitializeShareGroupStateResponseData.PartitionResult init = done(shard.initialize(GROUP, UNKNOWN,
            new InitializeShareGroupStateRequestData.PartitionData().setPartition(0).setStateEpoch(0)));
        assertThat(init.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(init.errorMessage()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.message());
        assertThat(done(shard.initialize(GROUP, TOPIC, new InitializeShareGroupStateRequestData.PartitionData()
            .setPartition(7))).errorCode()).as("no partition 7").isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(done(shard.readSummary(GROUP, UNKNOWN, 0)).errorCode())
            .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(done(shard.delete(GROUP, UNKNOWN, 0)).errorCode())
            .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(ctx.written).isEmpty();
    }

    @Test
    void staleEpochsAreFenced() {
        initialize(0, 5, 0L);
        assertThat(write(TOPIC, 0, 5, 3, -1L).errorCode()).isEqualTo(Errors.NONE.code());
        WriteShareGroupStateResponseData.PartitionResult staleLeader = write(TOPIC, 0, 5, 2, -1L);
        assertThat(staleLeader.errorCode()).isEqualTo(Errors.FENCED_LEADER_EPOCH.code());
        assertThat(staleLeader.errorMessage()).isEqualTo(Errors.FENCED_LEADER_EPOCH.message());
        assertThat(write(TOPIC, 0, 4, 3, -1L).errorCode()).isEqualTo(Errors.FENCED_STATE_EPOCH.code());
        assertThat(write(TOPIC, 0, -1, -1, -1L).errorCode()).as("-1 skips both checks").isEqualTo(Errors.NONE.code());
        assertThat(read(0, 2).errorCode()).isEqualTo(Errors.FENCED_LEADER_EPOCH.code());
        assertThat(initialize(0, 4, 0L).errorCode()).isEqualTo(Errors.FENCED_STATE_EPOCH.code());
        assertThat(initialize(0, -1, 0L).errorCode()).isEqualTo(Errors.NONE.code());
    }

    @Test
    void updatesCombineAndASnapshotFollowsEveryConfiguredNumberOfUpdates() {
        initialize(0, 0, 0L);
        write(TOPIC, 0, 0, 0, 0L, batch(0, 9, ACKNOWLEDGED, 1));
        write(TOPIC, 0, 0, 0, -1L, batch(5, 14, AVAILABLE, 2));
        assertThat(ctx.written).extracting(CoordinatorRecord::keyVersion)
            .containsExactly(ShareRecords.SNAPSHOT, ShareRecords.UPDATE, ShareRecords.UPDATE);
        assertThat(shard.state(key(0)).orElseThrow().stateBatches())
            .containsExactly(batch(0, 4, ACKNOWLEDGED, 1), batch(5, 14, AVAILABLE, 2));
        assertThat(shard.updateCount(key(0))).isEqualTo(1);

        // As Kafka counts, the first update after a snapshot counts 0: with 2 updates per snapshot, the fourth
        // write after the snapshot writes the next one, of the whole combined state.
        write(TOPIC, 0, 0, 0, -1L);
        assertThat(shard.updateCount(key(0))).isEqualTo(2);
        write(TOPIC, 0, 0, 1, 10L, batch(10, 11, ARCHIVED, 2));
        assertThat(ctx.written).extracting(CoordinatorRecord::keyVersion).containsExactly(ShareRecords.SNAPSHOT,
            ShareRecords.UPDATE, ShareRecords.UPDATE, ShareRecords.UPDATE, ShareRecords.SNAPSHOT);
        ShareState state = shard.state(key(0)).orElseThrow();
        assertThat(state.snapshotEpoch()).isEqualTo(1);
        assertThat(state.leaderEpoch()).isEqualTo(1);
        assertThat(state.startOffset()).isEqualTo(10L);
        assertThat(state.stateBatches()).containsExactly(batch(10, 11, ARCHIVED, 2), batch(12, 14, AVAILABLE, 2));
        assertThat(shard.updateCount(key(0))).isZero();

        ReadShareGroupStateResponseData.PartitionResult read = read(0, 1);
        assertThat(read.startOffset()).isEqualTo(10L);
        assertThat(read.stateBatches()).extracting(ReadShareGroupStateResponseData.StateBatch::firstOffset)
            .containsExactly(10L, 12L);
    }

    @Test
    void aHigherStateEpochWritesASnapshotAtOnce() {
        initialize(0, 0, 0L);
        write(TOPIC, 0, 1, 0, -1L, batch(0, 0, ACKNOWLEDGED, 1));
        assertThat(ctx.written.get(1).keyVersion()).isEqualTo(ShareRecords.SNAPSHOT);
        assertThat(shard.state(key(0)).orElseThrow().stateEpoch()).isEqualTo(1);
    }

    @Test
    void aReadWithANewLeaderEpochRecordsIt() {
        initialize(0, 0, 0L);
        read(0, 4);
        assertThat(ctx.written).hasSize(2);
        assertThat(ctx.written.get(1).keyVersion()).isEqualTo(ShareRecords.UPDATE);
        assertThat(shard.state(key(0)).orElseThrow().leaderEpoch()).isEqualTo(4);
        assertThat(write(TOPIC, 0, 0, 3, -1L).errorCode()).isEqualTo(Errors.FENCED_LEADER_EPOCH.code());
    }

    @Test
    void summaryAndDelete() {
        ReadShareGroupStateSummaryResponseData.PartitionResult unknown = done(shard.readSummary(GROUP, TOPIC, 1));
        assertThat(unknown.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(unknown.startOffset()).isEqualTo(-1L);
        assertThat(unknown.stateEpoch()).isZero();
        initialize(1, 2, 7L);
        read(1, 3);
        ReadShareGroupStateSummaryResponseData.PartitionResult summary = done(shard.readSummary(GROUP, TOPIC, 1));
        assertThat(summary.startOffset()).isEqualTo(7L);
        assertThat(summary.stateEpoch()).isEqualTo(2);
        assertThat(summary.leaderEpoch()).isEqualTo(3);

        DeleteShareGroupStateResponseData.PartitionResult deleted = done(shard.delete(GROUP, TOPIC, 1));
        assertThat(deleted.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(ctx.written.get(ctx.written.size() - 1).value()).as("a tombstone").isNull();
        assertThat(done(shard.readSummary(GROUP, TOPIC, 1)).startOffset()).isEqualTo(-1L);
        int records = ctx.written.size();
        assertThat(done(shard.delete(GROUP, TOPIC, 1)).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(ctx.written).as("nothing to delete writes nothing").hasSize(records);
        assertThat(initialize(1, 0, 0L).errorCode()).as("the state epoch starts afresh").isEqualTo(Errors.NONE.code());
    }

    @Test
    void replayingTheWrittenRecordsRebuildsTheSameState() {
        initialize(0, 1, 0L);
        initialize(1, 1, 100L);
        write(TOPIC, 0, 1, 2, 0L, batch(0, 4, ACKNOWLEDGED, 1), batch(3, 8, ARCHIVED, 3));
        write(TOPIC, 1, 1, 2, -1L, batch(100, 120, AVAILABLE, 1));
        write(TOPIC, 0, 1, 2, 2L, batch(9, 9, ACKNOWLEDGED, 1));
        write(TOPIC, 0, 1, 2, -1L, batch(10, 12, ACKNOWLEDGED, 1));
        done(shard.delete(GROUP, TOPIC, 1));

        ShareShard reloaded = new ShareShard(new ShareTestContext(), ShareShardTest::image, 2);
        for (int i = 0; i < ctx.written.size(); i++) {
            reloaded.replay(i, -1L, (short) -1, ctx.written.get(i));
        }
        assertThat(reloaded.state(key(0))).isEqualTo(shard.state(key(0)));
        assertThat(reloaded.state(key(1))).isEmpty();
        assertThat(reloaded.updateCount(key(0))).isEqualTo(shard.updateCount(key(0)));
    }

    @Test
    void writesOfOneSharePartitionWaitForEachOtherAndAFailedWriteChangesNothing() {
        initialize(0, 0, 0L);
        ctx.holdWrites();
        CompletableFuture<WriteShareGroupStateResponseData.PartitionResult> first =
            writeAsync(TOPIC, 0, 0, 0, -1L, batch(0, 0, ACKNOWLEDGED, 1));
        CompletableFuture<WriteShareGroupStateResponseData.PartitionResult> second =
            writeAsync(TOPIC, 0, 0, 0, -1L, batch(1, 1, ACKNOWLEDGED, 1));
        assertThat(ctx.pending()).as("the second waits for the first").hasSize(1);
        ctx.failNextWrite(new NotCoordinatorException("moved"));
        assertThat(first).isCompletedExceptionally();
        assertThat(shard.state(key(0)).orElseThrow().stateBatches()).isEmpty();
        assertThat(ctx.pending()).hasSize(1);
        ctx.completeNextWrite();
        assertThat(second.join().errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(shard.state(key(0)).orElseThrow().stateBatches()).containsExactly(batch(1, 1, ACKNOWLEDGED, 1));
    }
}
