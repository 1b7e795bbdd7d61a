package io.cairn.broker.group.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.ClassicGroupTestShardContext;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterShareGroupOffsetsRequestData;
import io.cairn.wire.message.AlterShareGroupOffsetsResponseData;
import io.cairn.wire.message.DeleteShareGroupOffsetsRequestData;
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatRequestData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The share group offsets admin operations on one shard, by Kafka 4.1's rules (GroupMetadataManager's
 * completeAlterShareGroupOffsets, sharePartitionsEligibleForOffsetDeletion, completeDeleteShareGroupOffsets and
 * shareGroupBuildPartitionDeleteRequest; ShareGroup.validateEmptyGroup).
 */
class ShareGroupOffsetsManagerTest {

    private static final Uuid T = new Uuid(11L, 22L);
    private static final Uuid U = new Uuid(33L, 44L);
    private static final ConsumerGroupTopics TOPICS = new ConsumerGroupTopics() {
        @Override
        public Uuid topicId(String name) {
            return name.equals("t") ? T : name.equals("u") ? U : null;
        }

        @Override
        public String topicName(Uuid topicId) {
            return topicId.equals(T) ? "t" : topicId.equals(U) ? "u" : null;
        }

        @Override
        public int numPartitions(Uuid topicId) {
            return topicId.equals(T) ? 3 : topicId.equals(U) ? 2 : -1;
        }
    };

    private final ClassicGroupTestShardContext ctx = new ClassicGroupTestShardContext(1_000);
    private final ShareGroupManager manager = new ShareGroupManager(ctx, ShareGroupConfig.defaults(), () -> TOPICS,
        id -> id.equals("classic"));

    private <T> T written(CompletableFuture<T> future) {
        ctx.completeWrites();
        return future.join();
    }

    private void heartbeat(String member, int epoch, List<String> topics) {
        written(manager.heartbeat("client", "/127.0.0.1", new ShareGroupHeartbeatRequestData().setGroupId("g")
            .setMemberId(member).setMemberEpoch(epoch).setSubscribedTopicNames(topics)));
    }

    /** Group g: m1 joined (epoch 1), t's 3 partitions initialized, m1 left (epoch 3, Empty). */
    private void emptyGroupWithTInitialized() {
        heartbeat("m1", 0, List.of("t"));
        written(manager.initialized("g", Map.of(T, Set.of(0, 1, 2))));
        heartbeat("m1", 1, null);
        heartbeat("m1", -1, null);
        assertThat(manager.describe("g").groupState()).isEqualTo("Empty");
    }

    private static AlterShareGroupOffsetsRequestData alter(String topic, int partition, long offset) {
        AlterShareGroupOffsetsRequestData request = new AlterShareGroupOffsetsRequestData().setGroupId("g");
        request.topics().add(new AlterShareGroupOffsetsRequestData.AlterShareGroupOffsetsRequestTopic()
            .setTopicName(topic).setPartitions(new ArrayList<>(List.of(new AlterShareGroupOffsetsRequestData
                .AlterShareGroupOffsetsRequestPartition().setPartitionIndex(partition).setStartOffset(offset)))));
        return request;
    }

    private static DeleteShareGroupOffsetsRequestData deleteOffsets(String... topics) {
        DeleteShareGroupOffsetsRequestData request = new DeleteShareGroupOffsetsRequestData().setGroupId("g");
        for (String topic : topics) {
            request.topics().add(new DeleteShareGroupOffsetsRequestData.DeleteShareGroupOffsetsRequestTopic()
                .setTopicName(topic));
        }
        return request;
    }

    @Test
    void alterIsRefusedForAnUnknownGroupAGroupOfAnotherTypeAndAGroupWithMembers() {
        ShareGroupManager.AlterResult unknown = written(manager.alterOffsets("nope", alter("t", 0, 5)));
        assertThat(unknown.response().errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(unknown.response().errorMessage()).isEqualTo("Group nope not found.");
        assertThat(written(manager.alterOffsets("classic", alter("t", 0, 5))).response().errorMessage())
            .isEqualTo("Group classic is not a share group.");

        heartbeat("m1", 0, List.of("t"));
        ShareGroupManager.AlterResult busy = written(manager.alterOffsets("g", alter("t", 0, 5)));
        assertThat(busy.response().errorCode()).isEqualTo(Errors.NON_EMPTY_GROUP.code());
        assertThat(busy.initialize()).isEmpty();
        assertThat(manager.startDeleteGroup("g").join().error()).isEqualTo(Errors.NON_EMPTY_GROUP);
        assertThat(manager.startDeleteOffsets("g", deleteOffsets("t")).join().error())
            .isEqualTo(Errors.NON_EMPTY_GROUP);
    }

    @Test
    void alterOfAnEmptyGroupInitializesTheExistingPartitionsAtTheGivenOffsets() {
        emptyGroupWithTInitialized();
        int epoch = manager.describe("g").groupEpoch();
        AlterShareGroupOffsetsRequestData request = alter("t", 0, 5);
        request.topics().get(0).partitions().add(new AlterShareGroupOffsetsRequestData
            .AlterShareGroupOffsetsRequestPartition().setPartitionIndex(7).setStartOffset(1));
        request.topics().add(alter("nope", 0, 1).topics().get(0));
        int writes = ctx.allWrites().size();

        // When
        ShareGroupManager.AlterResult result = written(manager.alterOffsets("g", request));

        // Then: t-0 is altered, t-7 and the unknown topic are UNKNOWN_TOPIC_OR_PARTITION
        assertThat(result.response().errorCode()).isZero();
        assertThat(result.response().responses()).hasSize(2);
        AlterShareGroupOffsetsResponseData.AlterShareGroupOffsetsResponseTopic t = result.response().responses().get(0);
        assertThat(t.topicId()).isEqualTo(T);
        assertThat(t.partitions()).extracting(p -> p.partitionIndex() + ":" + Errors.forCode(p.errorCode()))
            .containsExactly("0:NONE", "7:UNKNOWN_TOPIC_OR_PARTITION");
        assertThat(result.response().responses().get(1).topicId()).isEqualTo(Uuid.ZERO);
        assertThat(result.response().responses().get(1).partitions().get(0).errorCode())
            .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        // and the share coordinator is to initialize t-0 at offset 5, state epoch = the group epoch
        InitializeShareGroupStateRequestData init = result.initialize().orElseThrow();
        assertThat(init.topics()).singleElement().satisfies(topic -> {
            assertThat(topic.topicId()).isEqualTo(T);
            assertThat(topic.partitions()).extracting(p -> p.partition() + "@" + p.stateEpoch() + "/"
                + p.startOffset()).containsExactly("0@" + epoch + "/5");
        });
        // and t-0 is initializing (recorded in one ShareGroupStatePartitionMetadata record), still initialized
        assertThat(manager.states("g").initializing().get(T).partitions()).containsExactly(0);
        assertThat(manager.states("g").initialized().get(T).partitions()).containsExactlyInAnyOrder(0, 1, 2);
        assertThat(ctx.allWrites()).hasSize(writes + 1);
        assertThat(ctx.allWrites().get(writes)).extracting(CoordinatorRecord::keyVersion)
            .containsExactly(ShareGroupRecords.STATE_PARTITION_METADATA);

        // When: the share coordinator initialized it
        written(manager.initialized("g", Map.of(T, Set.of(0))));

        // Then
        assertThat(manager.states("g").initializing()).isEmpty();
    }

    @Test
    void alterOfATopicBeingDeletedTakesItOutOfDeleting() {
        emptyGroupWithTInitialized();
        written(manager.startDeleteOffsets("g", deleteOffsets("t")));
        assertThat(manager.states("g").deleting()).containsOnlyKeys(T);

        written(manager.alterOffsets("g", alter("t", 1, 0)));

        assertThat(manager.states("g").deleting()).isEmpty();
        assertThat(manager.states("g").initializing()).containsOnlyKeys(T);
    }

    @Test
    void deleteOffsetsMovesTheInitializedTopicsToDeletingUntilTheirStateIsDeleted() {
        emptyGroupWithTInitialized();

        // When: t (initialized), u (known, no state) and an unknown topic
        ShareGroupManager.DeleteOffsetsStart start = written(manager.startDeleteOffsets("g",
            deleteOffsets("t", "u", "nope")));

        // Then
        assertThat(start.error()).isEqualTo(Errors.NONE);
        assertThat(start.errors()).extracting(e -> e.topicName() + ":" + Errors.forCode(e.errorCode()) + ":"
            + e.errorMessage()).containsExactly(
                "u:UNKNOWN_TOPIC_OR_PARTITION:There is no offset information to delete.",
                "nope:UNKNOWN_TOPIC_OR_PARTITION:" + Errors.UNKNOWN_TOPIC_OR_PARTITION.message());
        DeleteShareGroupStateRequestData delete = start.delete().orElseThrow();
        assertThat(delete.groupId()).isEqualTo("g");
        assertThat(delete.topics()).singleElement().satisfies(t -> {
            assertThat(t.topicId()).isEqualTo(T);
            assertThat(t.partitions()).extracting(DeleteShareGroupStateRequestData.PartitionData::partition)
                .containsExactly(0, 1, 2);
        });
        assertThat(manager.states("g").initialized()).isEmpty();
        assertThat(manager.states("g").deleting()).isEqualTo(Map.of(T, "t"));

        // When: asked again while deleting, all the topic's partitions are asked for again
        ShareGroupManager.DeleteOffsetsStart again = written(manager.startDeleteOffsets("g", deleteOffsets("t")));
        assertThat(again.delete().orElseThrow().topics().get(0).partitions()).hasSize(3);

        // When: the share coordinator deleted t's state
        written(manager.completeDeleteOffsets("g", Set.of(T)));

        // Then: the group has no share-partition state left; a topic without state is refused
        assertThat(manager.states("g").deleting()).isEmpty();
        assertThat(manager.states("g").initializedPartitions()).isEmpty();
        ShareGroupManager.DeleteOffsetsStart none = written(manager.startDeleteOffsets("g", deleteOffsets("t")));
        assertThat(none.delete()).isEmpty();
        assertThat(none.errors()).extracting(e -> e.errorCode()).containsExactly(
            Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
    }

    @Test
    void deleteOffsetsOfAnUnknownGroupIsGroupIdNotFoundAndOfAGroupWithoutStateNothing() {
        ShareGroupManager.DeleteOffsetsStart unknown = written(manager.startDeleteOffsets("nope",
            deleteOffsets("t")));
        assertThat(unknown.error()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(unknown.message()).isEqualTo("Group nope not found.");

        heartbeat("m1", 0, List.of("zz"));
        heartbeat("m1", -1, null);
        int writes = ctx.allWrites().size();
        ShareGroupManager.DeleteOffsetsStart empty = written(manager.startDeleteOffsets("g", deleteOffsets("t")));
        assertThat(empty.error()).isEqualTo(Errors.NONE);
        assertThat(empty.errors()).isEmpty();
        assertThat(empty.delete()).isEmpty();
        assertThat(ctx.allWrites()).hasSize(writes);
    }

    @Test
    void deletingAnEmptyShareGroupFirstDeletesTheStateOfAllItsSharePartitions() {
        assertThat(manager.startDeleteGroup("nope").join().error()).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        emptyGroupWithTInitialized();
        // u is being deleted (a failed earlier DeleteShareGroupOffsets), t-0 initializing again
        written(manager.alterOffsets("g", alter("u", 1, 0)));
        written(manager.initialized("g", Map.of(U, Set.of(1))));
        written(manager.startDeleteOffsets("g", deleteOffsets("u")));
        written(manager.alterOffsets("g", alter("t", 0, 3)));

        // When
        ShareGroupManager.GroupDeleteStart start = written(manager.startDeleteGroup("g"));

        // Then: t's initialized and initializing partitions and all of u's are deleted; all topics are deleting
        assertThat(start.error()).isEqualTo(Errors.NONE);
        assertThat(start.delete().orElseThrow().topics()).extracting(t -> t.topicId() + ":" + t.partitions().stream()
            .map(DeleteShareGroupStateRequestData.PartitionData::partition).toList())
            .containsExactly(T + ":[0, 1, 2]", U + ":[0, 1]");
        assertThat(manager.states("g").deleting()).isEqualTo(Map.of(T, "t", U, "u"));
        assertThat(manager.states("g").initialized()).isEmpty();
        assertThat(manager.states("g").initializing()).isEmpty();
    }

    @Test
    void aFailedWriteLeavesTheStatesAsTheyWere() {
        emptyGroupWithTInitialized();
        SharePartitionStates before = manager.states("g");

        CompletableFuture<ShareGroupManager.DeleteOffsetsStart> start = manager.startDeleteOffsets("g",
            deleteOffsets("t"));
        ctx.failOldestWrite(Errors.NOT_COORDINATOR.exception());

        assertThat(start.join().error()).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(start.join().delete()).isEmpty();
        assertThat(manager.states("g")).isEqualTo(before);
    }

    @Test
    void aDeletedTopicsSharePartitionsMoveToDeletingWhileTheGroupHasMembersAndLeaveOnceTheirStateIsDeleted() {
        // Given a group with a member and t's 3 partitions initialized
        heartbeat("m1", 0, List.of("t"));
        written(manager.initialized("g", Map.of(T, Set.of(0, 1, 2))));
        assertThat(manager.groupsWithStateOf(Set.of(U))).isEmpty();
        assertThat(manager.groupsWithStateOf(Set.of(T, U))).containsExactly("g");
        int writes = ctx.allWrites().size();

        // When topic t is deleted from the cluster
        DeleteShareGroupStateRequestData request = written(manager.startTopicsDeleted("g", Map.of(T, "t")))
            .orElseThrow();

        // Then its state is to be deleted for the partitions the group initialized, recorded as deleting
        assertThat(request.groupId()).isEqualTo("g");
        assertThat(request.topics()).singleElement().satisfies(topic -> {
            assertThat(topic.topicId()).isEqualTo(T);
            assertThat(topic.partitions()).extracting(DeleteShareGroupStateRequestData.PartitionData::partition)
                .containsExactly(0, 1, 2);
        });
        assertThat(ctx.allWrites()).hasSize(writes + 1);
        assertThat(manager.states("g").initialized()).isEmpty();
        assertThat(manager.states("g").deleting()).containsOnlyKeys(T);
        assertThat(manager.groupsWithStateOf(Set.of(T))).isEmpty();

        // And once the share coordinator deleted it, the topic leaves the group's states; a second deletion event
        // finds nothing to do
        written(manager.completeDeleteOffsets("g", Set.of(T)));
        assertThat(manager.states("g").deleting()).isEmpty();
        assertThat(written(manager.startTopicsDeleted("g", Map.of(T, "t")))).isEmpty();
        assertThat(manager.describe("g").members()).hasSize(1);
    }
}
