package io.cairn.broker.group;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.consumer.ConsumerGroup;
import io.cairn.broker.group.consumer.ConsumerGroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupMember;
import io.cairn.broker.group.consumer.ConsumerGroupMigrationPolicy;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.broker.group.consumer.EmbeddedConsumerProtocol;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerGroupHeartbeatRequestData;
import io.cairn.wire.message.ConsumerGroupHeartbeatResponseData;
import io.cairn.wire.message.ConsumerProtocolSubscription;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.LeaveGroupRequestData;
import io.cairn.wire.message.LeaveGroupResponseData;
import io.cairn.wire.message.SyncGroupRequestData;
import io.cairn.wire.message.SyncGroupResponseData;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Kafka's online migration between classic and consumer groups on one shard: the upgrade of a classic group with
 * members, its classic members served from the consumer group, the downgrade when the last consumer-protocol member
 * leaves, {@code group.consumer.migration.policy}, and every state through the record format across a reload.
 */
class GroupShardMigrationTest {

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
            return FOO.equals(topicId) ? 4 : -1;
        }

        @Override
        public java.util.Collection<String> topicNames() {
            return List.of("foo");
        }
    };
    private static final short JOIN_V = 9;
    private static final short SYNC_V = 5;
    private static final int SESSION_MS = 10_000;

    private final ClassicGroupTestShardContext ctx = new ClassicGroupTestShardContext(1_000);
    private GroupShard shard = shard(ConsumerGroupMigrationPolicy.BIDIRECTIONAL);

    private GroupShard shard(ConsumerGroupMigrationPolicy policy) {
        return new GroupShard(ctx, GroupConfig.defaults(),
            ConsumerGroupConfig.defaults().withMigrationPolicy(policy), new GroupCounters(), () -> TOPICS);
    }

    // ------------------------------------------------------------------------------------------------ helpers

    private static byte[] subscription(Set<Integer> owned) {
        ConsumerProtocolSubscription subscription = new ConsumerProtocolSubscription().setTopics(List.of("foo"));
        if (!owned.isEmpty()) {
            subscription.setOwnedPartitions(List.of(new ConsumerProtocolSubscription.TopicPartition().setTopic("foo")
                .setPartitions(new ArrayList<>(owned))));
        }
        io.cairn.wire.protocol.SerializationCache cache = new io.cairn.wire.protocol.SerializationCache();
        subscription.addSize(new io.cairn.wire.protocol.SizeAccumulator(), cache, (short) 1);
        io.netty.buffer.ByteBuf buf = io.netty.buffer.Unpooled.buffer();
        try {
            buf.writeShort(1);
            subscription.write(new io.cairn.wire.protocol.ByteBufAccessor(buf), cache, (short) 1);
            return io.netty.buffer.ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    private JoinGroupResponseData classicJoin(String memberId, Set<Integer> owned) {
        JoinGroupRequestData request = new JoinGroupRequestData().setGroupId("g").setMemberId(memberId)
            .setSessionTimeoutMs(SESSION_MS).setRebalanceTimeoutMs(30_000).setProtocolType("consumer")
            .setProtocols(new ArrayList<>(List.of(new JoinGroupRequestData.JoinGroupRequestProtocol()
                .setName("range").setMetadata(subscription(owned)))));
        CompletableFuture<JoinGroupResponseData> response = shard.joinGroup(new ClientInfo("c", "/127.0.0.1"),
            request, JOIN_V);
        ctx.completeWrites();
        return response.getNow(null);
    }

    private CompletableFuture<JoinGroupResponseData> classicJoinParked(String memberId) {
        return shard.joinGroup(new ClientInfo("c", "/127.0.0.1"), new JoinGroupRequestData().setGroupId("g")
            .setMemberId(memberId).setSessionTimeoutMs(SESSION_MS).setRebalanceTimeoutMs(30_000)
            .setProtocolType("consumer").setProtocols(new ArrayList<>(List.of(
                new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                    .setMetadata(subscription(Set.of()))))), JOIN_V);
    }

    private SyncGroupResponseData sync(String memberId, int generation, Map<String, byte[]> assignments) {
        List<SyncGroupRequestData.SyncGroupRequestAssignment> list = new ArrayList<>();
        assignments.forEach((id, bytes) -> list.add(new SyncGroupRequestData.SyncGroupRequestAssignment()
            .setMemberId(id).setAssignment(bytes)));
        CompletableFuture<SyncGroupResponseData> response = shard.syncGroup(new SyncGroupRequestData()
            .setGroupId("g").setMemberId(memberId).setGenerationId(generation).setProtocolType("consumer")
            .setProtocolName("range").setAssignments(list), SYNC_V);
        ctx.completeWrites();
        return response.getNow(null);
    }

    private Errors heartbeat(String memberId, int generation) {
        return Errors.forCode(shard.heartbeat(new HeartbeatRequestData().setGroupId("g").setMemberId(memberId)
            .setGenerationId(generation), (short) 4).getNow(null).errorCode());
    }

    private ConsumerGroupHeartbeatResponseData consumerHeartbeat(String memberId, int epoch) {
        ConsumerGroupHeartbeatRequestData request = new ConsumerGroupHeartbeatRequestData().setGroupId("g")
            .setMemberId(memberId).setMemberEpoch(epoch);
        if (epoch == 0) {
            request.setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of("foo"))
                .setTopicPartitions(new ArrayList<>());
        }
        CompletableFuture<ConsumerGroupHeartbeatResponseData> response = shard.consumerGroups().heartbeat("c",
            "/127.0.0.1", request, (short) 1);
        ctx.completeWrites();
        return response.getNow(null);
    }

    private static byte[] assignment(Integer... partitions) {
        return EmbeddedConsumerProtocol.serializeAssignment(Map.of(FOO, Set.of(partitions)), TOPICS, (short) 1);
    }

    private static Set<Integer> partitions(byte[] assignment) {
        return EmbeddedConsumerProtocol.assignedPartitions(assignment, TOPICS).getOrDefault(FOO, Set.of());
    }

    /** A Stable classic group of members a (leader; partitions 0, 1) and b (2, 3) at generation 1. */
    private List<String> stableClassicGroup() {
        String a = classicJoin("", Set.of()).memberId();
        String b = classicJoin("", Set.of()).memberId();
        CompletableFuture<JoinGroupResponseData> joinA = classicJoinParked(a);
        CompletableFuture<JoinGroupResponseData> joinB = classicJoinParked(b);
        ctx.advance(6_000);
        assertThat(joinA.getNow(null).generationId()).isEqualTo(1);
        assertThat(joinB.getNow(null).generationId()).isEqualTo(1);
        String leader = joinA.getNow(null).leader();
        String follower = leader.equals(a) ? b : a;
        assertThat(sync(leader, 1, Map.of(leader, assignment(0, 1), follower, assignment(2, 3))).errorCode())
            .isZero();
        assertThat(sync(follower, 1, Map.of()).errorCode()).isZero();
        return List.of(leader, follower);
    }

    private GroupShard reload() {
        GroupShard reloaded = shard(ConsumerGroupMigrationPolicy.BIDIRECTIONAL);
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
        return reloaded;
    }

    // ------------------------------------------------------------------------------------------------ upgrade

    @Test
    void aConsumerHeartbeatShouldUpgradeAClassicGroupWithMembersKeepingTheirAssignments() {
        // Given
        List<String> classic = stableClassicGroup();
        int writesBefore = ctx.allWrites().size();

        // When
        ConsumerGroupHeartbeatResponseData joined = consumerHeartbeat("c", 0);

        // Then: the classic members are members at the generation, owning what they owned; c waits for them
        assertThat(Errors.forCode(joined.errorCode())).isEqualTo(Errors.NONE);
        assertThat(shard.groups().group("g")).isEmpty();
        ConsumerGroup group = shard.consumerGroups().group("g").orElseThrow();
        assertThat(group.groupEpoch()).isEqualTo(2);
        ConsumerGroupMember a = group.member(classic.get(0));
        assertThat(a.useClassicProtocol()).isTrue();
        assertThat(a.memberEpoch()).isEqualTo(1);
        assertThat(a.classicMetadata().sessionTimeoutMs()).isEqualTo(SESSION_MS);
        assertThat(a.assignedPartitions()).isEqualTo(Map.of(FOO, Set.of(0, 1)));
        assertThat(group.member(classic.get(1)).assignedPartitions()).isEqualTo(Map.of(FOO, Set.of(2, 3)));
        assertThat(group.member("c").useClassicProtocol()).isFalse();
        List<CoordinatorRecord> conversion = ctx.allWrites().get(writesBefore);
        assertThat(conversion.get(0).keyVersion()).isEqualTo(GroupRecordSerde.GROUP_METADATA_KEY);
        assertThat(conversion.get(0).value()).isNull();
    }

    @Test
    void classicMembersShouldRejoinAndRevokeSoThatTheConsumerMemberGetsItsShare() {
        // Given
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);

        // When: each classic member is told to rejoin, revokes everything (eager) and syncs
        Map<String, Set<Integer>> assigned = new java.util.HashMap<>();
        for (String member : classic) {
            assertThat(heartbeat(member, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
            JoinGroupResponseData rejoined = classicJoin(member, Set.of());
            assertThat(Errors.forCode(rejoined.errorCode())).isEqualTo(Errors.NONE);
            assertThat(rejoined.generationId()).isEqualTo(2);
            assertThat(rejoined.protocolName()).isEqualTo("range");
            assertThat(rejoined.leader()).isNotEqualTo(member);
            SyncGroupResponseData synced = sync(member, 2, Map.of());
            assertThat(Errors.forCode(synced.errorCode())).isEqualTo(Errors.NONE);
            assigned.put(member, partitions(synced.assignment()));
            assertThat(heartbeat(member, 2)).isEqualTo(Errors.NONE);
        }
        ConsumerGroupHeartbeatResponseData c = consumerHeartbeat("c", 2);

        // Then: the four partitions are shared by the three members, none twice
        Set<Integer> all = new HashSet<>();
        assigned.values().forEach(all::addAll);
        c.assignment().topicPartitions().forEach(tp -> all.addAll(tp.partitions()));
        assertThat(all).containsExactlyInAnyOrder(0, 1, 2, 3);
        assertThat(assigned.values().stream().mapToInt(Set::size).sum()
            + c.assignment().topicPartitions().stream().mapToInt(tp -> tp.partitions().size()).sum()).isEqualTo(4);
        assertThat(shard.validateOffsetCommit("g", 2, classic.get(0), null, (short) 8)).isEqualTo(Errors.NONE);
        assertThat(shard.validateOffsetCommit("g", 1, classic.get(0), null, (short) 8))
            .isEqualTo(Errors.ILLEGAL_GENERATION);
    }

    @Test
    void aMixedGroupShouldSurviveAReloadThroughTheRecordFormat() {
        // Given
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);
        classicJoin(classic.get(0), Set.of());

        // When
        GroupShard reloaded = reload();

        // Then
        ConsumerGroup before = shard.consumerGroups().group("g").orElseThrow();
        ConsumerGroup after = reloaded.consumerGroups().group("g").orElseThrow();
        assertThat(reloaded.groups().group("g")).isEmpty();
        assertThat(after.groupEpoch()).isEqualTo(before.groupEpoch());
        for (ConsumerGroupMember member : before.members()) {
            assertThat(after.member(member.memberId())).isEqualTo(member);
        }
        assertThat(after.member(classic.get(1)).classicMetadata().protocol().name()).isEqualTo("range");
    }

    @Test
    void aFailedWriteOfTheUpgradeShouldLeaveTheClassicGroupAsItWas() {
        // Given
        List<String> classic = stableClassicGroup();
        CompletableFuture<ConsumerGroupHeartbeatResponseData> joined = shard.consumerGroups().heartbeat("c",
            "/127.0.0.1", new ConsumerGroupHeartbeatRequestData().setGroupId("g").setMemberId("c").setMemberEpoch(0)
                .setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of("foo"))
                .setTopicPartitions(new ArrayList<>()), (short) 1);

        // When
        ctx.failOldestWrite(Errors.NOT_LEADER_OR_FOLLOWER.exception());

        // Then: the classic group is back with its members at their generation
        assertThat(Errors.forCode(joined.getNow(null).errorCode())).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(shard.consumerGroups().group("g")).isEmpty();
        ClassicGroup group = shard.groups().group("g").orElseThrow();
        assertThat(group.members()).extracting(ClassicGroupMember::memberId)
            .containsExactlyInAnyOrderElementsOf(classic);
        assertThat(heartbeat(classic.get(0), 1)).isEqualTo(Errors.NONE);
    }

    @Test
    void aClassicMemberThatDoesNotRejoinWithinItsRebalanceTimeoutShouldBeRemoved() {
        // Given: a classic member told to rejoin that only heartbeats
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);
        assertThat(heartbeat(classic.get(0), 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);

        // When: 35 s of heartbeats (its rebalance timeout is 30 s)
        for (int i = 0; i < 7; i++) {
            ctx.advance(5_000);
            heartbeat(classic.get(0), 1);
            ctx.completeWrites();
        }

        // Then
        assertThat(shard.consumerGroups().group("g").orElseThrow().hasMember(classic.get(0))).isFalse();
        assertThat(heartbeat(classic.get(0), 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void theUpgradeShouldBeRefusedWhenThePolicyAllowsOnlyDowngrades() {
        // Given
        shard = shard(ConsumerGroupMigrationPolicy.DOWNGRADE);
        stableClassicGroup();

        // When
        ConsumerGroupHeartbeatResponseData joined = consumerHeartbeat("c", 0);

        // Then
        assertThat(Errors.forCode(joined.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(shard.groups().group("g")).isPresent();
        assertThat(shard.consumerGroups().group("g")).isEmpty();
    }

    @Test
    void aClassicJoinToAConsumerGroupWithAnotherProtocolTypeShouldBeRefused() {
        // Given
        consumerHeartbeat("c", 0);

        // When
        CompletableFuture<JoinGroupResponseData> response = shard.joinGroup(new ClientInfo("c", "/127.0.0.1"),
            new JoinGroupRequestData().setGroupId("g").setMemberId("x").setSessionTimeoutMs(SESSION_MS)
                .setRebalanceTimeoutMs(30_000).setProtocolType("connect").setProtocols(new ArrayList<>(List.of(
                    new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                        .setMetadata(subscription(Set.of()))))), JOIN_V);

        // Then
        assertThat(Errors.forCode(response.getNow(null).errorCode())).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
    }

    @Test
    void aClassicJoinToAConsumerGroupShouldHaveItsSessionTimeoutChecked() {
        // Given
        consumerHeartbeat("c", 0);

        // When: below group.min.session.timeout.ms (6 s)
        CompletableFuture<JoinGroupResponseData> response = shard.joinGroup(new ClientInfo("c", "/127.0.0.1"),
            new JoinGroupRequestData().setGroupId("g").setMemberId("x").setSessionTimeoutMs(1_000)
                .setRebalanceTimeoutMs(30_000).setProtocolType("consumer").setProtocols(new ArrayList<>(List.of(
                    new JoinGroupRequestData.JoinGroupRequestProtocol().setName("range")
                        .setMetadata(subscription(Set.of()))))), JOIN_V);

        // Then
        assertThat(Errors.forCode(response.getNow(null).errorCode())).isEqualTo(Errors.INVALID_SESSION_TIMEOUT);
        assertThat(shard.consumerGroups().group("g").orElseThrow().hasMember("x")).isFalse();
    }

    // ---------------------------------------------------------------------------------------------- downgrade

    @Test
    void theLastConsumerMemberLeavingShouldDowngradeTheGroupToAClassicGroup() {
        // Given
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);
        int writesBefore = ctx.allWrites().size();

        // When
        ConsumerGroupHeartbeatResponseData left = consumerHeartbeat("c", -1);

        // Then: a classic group of the classic members, rebalancing; the records say so
        assertThat(Errors.forCode(left.errorCode())).isEqualTo(Errors.NONE);
        assertThat(shard.consumerGroups().group("g")).isEmpty();
        ClassicGroup group = shard.groups().group("g").orElseThrow();
        assertThat(group.members()).extracting(ClassicGroupMember::memberId)
            .containsExactlyInAnyOrderElementsOf(classic);
        assertThat(group.state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
        assertThat(heartbeat(classic.get(0), 2)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        List<CoordinatorRecord> records = ctx.allWrites().get(writesBefore);
        CoordinatorRecord last = records.get(records.size() - 1);
        assertThat(last.keyVersion()).isEqualTo(GroupRecordSerde.GROUP_METADATA_KEY);
        assertThat(((GroupMetadataValue) last.value()).members()).hasSize(2);
        GroupShard reloaded = reload();
        assertThat(reloaded.consumerGroups().group("g")).isEmpty();
        assertThat(reloaded.groups().group("g").orElseThrow().members()).hasSize(2);
    }

    @Test
    void aClassicMemberReplacingTheLastConsumerStaticMemberShouldDowngradeTheGroupWithoutARebalance() {
        // Given: a static consumer-protocol member s (instance i) and a classic member a
        CompletableFuture<ConsumerGroupHeartbeatResponseData> joined = shard.consumerGroups().heartbeat("c",
            "/127.0.0.1", new ConsumerGroupHeartbeatRequestData().setGroupId("g").setMemberId("s").setInstanceId("i")
                .setMemberEpoch(0).setRebalanceTimeoutMs(30_000).setSubscribedTopicNames(List.of("foo"))
                .setTopicPartitions(new ArrayList<>()), (short) 1);
        ctx.completeWrites();
        assertThat(joined.getNow(null).errorCode()).isZero();
        String a = classicJoin("", Set.of()).memberId();
        classicJoin(a, Set.of());
        ConsumerGroup consumer = shard.consumerGroups().group("g").orElseThrow();
        Map<Uuid, Set<Integer>> target = consumer.targetAssignment("s");
        int epoch = consumer.groupEpoch();

        // When: s restarts as a classic consumer with the same instance id
        CompletableFuture<JoinGroupResponseData> replaced = shard.joinGroup(new ClientInfo("c", "/127.0.0.1"),
            new JoinGroupRequestData().setGroupId("g").setMemberId("").setGroupInstanceId("i")
                .setSessionTimeoutMs(SESSION_MS).setRebalanceTimeoutMs(30_000).setProtocolType("consumer")
                .setProtocols(new ArrayList<>(List.of(new JoinGroupRequestData.JoinGroupRequestProtocol()
                    .setName("range").setMetadata(subscription(Set.of()))))), JOIN_V);
        ctx.completeWrites();

        // Then: a Stable classic group of a and the new member, which gets s's target assignment
        JoinGroupResponseData response = replaced.getNow(null);
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.NONE);
        assertThat(response.generationId()).isEqualTo(epoch);
        assertThat(shard.consumerGroups().group("g")).isEmpty();
        ClassicGroup group = shard.groups().group("g").orElseThrow();
        assertThat(group.state()).isEqualTo(ClassicGroupState.STABLE);
        assertThat(group.members()).extracting(ClassicGroupMember::memberId)
            .containsExactlyInAnyOrder(a, response.memberId());
        SyncGroupResponseData synced = sync(response.memberId(), epoch, Map.of());
        assertThat(Errors.forCode(synced.errorCode())).isEqualTo(Errors.NONE);
        assertThat(partitions(synced.assignment())).isEqualTo(target.getOrDefault(FOO, Set.of()));
        assertThat(reload().groups().group("g").orElseThrow().staticMemberId("i")).isEqualTo(response.memberId());
    }

    @Test
    void aFailedWriteOfTheDowngradeShouldBringTheConsumerGroupBack() {
        // Given
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);
        int epoch = shard.consumerGroups().group("g").orElseThrow().member("c").memberEpoch();
        CompletableFuture<ConsumerGroupHeartbeatResponseData> left = shard.consumerGroups().heartbeat("c",
            "/127.0.0.1", new ConsumerGroupHeartbeatRequestData().setGroupId("g").setMemberId("c")
                .setMemberEpoch(-1), (short) 1);
        assertThat(shard.groups().group("g")).isPresent();

        // When
        ctx.failOldestWrite(Errors.NOT_LEADER_OR_FOLLOWER.exception());

        // Then
        assertThat(Errors.forCode(left.getNow(null).errorCode())).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(shard.groups().group("g")).isEmpty();
        ConsumerGroup group = shard.consumerGroups().group("g").orElseThrow();
        assertThat(group.member("c").memberEpoch()).isEqualTo(epoch);
        assertThat(classic).allMatch(group::hasMember);
    }

    @Test
    void theGroupShouldStayAConsumerGroupWhenThePolicyAllowsOnlyUpgrades() {
        // Given
        shard = shard(ConsumerGroupMigrationPolicy.UPGRADE);
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);

        // When
        consumerHeartbeat("c", -1);

        // Then
        ConsumerGroup group = shard.consumerGroups().group("g").orElseThrow();
        assertThat(group.members()).extracting(ConsumerGroupMember::memberId)
            .containsExactlyInAnyOrderElementsOf(classic);
        assertThat(shard.groups().group("g")).isEmpty();
    }

    @Test
    void aClassicLeaveGroupShouldRemoveTheMemberFromTheConsumerGroup() {
        // Given
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);
        int epoch = shard.consumerGroups().group("g").orElseThrow().groupEpoch();

        // When
        CompletableFuture<LeaveGroupResponseData> response = shard.leaveGroup(new LeaveGroupRequestData()
            .setGroupId("g").setMembers(List.of(new LeaveGroupRequestData.MemberIdentity()
                .setMemberId(classic.get(0)), new LeaveGroupRequestData.MemberIdentity().setMemberId("c"))),
            (short) 5);
        ctx.completeWrites();

        // Then: a consumer-protocol member cannot leave with LeaveGroup
        LeaveGroupResponseData left = response.getNow(null);
        assertThat(left.members()).extracting(LeaveGroupResponseData.MemberResponse::errorCode)
            .containsExactly(Errors.NONE.code(), Errors.UNKNOWN_MEMBER_ID.code());
        ConsumerGroup group = shard.consumerGroups().group("g").orElseThrow();
        assertThat(group.hasMember(classic.get(0))).isFalse();
        assertThat(group.groupEpoch()).isEqualTo(epoch + 1);
    }

    @Test
    void aClassicMemberThatStopsHeartbeatingShouldBeRemovedAfterItsSessionTimeout() {
        // Given
        List<String> classic = stableClassicGroup();
        consumerHeartbeat("c", 0);

        // When: c keeps heartbeating, the classic members do not
        for (int i = 0; i < 3; i++) {
            ctx.advance(4_000);
            consumerHeartbeat("c", shard.consumerGroups().group("g").orElseThrow().member("c").memberEpoch());
        }
        ctx.completeWrites();

        // Then
        ConsumerGroup group = shard.consumerGroups().group("g").orElseThrow();
        assertThat(group.members()).extracting(ConsumerGroupMember::memberId).containsExactly("c");
        assertThat(classic).noneMatch(group::hasMember);
    }

    @Test
    void thePolicyShouldBeParsedCaseInsensitivelyAndRefuseOtherValues() {
        assertThat(ConsumerGroupMigrationPolicy.parse("Upgrade")).isEqualTo(ConsumerGroupMigrationPolicy.UPGRADE);
        assertThat(ConsumerGroupMigrationPolicy.parse("bidirectional").isDowngradeEnabled()).isTrue();
        assertThat(ConsumerGroupMigrationPolicy.DISABLED.isUpgradeEnabled()).isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ConsumerGroupMigrationPolicy.parse("sideways"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(ConsumerGroupMigrationPolicy.KEY);
    }
}
