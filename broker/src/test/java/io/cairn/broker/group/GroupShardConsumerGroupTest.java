package io.cairn.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.consumer.ConsumerGroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupState;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerGroupHeartbeatRequestData;
import io.cairn.wire.message.ConsumerGroupHeartbeatResponseData;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** A group shard's consumer groups: through the real record format, across a reload. */
class GroupShardConsumerGroupTest {

    private static final Uuid FOO = new Uuid(9, 9);
    private static final ConsumerGroupTopics TOPICS = new ConsumerGroupTopics() {
        @Override
        public Uuid topicId(String name) {
            return "foo".equals(name) ? FOO : null;
        }

        @Override
        public String topicName(Uuid topicId) {
            return FOO.equals(topicId) ? "foo" : null;
        }

        @Override
        public int numPartitions(Uuid topicId) {
            return FOO.equals(topicId) ? 3 : -1;
        }

        @Override
        public java.util.Collection<String> topicNames() {
            return List.of("foo");
        }
    };

    private final ClassicGroupTestShardContext ctx = new ClassicGroupTestShardContext(1_000);

    private GroupShard shard() {
        return new GroupShard(ctx, GroupConfig.defaults(), ConsumerGroupConfig.defaults(), new GroupCounters(),
            () -> TOPICS);
    }

    private ConsumerGroupHeartbeatResponseData join(GroupShard shard, String groupId) {
        return join(shard, new ConsumerGroupHeartbeatRequestData().setGroupId(groupId).setMemberId("m")
            .setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of("foo"))
            .setTopicPartitions(new ArrayList<>()));
    }

    private ConsumerGroupHeartbeatResponseData join(GroupShard shard, ConsumerGroupHeartbeatRequestData request) {
        CompletableFuture<ConsumerGroupHeartbeatResponseData> response = shard.consumerGroups().heartbeat("c",
            "/127.0.0.1", request, (short) 1);
        ctx.completeWrites();
        return response.getNow(null);
    }

    @Test
    void aConsumerGroupShouldSurviveAReloadThroughTheRecordFormat() {
        // Given: one member by name, one by regular expression
        GroupShard first = shard();
        join(first, "g");
        join(first, new ConsumerGroupHeartbeatRequestData().setGroupId("g").setMemberId("r").setMemberEpoch(0)
            .setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of()).setSubscribedTopicRegex("f.*")
            .setTopicPartitions(new ArrayList<>()));
        GroupShard reloaded = shard();

        // When
        long offset = 0;
        for (List<CoordinatorRecord> write : ctx.allWrites()) {
            for (CoordinatorRecord record : write) {
                byte[] value = GroupRecordSerde.valueBytes(record);
                CoordinatorRecord decoded = GroupRecordSerde.decode(ByteBuffer.wrap(GroupRecordSerde.keyBytes(record)),
                    value == null ? null : ByteBuffer.wrap(value)).orElseThrow();
                reloaded.replay(offset++, -1L, (short) -1, decoded);
            }
        }
        reloaded.onLoaded();

        // Then: m has not revoked what r is to get yet, as before the reload
        io.cairn.broker.group.consumer.ConsumerGroup group = reloaded.consumerGroups().group("g").orElseThrow();
        io.cairn.broker.group.consumer.ConsumerGroup before = first.consumerGroups().group("g").orElseThrow();
        assertThat(group.state()).isEqualTo(before.state()).isEqualTo(ConsumerGroupState.RECONCILING);
        assertThat(group.groupEpoch()).isEqualTo(2);
        assertThat(group.member("m").assignedPartitions()).isEqualTo(before.member("m").assignedPartitions());
        assertThat(group.targetAssignment("r")).isEqualTo(before.targetAssignment("r"));
        assertThat(group.targetAssignment("r").get(FOO)).hasSize(1);
        assertThat(group.member("r").subscribedTopicRegex()).isEqualTo("f.*");
        assertThat(group.resolvedRegularExpression("f.*").topics()).containsExactly("foo");
        assertThat(group.isSubscribedToTopic("foo")).isTrue();
        assertThat(reloaded.groups().group("g")).isEmpty();
    }

    @Test
    void aClassicGroupWithAMemberBeforeItsFirstRebalanceShouldNotBecomeAConsumerGroup() {
        // A classic group with members is upgraded only once it has chosen its protocol (GroupShardMigrationTest).
        // Given
        GroupShard shard = shard();
        shard.groups().join(new ClientInfo("c", "/127.0.0.1"), new JoinGroupRequestData().setGroupId("g")
            .setMemberId("").setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000).setProtocolType("consumer")
            .setProtocols(new ArrayList<>(List.of(new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                .setMetadata(new byte[] {1})))), (short) 3);
        ctx.completeWrites();
        assertThat(shard.groups().isEmptyGroup("g")).isFalse();

        // When
        ConsumerGroupHeartbeatResponseData response = join(shard, "g");

        // Then
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
    }

    @Test
    void anEmptyClassicGroupShouldBeReplacedAndTheGroupApisShouldAnswerForTheConsumerGroup() {
        // Given: a simple group (offsets committed outside group management)
        GroupShard shard = shard();
        shard.groups().getOrCreateSimpleGroup("g");

        // When
        ConsumerGroupHeartbeatResponseData joined = join(shard, "g");

        // Then
        assertThat(Errors.forCode(joined.errorCode())).isEqualTo(Errors.NONE);
        assertThat(shard.groups().group("g")).isEmpty();
        assertThat(ctx.allWrites().get(0).get(0).keyVersion()).isEqualTo(GroupRecordSerde.GROUP_METADATA_KEY);
        assertThat(ctx.allWrites().get(0).get(0).value()).isNull();
        assertThat(shard.listGroups(java.util.Set.of(), java.util.Set.of())).singleElement()
            .satisfies(listed -> assertThat(listed.groupType()).isEqualTo("consumer"));
        io.cairn.wire.message.DescribeGroupsResponseData.DescribedGroup described = shard.describeClassicGroup("g",
            (short) 6);
        assertThat(Errors.forCode(described.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(described.errorMessage()).isEqualTo("Group g is not a classic group.");
        assertThat(described.groupState()).isEqualTo("Dead");
        assertThat(List.of(shard.validateOffsetCommit("g", 1, "m", null, (short) 9),
            shard.validateOffsetCommit("g", 0, "m", null, (short) 9),
            shard.validateOffsetCommit("g", 1, "x", null, (short) 9),
            shard.validateOffsetFetch("g", "m", 1), shard.validateOffsetFetch("g", "m", 2),
            shard.validateDeleteGroup("g"), shard.validateOffsetDelete("g", "foo"),
            shard.validateOffsetDelete("g", "bar"))).containsExactly(Errors.NONE, Errors.STALE_MEMBER_EPOCH,
                Errors.UNKNOWN_MEMBER_ID, Errors.NONE, Errors.STALE_MEMBER_EPOCH, Errors.NON_EMPTY_GROUP,
                Errors.GROUP_SUBSCRIBED_TO_TOPIC, Errors.NONE);
    }

    @Test
    void anEmptyConsumerGroupWithoutOffsetsShouldBeDeletedAtTheNextRetentionCheck() {
        // Given: a group whose only member left
        GroupShard shard = shard();
        shard.onLoaded();
        join(shard, "g");
        shard.consumerGroups().heartbeat("c", "/127.0.0.1", new ConsumerGroupHeartbeatRequestData().setGroupId("g")
            .setMemberId("m").setMemberEpoch(-1), (short) 1);
        ctx.completeWrites();
        int writes = ctx.allWrites().size();

        // When
        ctx.advance(GroupConfig.defaults().offsetsRetentionCheckIntervalMs());
        ctx.completeWrites();

        // Then
        assertThat(shard.consumerGroups().group("g")).isEmpty();
        List<CoordinatorRecord> tombstones = ctx.allWrites().get(writes);
        assertThat(tombstones.get(tombstones.size() - 1).keyVersion())
            .isEqualTo(io.cairn.broker.group.consumer.ConsumerGroupRecords.GROUP_METADATA);
        assertThat(tombstones).allSatisfy(record -> assertThat(record.value()).isNull());
    }
}
