package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerProtocolSubscription;
import io.cairn.wire.message.DescribeGroupsResponseData;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.LeaveGroupRequestData;
import io.cairn.wire.message.LeaveGroupResponseData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.message.SyncGroupRequestData;
import io.cairn.wire.message.SyncGroupResponseData;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.cairn.wire.protocol.SizeAccumulator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

class ClassicGroupManagerTest {

    private static final String GROUP = "orders";
    private static final int SESSION_MS = 10_000;
    private static final int REBALANCE_MS = 30_000;
    private static final int INITIAL_DELAY_MS = 3_000;
    private static final short JOIN_V = 9;
    private static final short SYNC_V = 5;

    private final ClassicGroupTestShardContext ctx = new ClassicGroupTestShardContext(1_700_000_000_000L);
    private final GroupCounters counters = new GroupCounters();
    private ClassicGroupManager manager = newManager(10);

    private ClassicGroupManager newManager(int maxGroupSize) {
        return new ClassicGroupManager(ctx, new GroupConfig(6_000, 300_000, INITIAL_DELAY_MS, maxGroupSize,
                7L * 24 * 3600 * 1000, 600_000L, 4096), counters);
    }

    @Test
    void aRebalanceShouldCountAsCompletedOnceTheAssignmentIsStored() {
        // When
        stableGroupOfTwo();

        // Then: Kafka's group-completed-rebalance-count
        assertThat(counters.completedRebalances()).isEqualTo(1);
    }

    // ------------------------------------------------------------------------------------------ helpers

    static byte[] subscription(String... topics) {
        ByteBuf buf = Unpooled.buffer();
        ByteBufAccessor writer = new ByteBufAccessor(buf);
        writer.writeShort((short) 1);
        ConsumerProtocolSubscription subscription = new ConsumerProtocolSubscription().setTopics(List.of(topics));
        SerializationCache cache = new SerializationCache();
        subscription.addSize(new SizeAccumulator(), cache, (short) 1);
        subscription.write(writer, cache, (short) 1);
        return ByteBufUtil.getBytes(buf);
    }

    private static JoinGroupRequestData joinRequest(String memberId, String instanceId, String protocol,
                                                    byte[] metadata) {
        List<JoinGroupRequestData.JoinGroupRequestProtocol> protocols = new ArrayList<>();
        protocols.add(new JoinGroupRequestData.JoinGroupRequestProtocol().setName(protocol).setMetadata(metadata));
        return new JoinGroupRequestData().setGroupId(GROUP).setMemberId(memberId).setGroupInstanceId(instanceId)
                .setSessionTimeoutMs(SESSION_MS).setRebalanceTimeoutMs(REBALANCE_MS).setProtocolType("consumer")
                .setProtocols(protocols);
    }

    private static JoinGroupRequestData joinRequest(String memberId) {
        return joinRequest(memberId, null, "range", subscription("payments"));
    }

    private CompletableFuture<JoinGroupResponseData> join(String clientId, JoinGroupRequestData request) {
        return manager.join(new ClientInfo(clientId, "/127.0.0.1"), request, JOIN_V);
    }

    /** A dynamic member's first JoinGroup: answered MEMBER_ID_REQUIRED with its new member id. */
    private String memberIdFor(String clientId) {
        JoinGroupResponseData response = done(join(clientId, joinRequest("")));
        assertThat(Errors.forCode(response.errorCode())).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        return response.memberId();
    }

    private CompletableFuture<SyncGroupResponseData> sync(String memberId, int generation,
                                                          Map<String, byte[]> assignments) {
        List<SyncGroupRequestData.SyncGroupRequestAssignment> list = new ArrayList<>();
        assignments.forEach((id, bytes) -> list.add(new SyncGroupRequestData.SyncGroupRequestAssignment()
                .setMemberId(id).setAssignment(bytes)));
        return manager.sync(new SyncGroupRequestData().setGroupId(GROUP).setMemberId(memberId)
                .setGenerationId(generation).setProtocolType("consumer").setProtocolName("range")
                .setAssignments(list), SYNC_V);
    }

    private Errors heartbeat(String memberId, int generation) {
        return heartbeat(memberId, null, generation);
    }

    private Errors heartbeat(String memberId, String instanceId, int generation) {
        CompletableFuture<HeartbeatResponseData> response = manager.heartbeat(
                new HeartbeatRequestData().setGroupId(GROUP).setMemberId(memberId).setGroupInstanceId(instanceId)
                        .setGenerationId(generation), (short) 4);
        assertThat(response).isDone();
        return Errors.forCode(done(response).errorCode());
    }

    /** The future's value; fails (instead of blocking) when it is not complete. */
    private static <T> T done(CompletableFuture<T> future) {
        assertThat(future).isDone();
        return future.getNow(null);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static Errors error(JoinGroupResponseData response) {
        return Errors.forCode(response.errorCode());
    }

    private ClassicGroup group() {
        return manager.group(GROUP).orElseThrow();
    }

    /** Two dynamic members that joined and synced: a Stable group at generation 1; [leader, follower]. */
    private List<String> stableGroupOfTwo() {
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> firstJoin = join("client-a", joinRequest(first));
        String second = memberIdFor("client-b");
        CompletableFuture<JoinGroupResponseData> secondJoin = join("client-b", joinRequest(second));
        ctx.advance(2L * INITIAL_DELAY_MS);
        assertThat(firstJoin).isDone();
        assertThat(secondJoin).isDone();
        CompletableFuture<SyncGroupResponseData> followerSync = sync(second, 1, Map.of());
        CompletableFuture<SyncGroupResponseData> leaderSync = sync(first, 1,
                Map.of(first, bytes("assignment-a"), second, bytes("assignment-b")));
        ctx.completeWrites();
        assertThat(done(leaderSync).errorCode()).isZero();
        assertThat(done(followerSync).errorCode()).isZero();
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);
        return List.of(first, second);
    }

    private static GroupMetadataValue groupValue(List<CoordinatorRecord> records) {
        assertThat(records).hasSize(1);
        return (GroupMetadataValue) records.get(0).value();
    }

    // ------------------------------------------------------------------------------------------- join

    @Test
    void twoMembersJoinInOneRebalanceAndOnlyTheLeaderGetsTheMemberList() {
        // Given
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> firstJoin = join("client-a", joinRequest(first));
        String second = memberIdFor("client-b");
        CompletableFuture<JoinGroupResponseData> secondJoin = join("client-b",
                joinRequest(second, null, "range", subscription("payments", "refunds")));

        // When
        ctx.advance(2L * INITIAL_DELAY_MS);

        // Then
        JoinGroupResponseData leader = done(firstJoin);
        JoinGroupResponseData follower = done(secondJoin);
        assertThat(first).startsWith("client-a-");
        assertThat(error(leader)).isEqualTo(Errors.NONE);
        assertThat(leader.generationId()).isEqualTo(1);
        assertThat(leader.leader()).isEqualTo(first);
        assertThat(leader.memberId()).isEqualTo(first);
        assertThat(leader.protocolName()).isEqualTo("range");
        assertThat(leader.protocolType()).isEqualTo("consumer");
        assertThat(leader.members()).extracting(JoinGroupResponseData.JoinGroupResponseMember::memberId)
                .containsExactly(first, second);
        assertThat(leader.members().get(1).metadata()).isEqualTo(subscription("payments", "refunds"));
        assertThat(error(follower)).isEqualTo(Errors.NONE);
        assertThat(follower.generationId()).isEqualTo(1);
        assertThat(follower.leader()).isEqualTo(first);
        assertThat(follower.members()).isEmpty();
        assertThat(group().state()).isEqualTo(ClassicGroupState.COMPLETING_REBALANCE);
        assertThat(group().subscribedTopics()).contains(Set.of("payments", "refunds"));
    }

    @Test
    void theInitialRebalanceWaitsForTheDelayAndEachNewMemberExtendsIt() {
        // Given
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> firstJoin = join("client-a", joinRequest(first));

        // When
        ctx.advance(INITIAL_DELAY_MS - 1);
        String second = memberIdFor("client-b");
        CompletableFuture<JoinGroupResponseData> secondJoin = join("client-b", joinRequest(second));
        ctx.advance(1);

        // Then: the delay was extended once for the second member
        assertThat(firstJoin).isNotDone();
        assertThat(group().state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
        ctx.advance(INITIAL_DELAY_MS - 1);
        assertThat(firstJoin).isNotDone();
        ctx.advance(1);
        assertThat(done(firstJoin).generationId()).isEqualTo(1);
        assertThat(done(secondJoin).generationId()).isEqualTo(1);
    }

    @Test
    void aLoneMemberIsAnsweredWhenTheInitialDelayRunsOut() {
        // Given
        String first = memberIdFor("client-a");

        // When
        CompletableFuture<JoinGroupResponseData> firstJoin = join("client-a", joinRequest(first));
        ctx.advance(INITIAL_DELAY_MS - 1);

        // Then
        assertThat(firstJoin).isNotDone();
        ctx.advance(1);
        assertThat(done(firstJoin).generationId()).isEqualTo(1);
        assertThat(done(firstJoin).members()).hasSize(1);
    }

    @Test
    void joinGroupV4WithoutMemberIdGetsMemberIdRequiredAndThePendingMemberExpires() {
        // When
        JoinGroupResponseData response = done(manager.join(new ClientInfo("client-a", "/127.0.0.1"), joinRequest(""),
                (short) 4));

        // Then
        assertThat(error(response)).isEqualTo(Errors.MEMBER_ID_REQUIRED);
        assertThat(response.memberId()).startsWith("client-a-").hasSizeGreaterThan("client-a-".length() + 30);
        assertThat(group().pendingMembers()).containsExactly(response.memberId());
        assertThat(group().state()).isEqualTo(ClassicGroupState.EMPTY);

        // When the member does not come back within its session timeout
        ctx.advance(SESSION_MS);

        // Then it is forgotten and cannot join with that id
        assertThat(group().pendingMembers()).isEmpty();
        assertThat(error(done(join("client-a", joinRequest(response.memberId())))))
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void joinGroupV3WithoutMemberIdJoinsAtOnceWithAGeneratedId() {
        // When
        CompletableFuture<JoinGroupResponseData> joined = manager.join(new ClientInfo("old-client", "/10.0.0.1"),
                joinRequest(""), (short) 3);
        ctx.advance(INITIAL_DELAY_MS);

        // Then
        JoinGroupResponseData response = done(joined);
        assertThat(error(response)).isEqualTo(Errors.NONE);
        assertThat(response.memberId()).startsWith("old-client-");
        assertThat(response.leader()).isEqualTo(response.memberId());
        assertThat(group().member(response.memberId()).clientHost()).isEqualTo("/10.0.0.1");
    }

    @Test
    void joinGroupIsRefusedForABadSessionTimeoutOrAMismatchedProtocol() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));

        // When
        JoinGroupResponseData tooShort = done(join("client-x", joinRequest("").setSessionTimeoutMs(5_999)));
        JoinGroupResponseData tooLong = done(join("client-x", joinRequest("").setSessionTimeoutMs(300_001)));
        JoinGroupResponseData otherType = done(join("client-x", joinRequest("").setProtocolType("connect")));
        JoinGroupResponseData otherProtocol = done(join("client-x",
                joinRequest("", null, "roundrobin", subscription("payments"))));
        JoinGroupResponseData noGroupId = done(join("client-x", joinRequest("").setGroupId("")));

        // Then
        assertThat(error(tooShort)).isEqualTo(Errors.INVALID_SESSION_TIMEOUT);
        assertThat(error(tooLong)).isEqualTo(Errors.INVALID_SESSION_TIMEOUT);
        assertThat(error(otherType)).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(error(otherProtocol)).isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(error(noGroupId)).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(group().numMembers()).isEqualTo(1);
    }

    @Test
    void aJoinBeyondTheMaximumGroupSizeIsRefused() {
        // Given
        manager = newManager(1);
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> firstJoin = join("client-a", joinRequest(first));

        // When
        JoinGroupResponseData whilePreparing = done(join("client-x", joinRequest("")));
        ctx.advance(INITIAL_DELAY_MS);
        JoinGroupResponseData whileCompleting = done(join("client-x", joinRequest("")));

        // Then
        assertThat(error(whilePreparing)).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED);
        assertThat(whilePreparing.memberId()).isEmpty();
        assertThat(error(whileCompleting)).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED);
        assertThat(done(firstJoin).members()).hasSize(1);
        assertThat(group().numMembers()).isEqualTo(1);
    }

    @Test
    void joinGroupWithAnUnknownMemberIdIsRefused() {
        // When
        JoinGroupResponseData unknownGroup = done(join("client-a", joinRequest("client-a-123")));

        // Then
        assertThat(error(unknownGroup)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(manager.group(GROUP)).isEmpty();
    }

    @Test
    void theProtocolNameOfARefusedRejoinIsEmptyBeforeV7AndNullFromV7() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));

        // When
        JoinGroupResponseData v6 = done(manager.join(new ClientInfo("c", "/h"), joinRequest("stranger"),
                (short) 6));
        JoinGroupResponseData v7 = done(manager.join(new ClientInfo("c", "/h"), joinRequest("stranger"),
                (short) 7));

        // Then
        assertThat(error(v6)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(v6.protocolName()).isEqualTo("");
        assertThat(error(v7)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(v7.protocolName()).isNull();
    }

    // ------------------------------------------------------------------------------------------- sync

    @Test
    void syncHandsOutTheAssignmentsOnlyAfterTheWriteIsCommitted() {
        // Given
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> firstJoin = join("client-a", joinRequest(first));
        String second = memberIdFor("client-b");
        join("client-b", joinRequest(second));
        ctx.advance(2L * INITIAL_DELAY_MS);
        ctx.completeWrites();
        assertThat(done(firstJoin).leader()).isEqualTo(first);

        // When
        CompletableFuture<SyncGroupResponseData> followerSync = sync(second, 1, Map.of());
        CompletableFuture<SyncGroupResponseData> leaderSync = sync(first, 1,
                Map.of(first, bytes("assignment-a"), second, bytes("assignment-b")));

        // Then: parked until the group record is committed
        assertThat(followerSync).isNotDone();
        assertThat(leaderSync).isNotDone();
        assertThat(ctx.pendingWrites()).hasSize(1);
        GroupMetadataValue stored = groupValue(ctx.pendingWrites().get(0).records());
        assertThat(stored.generation()).isEqualTo(1);
        assertThat(stored.protocol()).isEqualTo("range");
        assertThat(stored.protocolType()).isEqualTo("consumer");
        assertThat(stored.leader()).isEqualTo(first);
        assertThat(stored.members()).extracting(GroupMetadataValue.MemberMetadata::memberId)
                .containsExactly(first, second);
        assertThat(stored.members().get(1).assignment()).isEqualTo(bytes("assignment-b"));
        assertThat(stored.members().get(1).subscription()).isEqualTo(subscription("payments"));
        assertThat(stored.members().get(1).clientId()).isEqualTo("client-b");
        assertThat(group().state()).isEqualTo(ClassicGroupState.COMPLETING_REBALANCE);

        // When
        ctx.completeWrites();

        // Then
        assertThat(done(leaderSync).assignment()).isEqualTo(bytes("assignment-a"));
        assertThat(done(followerSync).assignment()).isEqualTo(bytes("assignment-b"));
        assertThat(done(followerSync).protocolName()).isEqualTo("range");
        assertThat(done(followerSync).protocolType()).isEqualTo("consumer");
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);
        assertThat(heartbeat(second, 1)).isEqualTo(Errors.NONE);
        assertThat(done(sync(second, 1, Map.of())).assignment()).isEqualTo(bytes("assignment-b"));
    }

    @Test
    void aMemberTheLeaderLeftOutGetsAnEmptyAssignment() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));
        String second = memberIdFor("client-b");
        join("client-b", joinRequest(second));
        ctx.advance(2L * INITIAL_DELAY_MS);
        ctx.completeWrites();

        // When
        CompletableFuture<SyncGroupResponseData> followerSync = sync(second, 1, Map.of());
        sync(first, 1, Map.of(first, bytes("everything")));
        ctx.completeWrites();

        // Then
        assertThat(done(followerSync).errorCode()).isZero();
        assertThat(done(followerSync).assignment()).isEmpty();
    }

    @Test
    void aFailedWriteAnswersTheSyncCallsWithTheErrorAndRebalances() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));
        String second = memberIdFor("client-b");
        join("client-b", joinRequest(second));
        ctx.advance(2L * INITIAL_DELAY_MS);
        ctx.completeWrites();
        CompletableFuture<SyncGroupResponseData> followerSync = sync(second, 1, Map.of());
        CompletableFuture<SyncGroupResponseData> leaderSync = sync(first, 1,
                Map.of(first, bytes("a"), second, bytes("b")));

        // When
        ctx.failOldestWrite(Errors.NOT_COORDINATOR.exception());

        // Then
        assertThat(Errors.forCode(done(leaderSync).errorCode())).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(Errors.forCode(done(followerSync).errorCode())).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(done(followerSync).assignment()).isEmpty();
        assertThat(group().state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
        assertThat(heartbeat(second, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);

        // When both rejoin, the next generation forms without waiting for the rebalance timeout
        CompletableFuture<JoinGroupResponseData> rejoinA = join("client-a", joinRequest(first));
        CompletableFuture<JoinGroupResponseData> rejoinB = join("client-b", joinRequest(second));

        // Then
        assertThat(done(rejoinA).generationId()).isEqualTo(2);
        assertThat(done(rejoinB).generationId()).isEqualTo(2);
    }

    @Test
    void aWriteFailureOtherThanNotCoordinatorIsMappedAsKafkaDoes() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));
        ctx.advance(INITIAL_DELAY_MS);
        ctx.completeWrites();
        CompletableFuture<SyncGroupResponseData> leaderSync = sync(first, 1, Map.of(first, bytes("a")));

        // When
        ctx.failOldestWrite(Errors.NOT_ENOUGH_REPLICAS.exception());

        // Then
        assertThat(Errors.forCode(done(leaderSync).errorCode())).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(CoordinatorWriteErrors.operationError(Errors.NOT_LEADER_OR_FOLLOWER)).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(CoordinatorWriteErrors.operationError(Errors.MESSAGE_TOO_LARGE))
                .isEqualTo(Errors.UNKNOWN_SERVER_ERROR);
    }

    @Test
    void syncGroupChecksMemberGenerationAndProtocol() {
        // Given
        List<String> ids = stableGroupOfTwo();
        String member = ids.get(1);

        // When / Then
        assertThat(Errors.forCode(done(sync("nobody", 1, Map.of())).errorCode()))
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(Errors.forCode(done(sync(member, 7, Map.of())).errorCode()))
                .isEqualTo(Errors.ILLEGAL_GENERATION);
        SyncGroupRequestData otherProtocol = new SyncGroupRequestData().setGroupId(GROUP).setMemberId(member)
                .setGenerationId(1).setProtocolType("consumer").setProtocolName("roundrobin");
        assertThat(Errors.forCode(done(manager.sync(otherProtocol, SYNC_V)).errorCode()))
                .isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        SyncGroupRequestData noProtocolV5 = new SyncGroupRequestData().setGroupId(GROUP).setMemberId(member)
                .setGenerationId(1);
        assertThat(Errors.forCode(done(manager.sync(noProtocolV5, (short) 5)).errorCode()))
                .isEqualTo(Errors.INCONSISTENT_GROUP_PROTOCOL);
        assertThat(done(manager.sync(noProtocolV5, (short) 4)).errorCode()).isZero();
        SyncGroupRequestData unknownGroup = new SyncGroupRequestData().setGroupId("nope").setMemberId(member)
                .setGenerationId(1);
        assertThat(Errors.forCode(done(manager.sync(unknownGroup, (short) 3)).errorCode()))
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aMemberThatNeverSyncsIsRemovedAfterTheRebalanceTimeout() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));
        String second = memberIdFor("client-b");
        join("client-b", joinRequest(second));
        ctx.advance(2L * INITIAL_DELAY_MS);
        sync(first, 1, Map.of(first, bytes("a"), second, bytes("b")));
        ctx.completeWrites();

        // When: the follower heartbeats but never sends its SyncGroup
        for (int i = 0; i < 10; i++) {
            ctx.advance(REBALANCE_MS / 10);
            heartbeat(first, 1);
            heartbeat(second, 1);
        }

        // Then
        assertThat(group().hasMember(second)).isFalse();
        assertThat(group().state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
    }

    // ---------------------------------------------------------------------------- sessions and heartbeats

    @Test
    void aMemberWhoseSessionRunsOutIsRemovedAndTheGroupRebalances() {
        // Given
        List<String> ids = stableGroupOfTwo();
        String leader = ids.get(0);
        String follower = ids.get(1);

        // When: only the follower heartbeats
        for (int i = 0; i < 4; i++) {
            ctx.advance(SESSION_MS / 4);
            assertThat(heartbeat(follower, 1)).isIn(Errors.NONE, Errors.REBALANCE_IN_PROGRESS);
        }

        // Then
        assertThat(group().hasMember(leader)).isFalse();
        assertThat(group().state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
        assertThat(heartbeat(follower, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(heartbeat(leader, 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);

        // When the survivor rejoins it forms generation 2 alone, as leader
        JoinGroupResponseData rejoined = done(join("client-b", joinRequest(follower)));

        // Then
        assertThat(rejoined.generationId()).isEqualTo(2);
        assertThat(rejoined.leader()).isEqualTo(follower);
        assertThat(rejoined.members()).extracting(JoinGroupResponseData.JoinGroupResponseMember::memberId)
                .containsExactly(follower);
    }

    @Test
    void heartbeatsKeepAMemberAliveBeyondItsSessionTimeout() {
        // Given
        List<String> ids = stableGroupOfTwo();

        // When
        for (int i = 0; i < 10; i++) {
            ctx.advance(SESSION_MS / 2);
            assertThat(heartbeat(ids.get(0), 1)).isEqualTo(Errors.NONE);
            assertThat(heartbeat(ids.get(1), 1)).isEqualTo(Errors.NONE);
        }

        // Then
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);
        assertThat(group().numMembers()).isEqualTo(2);
    }

    @Test
    void membersThatDoNotRejoinWithinTheRebalanceTimeoutAreRemoved() {
        // Given
        List<String> ids = stableGroupOfTwo();
        String leader = ids.get(0);
        String follower = ids.get(1);

        // When: the leader rejoins (forcing a rebalance) and the follower keeps heartbeating but never rejoins
        CompletableFuture<JoinGroupResponseData> rejoin = join("client-a", joinRequest(leader));
        for (int i = 0; i < 10; i++) {
            assertThat(heartbeat(follower, 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
            ctx.advance(REBALANCE_MS / 10);
        }

        // Then
        assertThat(done(rejoin).generationId()).isEqualTo(2);
        assertThat(done(rejoin).members()).extracting(JoinGroupResponseData.JoinGroupResponseMember::memberId)
                .containsExactly(leader);
        assertThat(heartbeat(follower, 2)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void heartbeatAnswersDependOnTheMemberGenerationAndGroupState() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));

        // Then: PreparingRebalance
        assertThat(heartbeat(first, 0)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);

        // When: CompletingRebalance
        ctx.advance(INITIAL_DELAY_MS);

        // Then
        assertThat(heartbeat(first, 1)).isEqualTo(Errors.NONE);
        assertThat(heartbeat(first, 0)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(heartbeat("stranger", 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(heartbeat(first, "unknown-instance", 1)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        HeartbeatRequestData otherGroup = new HeartbeatRequestData().setGroupId("other").setMemberId(first)
                .setGenerationId(1);
        assertThat(Errors.forCode(done(manager.heartbeat(otherGroup, (short) 4)).errorCode()))
                .isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    // ------------------------------------------------------------------------------------------ leave

    @Test
    void leaveGroupV3RemovesMembersWithPerMemberErrorsAndRebalances() {
        // Given
        List<String> ids = stableGroupOfTwo();

        // When
        LeaveGroupRequestData request = new LeaveGroupRequestData().setGroupId(GROUP).setMembers(List.of(
                new LeaveGroupRequestData.MemberIdentity().setMemberId(ids.get(0)),
                new LeaveGroupRequestData.MemberIdentity().setMemberId("stranger")));
        LeaveGroupResponseData response = done(manager.leave(request, (short) 3));

        // Then
        assertThat(response.errorCode()).isZero();
        assertThat(response.members()).extracting(LeaveGroupResponseData.MemberResponse::memberId)
                .containsExactly(ids.get(0), "stranger");
        assertThat(response.members()).extracting(member -> Errors.forCode(member.errorCode()))
                .containsExactly(Errors.NONE, Errors.UNKNOWN_MEMBER_ID);
        assertThat(group().hasMember(ids.get(0))).isFalse();
        assertThat(group().state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
        assertThat(heartbeat(ids.get(1), 1)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void leaveGroupV0ReportsTheMemberErrorAtTheTopLevel() {
        // Given
        List<String> ids = stableGroupOfTwo();

        // When
        LeaveGroupResponseData unknown = done(manager.leave(new LeaveGroupRequestData().setGroupId(GROUP)
                .setMemberId("stranger"), (short) 0));
        LeaveGroupResponseData known = done(manager.leave(new LeaveGroupRequestData().setGroupId(GROUP)
                .setMemberId(ids.get(1)), (short) 0));

        // Then
        assertThat(Errors.forCode(unknown.errorCode())).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(unknown.members()).isEmpty();
        assertThat(known.errorCode()).isZero();
        assertThat(group().hasMember(ids.get(1))).isFalse();
    }

    @Test
    void aGroupWhoseLastMembersLeaveBecomesEmptyAndIsStoredAtTheNextGeneration() {
        // Given
        List<String> ids = stableGroupOfTwo();
        int writesBefore = ctx.allWrites().size();

        // When
        done(manager.leave(new LeaveGroupRequestData().setGroupId(GROUP).setMembers(List.of(
                new LeaveGroupRequestData.MemberIdentity().setMemberId(ids.get(0)),
                new LeaveGroupRequestData.MemberIdentity().setMemberId(ids.get(1)))), (short) 5));

        // Then
        assertThat(group().state()).isEqualTo(ClassicGroupState.EMPTY);
        assertThat(group().generationId()).isEqualTo(2);
        assertThat(ctx.allWrites()).hasSize(writesBefore + 1);
        GroupMetadataValue stored = groupValue(ctx.allWrites().get(writesBefore));
        assertThat(stored.generation()).isEqualTo(2);
        assertThat(stored.members()).isEmpty();
        assertThat(stored.protocol()).isNull();
        assertThat(stored.protocolType()).isEqualTo("consumer");
        assertThat(manager.isEmptyGroup(GROUP)).isTrue();
        assertThat(manager.validateDeleteGroup(GROUP)).isEqualTo(Errors.NONE);
    }

    // ------------------------------------------------------------------------------------- static members

    /** Two static members (instance-a leads) that joined and synced: Stable at generation 1. */
    private List<String> stableStaticGroup() {
        CompletableFuture<JoinGroupResponseData> a = join("client-a", joinRequest("", "instance-a", "range",
                subscription("payments")));
        CompletableFuture<JoinGroupResponseData> b = join("client-b", joinRequest("", "instance-b", "range",
                subscription("payments")));
        ctx.advance(2L * INITIAL_DELAY_MS);
        String idA = done(a).memberId();
        String idB = done(b).memberId();
        assertThat(done(a).leader()).isEqualTo(idA);
        sync(idB, 1, Map.of());
        sync(idA, 1, Map.of(idA, bytes("assignment-a"), idB, bytes("assignment-b")));
        ctx.completeWrites();
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);
        return List.of(idA, idB);
    }

    @Test
    void aRestartedStaticLeaderRejoinsWithoutARebalanceAndTheOldMemberIdIsFenced() {
        // Given
        List<String> ids = stableStaticGroup();
        String oldId = ids.get(0);

        // When
        CompletableFuture<JoinGroupResponseData> rejoin = join("client-a", joinRequest("", "instance-a", "range",
                subscription("payments")));

        // Then: answered once the new member id is stored
        assertThat(rejoin).isNotDone();
        GroupMetadataValue stored = groupValue(ctx.pendingWrites().get(0).records());
        ctx.completeWrites();
        JoinGroupResponseData response = done(rejoin);
        String newId = response.memberId();
        assertThat(error(response)).isEqualTo(Errors.NONE);
        assertThat(newId).startsWith("instance-a-").isNotEqualTo(oldId);
        assertThat(stored.members()).extracting(GroupMetadataValue.MemberMetadata::memberId).contains(newId);
        assertThat(response.generationId()).isEqualTo(1);
        assertThat(response.leader()).isEqualTo(newId);
        assertThat(response.skipAssignment()).isTrue();
        assertThat(response.members()).hasSize(2);
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);
        assertThat(group().generationId()).isEqualTo(1);
        assertThat(done(sync(newId, 1, Map.of())).assignment()).isEqualTo(bytes("assignment-a"));
        assertThat(heartbeat(ids.get(1), "instance-b", 1)).isEqualTo(Errors.NONE);
        assertThat(heartbeat(oldId, "instance-a", 1)).isEqualTo(Errors.FENCED_INSTANCE_ID);
        SyncGroupRequestData oldSync = new SyncGroupRequestData().setGroupId(GROUP).setMemberId(oldId)
                .setGroupInstanceId("instance-a").setGenerationId(1);
        assertThat(Errors.forCode(done(manager.sync(oldSync, (short) 3)).errorCode()))
                .isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(manager.validateOffsetCommit(GROUP, 1, oldId, "instance-a"))
                .isEqualTo(Errors.FENCED_INSTANCE_ID);
    }

    @Test
    void aRestartedStaticFollowerKeepingTheSelectedProtocolGetsTheCurrentGeneration() {
        // Given
        List<String> ids = stableStaticGroup();

        // When
        JoinGroupRequestData changed = joinRequest("", "instance-b", "range", subscription("payments"));
        changed.protocols().add(0, new JoinGroupRequestData.JoinGroupRequestProtocol().setName("cooperative")
                .setMetadata(subscription("payments")));
        CompletableFuture<JoinGroupResponseData> rejoin = join("client-b", changed);

        // Then: "range" stays the only common protocol, so no rebalance is needed either
        ctx.completeWrites();
        assertThat(done(rejoin).generationId()).isEqualTo(1);
        assertThat(done(rejoin).skipAssignment()).isFalse();
        assertThat(done(rejoin).leader()).isEqualTo(ids.get(0));
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);
    }

    @Test
    void aStaticMemberRejoiningDuringCompletingRebalanceForcesANewRebalance() {
        // Given
        CompletableFuture<JoinGroupResponseData> a = join("client-a", joinRequest("", "instance-a", "range",
                subscription("payments")));
        ctx.advance(INITIAL_DELAY_MS);
        String oldId = done(a).memberId();
        CompletableFuture<SyncGroupResponseData> parkedSync = sync(oldId, 1, Map.of(oldId, bytes("x")));

        // When
        CompletableFuture<JoinGroupResponseData> rejoin = join("client-a", joinRequest("", "instance-a", "range",
                subscription("payments")));

        // Then: the old incarnation is fenced and the new one forms generation 2
        assertThat(Errors.forCode(done(parkedSync).errorCode())).isEqualTo(Errors.FENCED_INSTANCE_ID);
        assertThat(done(rejoin).generationId()).isEqualTo(2);
        assertThat(done(rejoin).memberId()).isNotEqualTo(oldId);
    }

    @Test
    void aStaticMemberCanBeRemovedByItsInstanceIdAlone() {
        // Given
        stableStaticGroup();

        // When
        LeaveGroupResponseData response = done(manager.leave(new LeaveGroupRequestData().setGroupId(GROUP)
                .setMembers(List.of(new LeaveGroupRequestData.MemberIdentity().setGroupInstanceId("instance-b"),
                        new LeaveGroupRequestData.MemberIdentity().setGroupInstanceId("instance-z"))),
                (short) 4));

        // Then
        assertThat(response.members()).extracting(member -> Errors.forCode(member.errorCode()))
                .containsExactly(Errors.NONE, Errors.UNKNOWN_MEMBER_ID);
        assertThat(group().hasStaticMember("instance-b")).isFalse();
        assertThat(group().state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
    }

    @Test
    void aRestartedStaticMemberThatChangesTheSelectedProtocolTriggersARebalance() {
        // Given
        CompletableFuture<JoinGroupResponseData> a = join("client-a", joinRequest("", "instance-a", "range",
                subscription("payments")));
        ctx.advance(INITIAL_DELAY_MS);
        String oldId = done(a).memberId();
        sync(oldId, 1, Map.of(oldId, bytes("x")));
        ctx.completeWrites();

        // When
        JoinGroupRequestData changed = joinRequest("", "instance-a", "range", subscription("payments"));
        changed.protocols().add(0, new JoinGroupRequestData.JoinGroupRequestProtocol().setName("cooperative")
                .setMetadata(subscription("payments")));
        CompletableFuture<JoinGroupResponseData> rejoin = join("client-a", changed);

        // Then
        assertThat(done(rejoin).generationId()).isEqualTo(2);
        assertThat(done(rejoin).protocolName()).isEqualTo("cooperative");
        assertThat(group().state()).isEqualTo(ClassicGroupState.COMPLETING_REBALANCE);
    }

    // ----------------------------------------------------------------------------- describe and list

    @Test
    void describeReportsMembersWithMetadataOnlyWhenStable() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));

        // When
        DescribeGroupsResponseData.DescribedGroup preparing = manager.describe(GROUP, (short) 5);

        // Then
        assertThat(preparing.groupState()).isEqualTo("PreparingRebalance");
        assertThat(preparing.protocolType()).isEqualTo("consumer");
        assertThat(preparing.protocolData()).isEmpty();
        assertThat(preparing.members()).hasSize(1);
        assertThat(preparing.members().get(0).memberMetadata()).isEmpty();
        assertThat(preparing.members().get(0).clientId()).isEqualTo("client-a");
        assertThat(preparing.members().get(0).clientHost()).isEqualTo("/127.0.0.1");

        // When
        ctx.advance(INITIAL_DELAY_MS);
        sync(first, 1, Map.of(first, bytes("mine")));
        ctx.completeWrites();
        DescribeGroupsResponseData.DescribedGroup stable = manager.describe(GROUP, (short) 5);

        // Then
        assertThat(stable.groupState()).isEqualTo("Stable");
        assertThat(stable.protocolData()).isEqualTo("range");
        assertThat(stable.members().get(0).memberId()).isEqualTo(first);
        assertThat(stable.members().get(0).memberMetadata()).isEqualTo(subscription("payments"));
        assertThat(stable.members().get(0).memberAssignment()).isEqualTo(bytes("mine"));
        assertThat(stable.authorizedOperations()).isEqualTo(Integer.MIN_VALUE);
        assertThat(stable.errorCode()).isZero();
    }

    @Test
    void describeAnUnknownGroupAnswersDeadAndFromV6GroupIdNotFound() {
        // When
        DescribeGroupsResponseData.DescribedGroup v5 = manager.describe("ghost", (short) 5);
        DescribeGroupsResponseData.DescribedGroup v6 = manager.describe("ghost", (short) 6);

        // Then
        assertThat(v5.groupState()).isEqualTo("Dead");
        assertThat(v5.errorCode()).isZero();
        assertThat(v5.errorMessage()).isNull();
        assertThat(v5.protocolType()).isEmpty();
        assertThat(v5.members()).isEmpty();
        assertThat(v6.groupState()).isEqualTo("Dead");
        assertThat(Errors.forCode(v6.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(v6.errorMessage()).contains("ghost");
    }

    @Test
    void listFiltersByStateCaseInsensitivelyAndByTypeClassic() {
        // Given
        stableGroupOfTwo();
        manager.validateOffsetCommit("simple", -1, "", null);

        // When
        List<ListGroupsResponseData.ListedGroup> all = manager.list(Set.of(), Set.of());
        List<ListGroupsResponseData.ListedGroup> stable = manager.list(Set.of("STABLE"), Set.of());
        List<ListGroupsResponseData.ListedGroup> empty = manager.list(Set.of("empty"), Set.of("Classic"));
        List<ListGroupsResponseData.ListedGroup> consumerType = manager.list(Set.of(), Set.of("consumer"));

        // Then
        assertThat(all).extracting(ListGroupsResponseData.ListedGroup::groupId)
                .containsExactlyInAnyOrder(GROUP, "simple");
        assertThat(stable).hasSize(1);
        assertThat(stable.get(0).groupId()).isEqualTo(GROUP);
        assertThat(stable.get(0).groupState()).isEqualTo("Stable");
        assertThat(stable.get(0).protocolType()).isEqualTo("consumer");
        assertThat(stable.get(0).groupType()).isEqualTo("classic");
        assertThat(empty).extracting(ListGroupsResponseData.ListedGroup::groupId).containsExactly("simple");
        assertThat(empty.get(0).protocolType()).isEmpty();
        assertThat(consumerType).isEmpty();
    }

    // ------------------------------------------------------------------------------- offset-side checks

    @Test
    void validateOffsetCommitFollowsKafkasRules() {
        // Unknown group: a commit without generation creates a simple group, with a generation it is refused
        assertThat(manager.validateOffsetCommit("simple", -1, "", null)).isEqualTo(Errors.NONE);
        assertThat(manager.group("simple")).map(ClassicGroup::state).contains(ClassicGroupState.EMPTY);
        assertThat(ctx.allWrites()).isEmpty();
        assertThat(manager.validateOffsetCommit("unknown", 3, "m", null)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(manager.validateOffsetCommit("simple", -1, "", null)).isEqualTo(Errors.NONE);
        assertThat(manager.validateOffsetCommit("simple", 0, "m", null)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);

        // A group in CompletingRebalance
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));
        assertThat(manager.validateOffsetCommit(GROUP, -1, "", null)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        ctx.advance(INITIAL_DELAY_MS);
        assertThat(manager.validateOffsetCommit(GROUP, 1, first, null)).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(manager.validateOffsetCommit(GROUP, 0, first, null)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(manager.validateOffsetCommit(GROUP, 1, "stranger", null)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
        assertThat(manager.validateOffsetCommit(GROUP, -1, "", null)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);

        // Stable
        sync(first, 1, Map.of(first, bytes("a")));
        ctx.completeWrites();
        assertThat(manager.validateOffsetCommit(GROUP, 1, first, null)).isEqualTo(Errors.NONE);
        assertThat(manager.validateOffsetCommit(GROUP, 2, first, null)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(manager.validateOffsetCommit(GROUP, -1, first, null)).isEqualTo(Errors.ILLEGAL_GENERATION);
    }

    @Test
    void aCommitFromAMemberCountsAsItsHeartbeat() {
        // Given
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));
        ctx.advance(INITIAL_DELAY_MS);
        sync(first, 1, Map.of(first, bytes("a")));
        ctx.completeWrites();

        // When: the member commits but never heartbeats
        for (int i = 0; i < 5; i++) {
            ctx.advance(SESSION_MS / 2);
            assertThat(manager.validateOffsetCommit(GROUP, 1, first, null)).isEqualTo(Errors.NONE);
        }

        // Then
        assertThat(group().hasMember(first)).isTrue();
        ctx.advance(SESSION_MS);
        assertThat(group().hasMember(first)).isFalse();
    }

    @Test
    void validateOffsetDeleteRefusesTopicsTheConsumersSubscribeTo() {
        // Given
        stableGroupOfTwo();
        manager.validateOffsetCommit("simple", -1, "", null);

        // Then
        assertThat(manager.validateOffsetDelete(GROUP, "payments")).isEqualTo(Errors.GROUP_SUBSCRIBED_TO_TOPIC);
        assertThat(manager.validateOffsetDelete(GROUP, "audit")).isEqualTo(Errors.NONE);
        assertThat(manager.validateOffsetDelete("simple", "payments")).isEqualTo(Errors.NONE);
        assertThat(manager.validateOffsetDelete("ghost", "payments")).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(manager.validateDeleteGroup(GROUP)).isEqualTo(Errors.NON_EMPTY_GROUP);
        assertThat(manager.validateDeleteGroup("ghost")).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(manager.validateOffsetFetch("ghost")).isEqualTo(Errors.NONE);
    }

    @Test
    void aNonEmptyGroupOfAnotherProtocolTypeCannotDeleteOffsets() {
        // Given
        JoinGroupRequestData connect = joinRequest("").setProtocolType("connect");
        String id = done(join("worker", connect)).memberId();
        join("worker", joinRequest(id).setProtocolType("connect"));

        // Then
        assertThat(manager.validateOffsetDelete(GROUP, "payments")).isEqualTo(Errors.NON_EMPTY_GROUP);
    }

    @Test
    void deleteGroupForgetsTheGroupAndReturnsItsTombstone() {
        // Given
        manager.validateOffsetCommit("simple", -1, "", null);

        // When
        List<CoordinatorRecord> records = manager.deleteGroup("simple");

        // Then
        assertThat(records).containsExactly(GroupRecords.groupTombstone("simple"));
        assertThat(manager.group("simple")).isEmpty();
        assertThat(manager.groupIds()).doesNotContain("simple");
    }

    // ------------------------------------------------------------------------------ loading, unloading

    @Test
    void aReplayedGroupIsStableAndItsMembersCanHeartbeatUntilTheirSessionsRunOut() {
        // Given
        List<String> ids = stableGroupOfTwo();
        GroupMetadataValue stored = groupValue(ctx.allWrites().get(ctx.allWrites().size() - 1));
        ClassicGroupTestShardContext otherCtx = new ClassicGroupTestShardContext(ctx.nowMs());
        ClassicGroupManager loaded = new ClassicGroupManager(otherCtx, GroupConfig.defaults(), new GroupCounters());

        // When
        loaded.replay(GROUP, stored);
        loaded.replay("deleted", stored);
        loaded.replay("deleted", null);
        loaded.onLoaded();

        // Then
        ClassicGroup group = loaded.group(GROUP).orElseThrow();
        assertThat(loaded.groupIds()).containsExactly(GROUP);
        assertThat(group.state()).isEqualTo(ClassicGroupState.STABLE);
        assertThat(group.generationId()).isEqualTo(1);
        assertThat(group.leaderId()).isEqualTo(ids.get(0));
        assertThat(group.protocolName()).isEqualTo("range");
        assertThat(group.subscribedTopics()).contains(Set.of("payments"));
        HeartbeatRequestData beat = new HeartbeatRequestData().setGroupId(GROUP).setMemberId(ids.get(1))
                .setGenerationId(1);
        assertThat(done(loaded.heartbeat(beat, (short) 4)).errorCode()).isZero();
        SyncGroupRequestData resync = new SyncGroupRequestData().setGroupId(GROUP).setMemberId(ids.get(1))
                .setGenerationId(1);
        assertThat(done(loaded.sync(resync, (short) 4)).assignment()).isEqualTo(bytes("assignment-b"));

        // When only the second member keeps heartbeating
        for (int i = 0; i < 4; i++) {
            otherCtx.advance(SESSION_MS / 4);
            done(loaded.heartbeat(beat, (short) 4));
        }

        // Then the silent loaded member expired
        assertThat(group.hasMember(ids.get(0))).isFalse();
        assertThat(group.state()).isEqualTo(ClassicGroupState.PREPARING_REBALANCE);
    }

    @Test
    void aRecordWithoutMembersIsReplayedAsAnEmptyGroup() {
        // Given
        GroupMetadataValue value = new GroupMetadataValue().setProtocolType("consumer").setGeneration(4)
                .setProtocol(null).setLeader(null).setCurrentStateTimestamp(1234L).setMembers(new ArrayList<>());

        // When
        manager.replay(GROUP, value);
        manager.onLoaded();

        // Then
        assertThat(group().state()).isEqualTo(ClassicGroupState.EMPTY);
        assertThat(group().generationId()).isEqualTo(4);
        assertThat(group().stateTimestampMs()).isEqualTo(1234L);
        assertThat(manager.isEmptyGroup(GROUP)).isTrue();
        assertThat(ctx.timerCount()).isZero();
    }

    @Test
    void unloadAnswersParkedCallsWithNotCoordinatorAndStopsTheTimers() {
        // Given
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> parked = join("client-a", joinRequest(first));
        assertThat(ctx.timerCount()).isPositive();

        // When
        manager.unload();

        // Then
        assertThat(error(done(parked))).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(ctx.timerCount()).isZero();
        assertThat(manager.groupIds()).isEmpty();
        ctx.completeWrites();
        assertThat(manager.groupIds()).isEmpty();
    }

    // ------------------------------------------------------------------------------------- more join flows

    @Test
    void aRebalanceWaitsForAMemberThatWasAskedForItsMemberId() {
        // Given
        List<String> ids = stableGroupOfTwo();
        String third = memberIdFor("client-c");
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);

        // When
        CompletableFuture<JoinGroupResponseData> a = join("client-a", joinRequest(ids.get(0)));
        CompletableFuture<JoinGroupResponseData> b = join("client-b", joinRequest(ids.get(1)));

        // Then: the pending member has not joined yet
        assertThat(a).isNotDone();
        assertThat(b).isNotDone();

        // When
        CompletableFuture<JoinGroupResponseData> c = join("client-c", joinRequest(third));

        // Then
        assertThat(done(a).generationId()).isEqualTo(2);
        assertThat(done(a).members()).extracting(JoinGroupResponseData.JoinGroupResponseMember::memberId)
                .containsExactly(ids.get(0), ids.get(1), third);
        assertThat(done(c).generationId()).isEqualTo(2);
        assertThat(done(c).leader()).isEqualTo(ids.get(0));
    }

    @Test
    void aPendingMemberThatNeverComesBackStopsHoldingUpTheRebalanceWhenItsSessionEnds() {
        // Given
        List<String> ids = stableGroupOfTwo();
        memberIdFor("client-c");
        CompletableFuture<JoinGroupResponseData> a = join("client-a", joinRequest(ids.get(0)));
        CompletableFuture<JoinGroupResponseData> b = join("client-b", joinRequest(ids.get(1)));

        // When
        ctx.advance(SESSION_MS - 1);
        assertThat(a).isNotDone();
        ctx.advance(1);

        // Then
        assertThat(done(a).generationId()).isEqualTo(2);
        assertThat(done(a).members()).hasSize(2);
        assertThat(done(b).generationId()).isEqualTo(2);
    }

    @Test
    void aResentJoinGroupAnswersTheEarlierCallSoThatItDoesNotHang() {
        // Given
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> earlier = join("client-a", joinRequest(first));

        // When
        CompletableFuture<JoinGroupResponseData> later = join("client-a", joinRequest(first));

        // Then
        assertThat(error(done(earlier))).isEqualTo(Errors.REBALANCE_IN_PROGRESS);
        assertThat(later).isNotDone();
        ctx.advance(INITIAL_DELAY_MS);
        assertThat(done(later).generationId()).isEqualTo(1);
    }

    @Test
    void joinGroupV0UsesTheSessionTimeoutAsRebalanceTimeout() {
        // When
        CompletableFuture<JoinGroupResponseData> joined = manager.join(new ClientInfo("ancient", "/h"),
                joinRequest("").setRebalanceTimeoutMs(-1), (short) 0);
        ctx.advance(INITIAL_DELAY_MS);

        // Then
        String memberId = done(joined).memberId();
        assertThat(group().member(memberId).rebalanceTimeoutMs()).isEqualTo(SESSION_MS);
        assertThat(done(joined).protocolName()).isEqualTo("range");
    }

    @Test
    void deletingAGroupAnswersItsParkedCalls() {
        // Given
        String first = memberIdFor("client-a");
        CompletableFuture<JoinGroupResponseData> parked = join("client-a", joinRequest(first));

        // When
        List<CoordinatorRecord> records = manager.deleteGroup(GROUP);

        // Then
        assertThat(records).containsExactly(GroupRecords.groupTombstone(GROUP));
        assertThat(error(done(parked))).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(manager.group(GROUP)).isEmpty();
        assertThat(ctx.timerCount()).isZero();
        assertThat(heartbeat(first, 0)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aNewGroupIsWrittenAsAnEmptyGenerationZero() {
        // When
        memberIdFor("client-a");

        // Then
        assertThat(ctx.allWrites()).hasSize(1);
        GroupMetadataValue stored = groupValue(ctx.allWrites().get(0));
        assertThat(stored.generation()).isZero();
        assertThat(stored.members()).isEmpty();
        assertThat(stored.protocolType()).isEmpty();
        assertThat(manager.list(Set.of("Empty"), Set.of())).extracting(ListGroupsResponseData.ListedGroup::groupId)
                .containsExactly(GROUP);
    }

    @Test
    void offsetCommitV9ToAnUnknownGroupGetsGroupIdNotFoundAndTransactionalCommitsAreLenient() {
        // Then: unknown group
        assertThat(manager.validateOffsetCommit("ghost", 2, "m", null, (short) 9))
                .isEqualTo(Errors.GROUP_ID_NOT_FOUND);
        assertThat(manager.validateOffsetCommit("ghost", 2, "m", null, (short) 8))
                .isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(manager.validateTxnOffsetCommit("ghost", 2, "m", null)).isEqualTo(Errors.ILLEGAL_GENERATION);

        // Given a group in CompletingRebalance
        String first = memberIdFor("client-a");
        join("client-a", joinRequest(first));
        ctx.advance(INITIAL_DELAY_MS);

        // Then
        assertThat(manager.validateTxnOffsetCommit(GROUP, -1, "", null)).isEqualTo(Errors.NONE);
        assertThat(manager.validateTxnOffsetCommit(GROUP, 1, first, null)).isEqualTo(Errors.NONE);
        assertThat(manager.validateTxnOffsetCommit(GROUP, 0, first, null)).isEqualTo(Errors.ILLEGAL_GENERATION);
        assertThat(manager.validateOffsetCommit(GROUP, 1, first, null, (short) 9))
                .isEqualTo(Errors.REBALANCE_IN_PROGRESS);
    }

    @Test
    void withoutInitialDelayALoneMemberIsAnsweredOnTheNextTimerTick() {
        // Given
        ClassicGroupManager noDelay = new ClassicGroupManager(ctx, new GroupConfig(6_000, 300_000, 0, 10,
                7L * 24 * 3600 * 1000, 600_000L, 4096), new GroupCounters());
        ClientInfo client = new ClientInfo("client-a", "/127.0.0.1");
        String id = done(noDelay.join(client, joinRequest(""), JOIN_V)).memberId();

        // When
        CompletableFuture<JoinGroupResponseData> joined = noDelay.join(client, joinRequest(id), JOIN_V);
        ctx.advance(0);

        // Then
        assertThat(done(joined).generationId()).isEqualTo(1);
    }

    @Test
    void aStaticRejoinWhoseWriteFailsKeepsTheOldMemberId() {
        // Given
        List<String> ids = stableStaticGroup();
        CompletableFuture<JoinGroupResponseData> rejoin = join("client-a", joinRequest("", "instance-a", "range",
                subscription("payments")));

        // When
        ctx.failOldestWrite(Errors.NOT_LEADER_OR_FOLLOWER.exception());

        // Then
        assertThat(error(done(rejoin))).isEqualTo(Errors.NOT_COORDINATOR);
        assertThat(done(rejoin).memberId()).isEmpty();
        assertThat(group().staticMemberId("instance-a")).isEqualTo(ids.get(0));
        assertThat(group().leaderId()).isEqualTo(ids.get(0));
        assertThat(heartbeat(ids.get(0), "instance-a", 1)).isEqualTo(Errors.NONE);
        assertThat(group().state()).isEqualTo(ClassicGroupState.STABLE);
    }

    @Test
    void groupRequestsWithAnEmptyGroupIdGetInvalidGroupId() {
        // When
        SyncGroupResponseData sync = done(manager.sync(new SyncGroupRequestData().setGroupId("").setMemberId("m")
                .setGenerationId(1), (short) 3));
        HeartbeatResponseData beat = done(manager.heartbeat(new HeartbeatRequestData().setGroupId("")
                .setMemberId("m").setGenerationId(1), (short) 4));
        LeaveGroupResponseData leave = done(manager.leave(new LeaveGroupRequestData().setGroupId("")
                .setMemberId("m"), (short) 2));

        // Then
        assertThat(Errors.forCode(sync.errorCode())).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(Errors.forCode(beat.errorCode())).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(Errors.forCode(leave.errorCode())).isEqualTo(Errors.INVALID_GROUP_ID);
        assertThat(manager.groupIds()).isEmpty();
    }
}
