package io.cairn.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorBatches;
import io.cairn.broker.coordinator.CoordinatorLoader;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.OffsetCommitRequestData;
import io.cairn.wire.message.OffsetDeleteRequestData;
import io.cairn.wire.message.OffsetDeleteResponseData;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transactional offset commits (TxnOffsetCommit, KIP-447/KIP-98) in a shard's {@link OffsetManager}, driven with a
 * hand-completed {@link ClassicGroupTestShardContext}, and their replay from a real log with COMMIT and ABORT
 * markers.
 */
class OffsetManagerTransactionTest {

    private static final long NOW = 1_700_000_000_000L;

    @TempDir
    Path dir;

    private final ClassicGroupTestShardContext ctx = new ClassicGroupTestShardContext(NOW);
    private final GroupCounters counters = new GroupCounters();
    private final OffsetManager offsets = new OffsetManager(ctx, GroupConfig.defaults(), counters);

    private static TxnOffsetCommitRequestData txnCommit(long producerId, int partition, long offset) {
        return new TxnOffsetCommitRequestData().setTransactionalId("tx").setGroupId("g").setProducerId(producerId)
            .setProducerEpoch((short) 2).setGenerationId(-1).setMemberId("").setTopics(List.of(
                new TxnOffsetCommitRequestTopic().setName("t").setPartitions(List.of(
                    new TxnOffsetCommitRequestPartition().setPartitionIndex(partition).setCommittedOffset(offset)
                        .setCommittedLeaderEpoch(1).setCommittedMetadata("m")))));
    }

    private TxnOffsetCommitResponseData commitTransactionally(long producerId, int partition, long offset) {
        CompletableFuture<TxnOffsetCommitResponseData> response = offsets.commitTransactional(
            txnCommit(producerId, partition, offset), Errors.NONE, (topic, p) -> false);
        ctx.completeWrites();
        return response.join();
    }

    private static short errorOf(TxnOffsetCommitResponseData response) {
        return response.topics().get(0).partitions().get(0).errorCode();
    }

    @Test
    void aTransactionalCommitIsWrittenAsTheProducersBatchAndIsPendingUntilItsCommitMarker() {
        // Given
        CompletableFuture<TxnOffsetCommitResponseData> response = offsets.commitTransactional(txnCommit(7L, 0, 42L),
            Errors.NONE, (topic, p) -> false);
        assertThat(ctx.pendingWrites()).singleElement().extracting(ClassicGroupTestShardContext.PendingWrite::producerId)
            .isEqualTo(7L);
        ctx.completeWrites();
        assertThat(errorOf(response.join())).isEqualTo(Errors.NONE.code());
        assertThat(offsets.offset("g", "t", 0)).isNull();
        assertThat(offsets.hasPendingTransactionalOffset("g", "t", 0)).isTrue();

        // When
        offsets.replayEndTransactionMarker(7L, true);

        // Then
        assertThat(offsets.offset("g", "t", 0).offset()).isEqualTo(42L);
        assertThat(offsets.offset("g", "t", 0).metadata()).isEqualTo("m");
        assertThat(offsets.hasPendingTransactionalOffset("g", "t", 0)).isFalse();
        assertThat(offsets.hasOpenTransaction("g")).isFalse();
    }

    @Test
    void anAbortMarkerDropsTheProducersPendingOffsets() {
        // Given
        commitTransactionally(7L, 0, 42L);

        // When
        offsets.replayEndTransactionMarker(7L, false);

        // Then
        assertThat(offsets.offset("g", "t", 0)).isNull();
        assertThat(offsets.hasPendingTransactionalOffset("g", "t", 0)).isFalse();
    }

    @Test
    void aPlainCommitWrittenAfterTheTransactionalOneWinsWhenTheTransactionCommits() {
        // Given: the transactional record first, then a plain commit of the same partition
        commitTransactionally(7L, 0, 42L);
        CompletableFuture<?> plain = offsets.commit(new OffsetCommitRequestData().setGroupId("g")
            .setGenerationIdOrMemberEpoch(-1).setMemberId("").setTopics(List.of(
                new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("t").setPartitions(List.of(
                    new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                        .setCommittedOffset(50L).setCommittedLeaderEpoch(1))))), (short) 9, Errors.NONE,
            (topic, p) -> false);
        ctx.completeWrites();
        plain.join();

        // When
        offsets.replayEndTransactionMarker(7L, true);

        // Then: the later record decides, as after a compaction of the topic
        assertThat(offsets.offset("g", "t", 0).offset()).isEqualTo(50L);
    }

    @Test
    void theOffsetCommitCountCountsTheOffsetsOffsetCommitWritesButNotTransactionalOnes() {
        // When: a transactional commit of one partition, a plain one of two, a plain one refused by the group
        commitTransactionally(7L, 0, 42L);
        for (Errors verdict : new Errors[] {Errors.NONE, Errors.ILLEGAL_GENERATION}) {
            offsets.commit(new OffsetCommitRequestData().setGroupId("g").setGenerationIdOrMemberEpoch(-1)
                .setMemberId("").setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("t")
                    .setPartitions(List.of(
                        new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                            .setCommittedOffset(50L),
                        new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(1)
                            .setCommittedOffset(60L))))), (short) 9, verdict, (topic, p) -> false);
        }
        ctx.completeWrites();

        // Then: Kafka's offset-commit count, the offsets written
        assertThat(counters.offsetCommits()).isEqualTo(2);
    }

    @Test
    void theOffsetDeletionCountCountsTheOffsetsOffsetDeleteRemoves() {
        // Given: offsets of partitions 0 and 1
        offsets.commit(new OffsetCommitRequestData().setGroupId("g").setGenerationIdOrMemberEpoch(-1)
            .setMemberId("").setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic().setName("t")
                .setPartitions(List.of(
                    new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                        .setCommittedOffset(50L),
                    new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(1)
                        .setCommittedOffset(60L))))), (short) 9, Errors.NONE, (topic, p) -> false);
        ctx.completeWrites();

        // When: OffsetDelete of partition 0 and of a partition without an offset
        CompletableFuture<OffsetDeleteResponseData> deleted = offsets.delete(new OffsetDeleteRequestData()
            .setGroupId("g").setTopics(List.of(new OffsetDeleteRequestData.OffsetDeleteRequestTopic().setName("t")
                .setPartitions(List.of(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0),
                    new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(5))))),
            (group, topic) -> Errors.NONE);
        ctx.completeWrites();

        // Then: Kafka's offset-deletion count, the offsets removed
        assertThat(deleted.join().errorCode()).isZero();
        assertThat(counters.offsetDeletions()).isEqualTo(1);
    }

    @Test
    void theGroupsVerdictAndUnknownPartitionsAreAnsweredWithoutAWrite() {
        // When
        TxnOffsetCommitResponseData refused = offsets.commitTransactional(txnCommit(7L, 0, 42L),
            Errors.ILLEGAL_GENERATION, (topic, p) -> false).join();
        TxnOffsetCommitResponseData unknown = offsets.commitTransactional(txnCommit(7L, 9, 42L), Errors.NONE,
            (topic, p) -> p == 9).join();

        // Then
        assertThat(errorOf(refused)).isEqualTo(Errors.ILLEGAL_GENERATION.code());
        assertThat(errorOf(unknown)).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(ctx.allWrites()).isEmpty();
    }

    @Test
    void aLoadReplaysCommittedAbortedAndOpenTransactionsFromTheLog() {
        // Given: producer 7 commits partition 0, producer 8 aborts partition 1, producer 9 is still open on 2
        PartitionLog log = PartitionLog.open(dir.resolve("__consumer_offsets-0"),
            LogConfig.builder().cleanupPolicy("compact").build(), LogEnvironment.of(Time.SYSTEM), true);
        try {
            appendTransactional(log, 7L, 0, 10L);
            appendTransactional(log, 8L, 1, 11L);
            appendTransactional(log, 9L, 2, 12L);
            log.appendAsLeader(CoordinatorBatches.endTransactionMarker(NOW, 7L, (short) 0, 1, true), 0,
                AppendOrigin.COORDINATOR);
            log.appendAsLeader(CoordinatorBatches.endTransactionMarker(NOW, 8L, (short) 0, 1, false), 0,
                AppendOrigin.COORDINATOR);
            GroupShard shard = new GroupShard(ctx, GroupConfig.defaults(), new GroupCounters());

            // When
            CoordinatorLoader.LoadSummary summary = CoordinatorLoader.load(log, log.logEndOffset(),
                GroupRecordSerde.SERDE, shard);
            shard.onLoaded();

            // Then
            assertThat(summary.markers()).isEqualTo(2);
            assertThat(shard.offsets().offset("g", "t", 0).offset()).isEqualTo(10L);
            assertThat(shard.offsets().offset("g", "t", 1)).isNull();
            assertThat(shard.offsets().offset("g", "t", 2)).isNull();
            assertThat(shard.offsets().hasPendingTransactionalOffset("g", "t", 2)).isTrue();
            assertThat(shard.groups().group("g")).isPresent();
        } finally {
            log.close();
        }
    }

    private static void appendTransactional(PartitionLog log, long producerId, int partition, long offset) {
        CoordinatorRecord record = GroupRecords.offset(new OffsetCommitKey().setGroup("g").setTopic("t")
            .setPartition(partition), new OffsetCommitValue().setOffset(offset).setLeaderEpoch(1).setMetadata("")
            .setCommitTimestamp(NOW));
        log.appendAsLeader(CoordinatorBatches.toBatch(CoordinatorBatches.encode(GroupRecordSerde.SERDE,
            List.of(record)), NOW, producerId, (short) 0), 0, AppendOrigin.COORDINATOR);
    }
}
