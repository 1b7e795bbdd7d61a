package io.cairn.broker.group.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.ClassicGroupTestShardContext;
import io.cairn.broker.group.assignor.RangeAssignor;
import io.cairn.broker.group.assignor.UniformAssignor;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerGroupDescribeResponseData;
import io.cairn.wire.message.ConsumerGroupHeartbeatRequestData;
import io.cairn.wire.message.ConsumerGroupHeartbeatResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class ConsumerGroupManagerTest {

    private static final Uuid FOO = new Uuid(7, 7);
    private static final short V1 = 1;
    private static final int REBALANCE_TIMEOUT_MS = 30_000;

    private final ClassicGroupTestShardContext ctx = new ClassicGroupTestShardContext(1_000);
    private final Map<String, Integer> partitionCounts = new HashMap<>(Map.of("foo", 4));
    private final Set<String> classicGroups = new HashSet<>();
    private final Map<String, Map<String, String>> groupConfigs = new HashMap<>();
    private long imageVersion = 10;
    private long lastTopicCreationVersion = 10;
    private ConsumerGroupManager manager = manager(ConsumerGroupConfig.defaults());

    private ConsumerGroupManager manager(ConsumerGroupConfig config) {
        ConsumerGroupTopics topics = new ConsumerGroupTopics() {
            @Override
            public Uuid topicId(String name) {
                return partitionCounts.containsKey(name) ? idOf(name) : null;
            }

            @Override
            public String topicName(Uuid topicId) {
                return partitionCounts.keySet().stream().filter(name -> idOf(name).equals(topicId)).findFirst()
                    .orElse(null);
            }

            @Override
            public int numPartitions(Uuid topicId) {
                String name = topicName(topicId);
                return name == null ? -1 : partitionCounts.get(name);
            }

            @Override
            public java.util.Collection<String> topicNames() {
                return Set.copyOf(partitionCounts.keySet());
            }

            @Override
            public long version() {
                return imageVersion;
            }

            @Override
            public Map<String, String> groupConfigs(String groupId) {
                return groupConfigs.getOrDefault(groupId, Map.of());
            }

            @Override
            public long lastTopicCreationVersion() {
                return lastTopicCreationVersion;
            }
        };
        return new ConsumerGroupManager(ctx, config, List.of(new UniformAssignor(), new RangeAssignor()),
            () -> topics, classicGroups::contains);
    }

    private static Uuid idOf(String topic) {
        return topic.equals("foo") ? FOO : new Uuid(topic.hashCode(), 8);
    }

    /** The partitions of the response's assignment, as "topic-partition" names. */
    private static Set<String> assignedNames(ConsumerGroupHeartbeatResponseData response, Map<String, Integer> topics) {
        Set<String> names = new HashSet<>();
        response.assignment().topicPartitions().forEach(tp -> topics.keySet().stream()
            .filter(name -> idOf(name).equals(tp.topicId()))
            .forEach(name -> tp.partitions().forEach(p -> names.add(name + "-" + p))));
        return names;
    }

    private static ConsumerGroupHeartbeatRequestData join(String memberId) {
        return new ConsumerGroupHeartbeatRequestData().setGroupId("g").setMemberId(memberId).setMemberEpoch(0)
            .setRebalanceTimeoutMs(REBALANCE_TIMEOUT_MS).setSubscribedTopicNames(List.of("foo"))
            .setTopicPartitions(new ArrayList<>());
    }

    private static ConsumerGroupHeartbeatRequestData beat(String memberId, int epoch, Set<Integer> owned) {
        List<ConsumerGroupHeartbeatRequestData.TopicPartitions> topicPartitions = new ArrayList<>();
        if (!owned.isEmpty()) {
            topicPartitions.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(FOO)
                .setPartitions(new ArrayList<>(owned)));
        }
        return new ConsumerGroupHeartbeatRequestData().setGroupId("g").setMemberId(memberId).setMemberEpoch(epoch)
            .setRebalanceTimeoutMs(-1).setTopicPartitions(topicPartitions);
    }

    private ConsumerGroupHeartbeatResponseData send(ConsumerGroupHeartbeatRequestData request) {
        CompletableFuture<ConsumerGroupHeartbeatResponseData> response = manager.heartbeat("client", "/127.0.0.1",
            request, V1);
        ctx.completeWrites();
        return response.getNow(null);
    }

    private static Errors error(ConsumerGroupHeartbeatResponseData response) {
        return Errors.forCode(response.errorCode());
    }

    private static Set<Integer> assigned(ConsumerGroupHeartbeatResponseData response) {
        Set<Integer> partitions = new HashSet<>();
        response.assignment().topicPartitions().forEach(tp -> {
            assertThat(tp.topicId()).isEqualTo(FOO);
            partitions.addAll(tp.partitions());
        });
        return partitions;
    }

    @Test
    void theFirstMemberShouldGetEveryPartitionAtEpochOne() {
        // When
        ConsumerGroupHeartbeatResponseData response = send(join("a"));

        // Then
        assertThat(error(response)).isEqualTo(Errors.NONE);
        assertThat(response.memberId()).isEqualTo("a");
        assertThat(response.memberEpoch()).isEqualTo(1);
        assertThat(response.heartbeatIntervalMs()).isEqualTo(5_000);
        assertThat(assigned(response)).containsExactlyInAnyOrder(0, 1, 2, 3);
        assertThat(manager.group("g").orElseThrow().state()).isEqualTo(ConsumerGroupState.STABLE);
    }

    @Test
    void aSecondMemberShouldGetItsShareOnlyAfterTheFirstRevokedIt() {
        // Given
        send(join("a"));

        // When
        ConsumerGroupHeartbeatResponseData bJoined = send(join("b"));
        ConsumerGroupHeartbeatResponseData aRevoking = send(beat("a", 1, Set.of(0, 1, 2, 3)));
        Set<Integer> aKeeps = assigned(aRevoking);
        ConsumerGroupHeartbeatResponseData aRevoked = send(beat("a", 1, aKeeps));
        ConsumerGroupHeartbeatResponseData bAssigned = send(beat("b", bJoined.memberEpoch(), Set.of()));

        // Then
        assertThat(bJoined.memberEpoch()).isEqualTo(2);
        assertThat(assigned(bJoined)).isEmpty();
        assertThat(aRevoking.memberEpoch()).isEqualTo(1);
        assertThat(aKeeps).hasSize(2);
        assertThat(aRevoked.memberEpoch()).isEqualTo(2);
        assertThat(aRevoked.assignment()).isNull();
        assertThat(assigned(bAssigned)).hasSize(2).doesNotContainAnyElementsOf(aKeeps);
        assertThat(manager.group("g").orElseThrow().state()).isEqualTo(ConsumerGroupState.STABLE);
    }

    @Test
    void epochsTheCoordinatorDoesNotKnowShouldBeFenced() {
        // Given
        send(join("a"));

        // When
        ConsumerGroupHeartbeatResponseData ahead = send(beat("a", 5, Set.of()));
        ConsumerGroupHeartbeatResponseData unknown = send(beat("x", 1, Set.of()));

        // Then
        assertThat(error(ahead)).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
        assertThat(error(unknown)).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void thePreviousEpochShouldBeAcceptedWhenTheMemberOwnsOnlyWhatItIsAssigned() {
        // Given: a's response with epoch 2 is lost after b joined and a revoked.
        send(join("a"));
        send(join("b"));
        Set<Integer> aKeeps = assigned(send(beat("a", 1, Set.of(0, 1, 2, 3))));
        send(beat("a", 1, aKeeps));

        // When
        ConsumerGroupHeartbeatResponseData retried = send(beat("a", 1, aKeeps));
        ConsumerGroupHeartbeatResponseData stale = send(beat("a", 1, Set.of(0, 1, 2, 3)));

        // Then
        assertThat(error(retried)).isEqualTo(Errors.NONE);
        assertThat(retried.memberEpoch()).isEqualTo(2);
        assertThat(error(stale)).isEqualTo(Errors.FENCED_MEMBER_EPOCH);
    }

    @Test
    void malformedHeartbeatsShouldBeRefusedAsKafkaRefusesThem() {
        // When
        List<Errors> errors = List.of(
            error(send(join("a").setSubscribedTopicNames(null))),
            error(send(join("a").setRebalanceTimeoutMs(-1))),
            error(send(join(""))),
            error(send(join("a").setSubscribedTopicRegex("foo.(*"))),
            error(send(join("a").setServerAssignor("sticky"))),
            error(send(join("a").setMemberEpoch(-3))),
            error(send(beat("a", 1, Set.of()))));

        // Then
        assertThat(errors).containsExactly(Errors.INVALID_REQUEST, Errors.INVALID_REQUEST, Errors.INVALID_REQUEST,
            Errors.INVALID_REGULAR_EXPRESSION, Errors.UNSUPPORTED_ASSIGNOR, Errors.INVALID_REQUEST,
            Errors.GROUP_ID_NOT_FOUND);
        assertThat(manager.group("g")).isEmpty();
    }

    @Test
    void versionZeroShouldGenerateTheMemberId() {
        // When
        CompletableFuture<ConsumerGroupHeartbeatResponseData> future = manager.heartbeat("client", "/127.0.0.1",
            join(""), (short) 0);
        ctx.completeWrites();
        ConsumerGroupHeartbeatResponseData response = future.getNow(null);

        // Then
        assertThat(error(response)).isEqualTo(Errors.NONE);
        assertThat(response.memberId()).hasSize(22);
    }

    @Test
    void theGroupsConsumerSessionTimeoutAndHeartbeatIntervalOverrideTheBrokers() {
        // Given a group whose configs set consumer.session.timeout.ms 55000 and consumer.heartbeat.interval.ms 7000
        groupConfigs.put("g", Map.of("consumer.session.timeout.ms", "55000", "consumer.heartbeat.interval.ms", "7000"));

        // When a member joins
        ConsumerGroupHeartbeatResponseData joined = send(join("a"));

        // Then it is told the group's interval, and outlives the broker's 45 s session but not the group's 55 s
        assertThat(joined.heartbeatIntervalMs()).isEqualTo(7_000);
        ctx.advance(50_000);
        assertThat(manager.group("g").orElseThrow().hasMember("a")).isTrue();
        ctx.advance(5_000);
        assertThat(manager.group("g").orElseThrow().hasMember("a")).isFalse();

        // And a group without configs keeps the broker's values
        groupConfigs.clear();
        assertThat(send(join("b")).heartbeatIntervalMs()).isEqualTo(5_000);
    }

    @Test
    void aMemberThatStopsHeartbeatingShouldBeFencedAfterTheSessionTimeout() {
        // Given
        send(join("a"));
        send(join("b"));
        ctx.advance(40_000);
        send(beat("a", 1, Set.of(0, 1, 2, 3)));

        // When
        ctx.advance(10_000);

        // Then
        ConsumerGroup group = manager.group("g").orElseThrow();
        assertThat(group.hasMember("b")).isFalse();
        assertThat(group.groupEpoch()).isEqualTo(3);
        assertThat(error(send(beat("b", 2, Set.of())))).isEqualTo(Errors.UNKNOWN_MEMBER_ID);
    }

    @Test
    void aMemberThatDoesNotRevokeWithinItsRebalanceTimeoutShouldBeFenced() {
        // Given
        send(join("a"));
        send(join("b"));
        send(beat("a", 1, Set.of(0, 1, 2, 3)));

        // When
        ctx.advance(REBALANCE_TIMEOUT_MS);

        // Then
        ConsumerGroup group = manager.group("g").orElseThrow();
        assertThat(group.hasMember("a")).isFalse();
        assertThat(group.partitionEpoch(FOO, 0)).isEqualTo(MemberReconciler.NO_EPOCH);
        assertThat(assigned(send(beat("b", 2, Set.of())))).containsExactlyInAnyOrder(0, 1, 2, 3);
    }

    @Test
    void aLeavingMemberShouldReleaseItsPartitions() {
        // Given
        send(join("a"));
        send(join("b"));

        // When
        ConsumerGroupHeartbeatResponseData left = send(beat("a", -1, Set.of()));

        // Then
        assertThat(left.memberEpoch()).isEqualTo(-1);
        assertThat(assigned(send(beat("b", 2, Set.of())))).containsExactlyInAnyOrder(0, 1, 2, 3);
        assertThat(manager.group("g").orElseThrow().groupEpoch()).isEqualTo(3);
    }

    @Test
    void aStaticMemberShouldRejoinWithANewMemberIdWithoutARebalance() {
        // Given
        send(join("a").setInstanceId("i"));
        send(beat("a", -2, Set.of()).setInstanceId("i"));

        // When
        ConsumerGroupHeartbeatResponseData rejoined = send(join("a2").setInstanceId("i"));

        // Then
        ConsumerGroup group = manager.group("g").orElseThrow();
        assertThat(rejoined.memberEpoch()).isEqualTo(1);
        assertThat(assigned(rejoined)).containsExactlyInAnyOrder(0, 1, 2, 3);
        assertThat(group.groupEpoch()).isEqualTo(1);
        assertThat(group.hasMember("a")).isFalse();
    }

    @Test
    void anInstanceIdInUseShouldNotBeTakenOver() {
        // Given
        send(join("a").setInstanceId("i"));

        // When
        ConsumerGroupHeartbeatResponseData response = send(join("a2").setInstanceId("i"));
        ConsumerGroupHeartbeatResponseData impostor = send(beat("a3", 1, Set.of()).setInstanceId("i"));

        // Then
        assertThat(error(response)).isEqualTo(Errors.UNRELEASED_INSTANCE_ID);
        assertThat(error(impostor)).isEqualTo(Errors.FENCED_INSTANCE_ID);
    }

    @Test
    void aClassicGroupIdShouldNotBeAConsumerGroup() {
        // Given
        classicGroups.add("g");

        // When
        ConsumerGroupHeartbeatResponseData response = send(join("a"));

        // Then
        assertThat(error(response)).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
    }

    @Test
    void aFullGroupShouldTurnAwayNewMembers() {
        // Given
        manager = manager(new ConsumerGroupConfig(45_000, 45_000, 60_000, 5_000, 5_000, 15_000, 1,
            List.of("uniform")));
        send(join("a"));

        // When
        ConsumerGroupHeartbeatResponseData response = send(join("b"));

        // Then
        assertThat(error(response)).isEqualTo(Errors.GROUP_MAX_SIZE_REACHED);
    }

    @Test
    void newPartitionsShouldBumpTheGroupEpochAndBeAssigned() {
        // Given
        send(join("a"));
        partitionCounts.put("foo", 6);

        // When
        ConsumerGroupHeartbeatResponseData response = send(beat("a", 1, Set.of(0, 1, 2, 3)));

        // Then
        assertThat(response.memberEpoch()).isEqualTo(2);
        assertThat(assigned(response)).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5);
    }

    @Test
    void theAssignorMembersAskForShouldBeUsed() {
        // Given: range gives member "a" (first by id) partitions 0-1 of 4.
        send(join("b").setServerAssignor("range"));
        send(join("a").setServerAssignor("range"));
        send(beat("b", 1, Set.of(0, 1, 2, 3)));

        // When
        ConsumerGroupHeartbeatResponseData bDone = send(beat("b", 1, Set.of(2, 3)));
        ConsumerGroupHeartbeatResponseData aDone = send(beat("a", 2, Set.of()));

        // Then
        assertThat(bDone.memberEpoch()).isEqualTo(2);
        assertThat(assigned(aDone)).containsExactlyInAnyOrder(0, 1);
    }

    @Test
    void aJoinShouldBeWrittenAsKafkasRecordsBeforeItIsAnswered() {
        // Given
        CompletableFuture<ConsumerGroupHeartbeatResponseData> response = manager.heartbeat("client", "/127.0.0.1",
            join("a"), V1);
        boolean answeredBeforeCommit = response.isDone();

        // When
        ctx.completeWrites();

        // Then
        assertThat(answeredBeforeCommit).isFalse();
        assertThat(response.getNow(null).memberEpoch()).isEqualTo(1);
        assertThat(ctx.allWrites()).hasSize(1);
        assertThat(ctx.allWrites().get(0).stream().map(CoordinatorRecord::keyVersion).toList())
            .containsExactly((short) 5, (short) 3, (short) 7, (short) 6, (short) 8);
    }

    @Test
    void aFailedWriteShouldAnswerTheCoordinatorError() {
        // Given
        CompletableFuture<ConsumerGroupHeartbeatResponseData> response = manager.heartbeat("client", "/127.0.0.1",
            join("a"), V1);

        // When
        ctx.failOldestWrite(Errors.NOT_LEADER_OR_FOLLOWER.exception());

        // Then
        assertThat(error(response.getNow(null))).isEqualTo(Errors.NOT_COORDINATOR);
    }

    @Test
    void aReloadedShardShouldKnowTheGroupFromItsRecords() {
        // Given: a and b share the topic, a left with its partitions revoked, c joined statically
        send(join("a"));
        send(join("b"));
        Set<Integer> aKeeps = assigned(send(beat("a", 1, Set.of(0, 1, 2, 3))));
        send(beat("a", 1, aKeeps));
        Set<Integer> bOwns = assigned(send(beat("b", 2, Set.of())));
        ConsumerGroup before = manager.group("g").orElseThrow();

        // When
        ConsumerGroupManager reloaded = manager(ConsumerGroupConfig.defaults());
        ctx.allWrites().forEach(write -> write.forEach(reloaded::replay));
        reloaded.onLoaded();
        manager = reloaded;

        // Then
        ConsumerGroup after = reloaded.group("g").orElseThrow();
        assertThat(after.groupEpoch()).isEqualTo(before.groupEpoch());
        assertThat(after.targetAssignmentEpoch()).isEqualTo(before.targetAssignmentEpoch());
        assertThat(after.state()).isEqualTo(ConsumerGroupState.STABLE);
        assertThat(after.member("a")).isEqualTo(before.member("a"));
        assertThat(after.member("b")).isEqualTo(before.member("b"));
        assertThat(after.targetAssignment("b")).isEqualTo(before.targetAssignment("b"));
        ConsumerGroupHeartbeatResponseData next = send(beat("b", 2, bOwns));
        assertThat(error(next)).isEqualTo(Errors.NONE);
        assertThat(next.memberEpoch()).isEqualTo(2);
    }

    @Test
    void aLeaveShouldBeReplayedAsTheMembersTombstones() {
        // Given
        send(join("a"));
        send(join("b"));
        send(beat("a", -1, Set.of()));

        // When
        ConsumerGroupManager reloaded = manager(ConsumerGroupConfig.defaults());
        ctx.allWrites().forEach(write -> write.forEach(reloaded::replay));
        reloaded.onLoaded();

        // Then
        ConsumerGroup group = reloaded.group("g").orElseThrow();
        assertThat(group.hasMember("a")).isFalse();
        assertThat(group.groupEpoch()).isEqualTo(3);
        assertThat(group.partitionEpoch(FOO, 0)).isEqualTo(MemberReconciler.NO_EPOCH);
    }

    @Test
    void aReloadedMemberThatStopsHeartbeatingShouldStillBeFenced() {
        // Given
        send(join("a"));
        ConsumerGroupManager reloaded = manager(ConsumerGroupConfig.defaults());
        ctx.allWrites().forEach(write -> write.forEach(reloaded::replay));
        reloaded.onLoaded();

        // When
        ctx.advance(45_000);

        // Then
        assertThat(reloaded.group("g").orElseThrow().hasMember("a")).isFalse();
    }

    @Test
    void describeShouldReportTheGroupAndItsMembersAsKafkaDoes() {
        // Given
        send(join("a"));
        send(join("b"));

        // When
        ConsumerGroupDescribeResponseData.DescribedGroup described = manager.describe("g", (short) 1);
        ConsumerGroupDescribeResponseData.DescribedGroup unknown = manager.describe("nope", (short) 1);

        // Then
        assertThat(described.errorCode()).isZero();
        assertThat(described.groupState()).isEqualTo("Reconciling");
        assertThat(described.groupEpoch()).isEqualTo(2);
        assertThat(described.assignmentEpoch()).isEqualTo(2);
        assertThat(described.assignorName()).isEqualTo("uniform");
        assertThat(described.members()).extracting(ConsumerGroupDescribeResponseData.Member::memberId)
            .containsExactly("a", "b");
        ConsumerGroupDescribeResponseData.Member a = described.members().get(0);
        assertThat(a.memberEpoch()).isEqualTo(1);
        assertThat(a.clientHost()).isEqualTo("/127.0.0.1");
        assertThat(a.memberType()).isEqualTo((byte) 1);
        assertThat(a.assignment().topicPartitions().get(0).topicName()).isEqualTo("foo");
        assertThat(a.assignment().topicPartitions().get(0).partitions()).containsExactly(0, 1, 2, 3);
        assertThat(a.targetAssignment().topicPartitions().get(0).partitions()).hasSize(2);
        assertThat(Errors.forCode(unknown.errorCode())).isEqualTo(Errors.GROUP_ID_NOT_FOUND);
    }

    @Test
    void offsetCommitsAndFetchesShouldCarryTheMembersEpoch() {
        // Given
        send(join("a"));
        ConsumerGroup group = manager.group("g").orElseThrow();
        ConsumerGroup empty = new ConsumerGroup("e");

        // When
        List<Errors> commits = List.of(
            group.validateOffsetCommit("a", 1, false, (short) 9),
            group.validateOffsetCommit("a", 0, false, (short) 9),
            group.validateOffsetCommit("x", 1, false, (short) 9),
            group.validateOffsetCommit("a", 1, false, (short) 8),
            group.validateOffsetCommit("a", 1, true, (short) 4),
            group.validateOffsetCommit(null, -1, false, (short) 9),
            empty.validateOffsetCommit(null, -1, false, (short) 2));
        List<Errors> fetches = List.of(
            group.validateOffsetFetch("a", 1),
            group.validateOffsetFetch("a", 2),
            group.validateOffsetFetch("x", 1),
            group.validateOffsetFetch(null, -1));

        // Then
        assertThat(commits).containsExactly(Errors.NONE, Errors.STALE_MEMBER_EPOCH, Errors.UNKNOWN_MEMBER_ID,
            Errors.UNSUPPORTED_VERSION, Errors.NONE, Errors.UNKNOWN_MEMBER_ID, Errors.NONE);
        assertThat(fetches).containsExactly(Errors.NONE, Errors.STALE_MEMBER_EPOCH, Errors.UNKNOWN_MEMBER_ID,
            Errors.NONE);
        assertThat(group.validateDeleteGroup()).isEqualTo(Errors.NON_EMPTY_GROUP);
        assertThat(empty.validateDeleteGroup()).isEqualTo(Errors.NONE);
    }

    @Test
    void aRegularExpressionShouldBeResolvedAtOnceAndAgainOnceATopicIsCreatedTenSecondsLater() {
        // Given: a member subscribed to "fo.*" (foo matches, bar does not)
        partitionCounts.put("bar", 1);
        ConsumerGroupHeartbeatResponseData joined = send(join("a").setSubscribedTopicNames(List.of())
            .setSubscribedTopicRegex("fo.*"));
        partitionCounts.put("fob", 2);
        imageVersion = 11;
        lastTopicCreationVersion = 11;
        ctx.advance(5_000);
        ConsumerGroupHeartbeatResponseData early = send(beat("a", joined.memberEpoch(), Set.of(0, 1, 2, 3)));

        // When: more than 10 s after the resolution
        ctx.advance(5_001);
        ConsumerGroupHeartbeatResponseData refreshed = send(beat("a", joined.memberEpoch(), Set.of(0, 1, 2, 3)));

        // Then
        assertThat(error(joined)).isEqualTo(Errors.NONE);
        assertThat(assignedNames(joined, partitionCounts)).containsExactlyInAnyOrder("foo-0", "foo-1", "foo-2",
            "foo-3");
        assertThat(early.assignment()).as("no refresh within 10 s").isNull();
        assertThat(refreshed.memberEpoch()).isEqualTo(joined.memberEpoch() + 1);
        assertThat(assignedNames(refreshed, partitionCounts)).containsExactlyInAnyOrder("foo-0", "foo-1", "foo-2",
            "foo-3", "fob-0", "fob-1");
        ConsumerGroup group = manager.group("g").orElseThrow();
        assertThat(group.resolvedRegularExpression("fo.*").topics()).containsExactlyInAnyOrder("foo", "fob");
        assertThat(group.isSubscribedToTopic("fob")).isTrue();
        assertThat(group.isSubscribedToTopic("bar")).isFalse();
        assertThat(ctx.allWrites().get(0)).extracting(CoordinatorRecord::keyVersion)
            .contains(ConsumerGroupRecords.REGULAR_EXPRESSION);
    }

    @Test
    void aFullHeartbeatShouldBeAnsweredWithTheAssignmentWhetherItSubscribesByNameOrByRegularExpression() {
        // Given: two members, one by name and one by regular expression, both reconciled
        ConsumerGroupHeartbeatResponseData byName = send(join("a"));
        ConsumerGroupHeartbeatResponseData byRegex = send(join("b").setSubscribedTopicNames(null)
            .setSubscribedTopicRegex("fo.*"));
        Set<Integer> aKeeps = assigned(send(beat("a", byName.memberEpoch(), Set.of(0, 1, 2, 3))));
        send(beat("a", byName.memberEpoch(), aKeeps));
        int epoch = send(beat("b", byRegex.memberEpoch(), Set.of())).memberEpoch();

        // When: each sends a full heartbeat (every non-optional field), as a client does after a lost response
        ConsumerGroupHeartbeatResponseData nameFull = send(beat("a", epoch, aKeeps)
            .setRebalanceTimeoutMs(REBALANCE_TIMEOUT_MS).setSubscribedTopicNames(List.of("foo")));
        ConsumerGroupHeartbeatResponseData regexFull = send(beat("b", epoch, Set.of())
            .setRebalanceTimeoutMs(REBALANCE_TIMEOUT_MS).setSubscribedTopicRegex("fo.*"));
        ConsumerGroupHeartbeatResponseData regexLight = send(beat("b", epoch, Set.of()));

        // Then: a full heartbeat is answered with the assignment, as Kafka answers it; a light one is not
        assertThat(assigned(nameFull)).isEqualTo(aKeeps);
        assertThat(regexFull.assignment()).isNotNull();
        assertThat(assigned(regexFull)).hasSize(2).doesNotContainAnyElementsOf(aKeeps);
        assertThat(regexLight.assignment()).isNull();
    }

    @Test
    void theLastMemberLeavingARegularExpressionShouldDeleteItsResolution() {
        // Given
        ConsumerGroupHeartbeatResponseData joined = send(join("a").setSubscribedTopicRegex("fo.*"));

        // When
        send(beat("a", joined.memberEpoch(), Set.of(0, 1, 2, 3)).setSubscribedTopicRegex(""));

        // Then
        ConsumerGroup group = manager.group("g").orElseThrow();
        assertThat(group.resolvedRegularExpressions()).isEmpty();
        assertThat(group.member("a").subscribedTopicRegex()).isNull();
        List<CoordinatorRecord> last = ctx.allWrites().get(ctx.allWrites().size() - 1);
        assertThat(last).anySatisfy(record -> {
            assertThat(record.keyVersion()).isEqualTo(ConsumerGroupRecords.REGULAR_EXPRESSION);
            assertThat(record.value()).isNull();
        });
    }

    @Test
    void aChangeWhoseWriteFailsShouldBeRevertedWithTheChangesAfterIt() {
        // Given: a has every partition at epoch 1
        send(join("a"));
        CompletableFuture<ConsumerGroupHeartbeatResponseData> bJoins = manager.heartbeat("client", "/127.0.0.1",
            join("b"), V1);
        CompletableFuture<ConsumerGroupHeartbeatResponseData> cJoins = manager.heartbeat("client", "/127.0.0.1",
            join("c"), V1);

        // When
        ctx.failOldestWrite(new io.cairn.wire.error.NotEnoughReplicasException("no ISR"));
        ctx.completeWrites();

        // Then
        assertThat(error(bJoins.getNow(null))).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        ConsumerGroup group = manager.group("g").orElseThrow();
        assertThat(group.groupEpoch()).isEqualTo(1);
        assertThat(group.targetAssignmentEpoch()).isEqualTo(1);
        assertThat(group.members()).extracting(ConsumerGroupMember::memberId).containsExactly("a");
        assertThat(group.targetAssignment("a").get(FOO)).containsExactlyInAnyOrder(0, 1, 2, 3);
        ConsumerGroupHeartbeatResponseData aStays = send(beat("a", 1, Set.of(0, 1, 2, 3)));
        assertThat(error(aStays)).isEqualTo(Errors.NONE);
        assertThat(aStays.memberEpoch()).isEqualTo(1);
        assertThat(cJoins.getNow(null)).as("c's write succeeded, but its change was made on b's").isNotNull();
    }

    @Test
    void aNewGroupWhoseFirstWriteFailsShouldBeForgotten() {
        // Given
        CompletableFuture<ConsumerGroupHeartbeatResponseData> joins = manager.heartbeat("client", "/127.0.0.1",
            join("a"), V1);

        // When
        ctx.failOldestWrite(new io.cairn.wire.error.NotEnoughReplicasException("no ISR"));

        // Then
        assertThat(error(joins.getNow(null))).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(manager.group("g")).isEmpty();
        assertThat(manager.groupIds()).isEmpty();
    }

    @Test
    void groupsShouldBeListedByStateAndTypeAndAnEmptyOneDeletedWithItsTombstones() {
        // Given
        send(join("a"));
        send(join("a").setGroupId("h").setSubscribedTopicRegex("fo.*"));
        send(beat("a", 1, Set.of(0, 1, 2, 3)).setGroupId("h").setMemberEpoch(-1));

        // When
        List<String> stable = manager.list(Set.of("STABLE"), Set.of()).stream()
            .map(io.cairn.wire.message.ListGroupsResponseData.ListedGroup::groupId).toList();
        List<String> consumer = manager.list(Set.of(), Set.of("Consumer")).stream()
            .map(io.cairn.wire.message.ListGroupsResponseData.ListedGroup::groupId).sorted().toList();
        List<String> classic = manager.list(Set.of(), Set.of("classic")).stream()
            .map(io.cairn.wire.message.ListGroupsResponseData.ListedGroup::groupId).toList();
        List<CoordinatorRecord> tombstones = manager.deleteGroup("h");

        // Then
        assertThat(stable).containsExactly("g");
        assertThat(consumer).containsExactly("g", "h");
        assertThat(classic).isEmpty();
        assertThat(manager.list(Set.of(), Set.of()).get(0).protocolType()).isEqualTo("consumer");
        assertThat(tombstones).as("the leaving member's regular expression went with it")
            .extracting(CoordinatorRecord::keyVersion).containsExactly(
                ConsumerGroupRecords.TARGET_ASSIGNMENT_METADATA, ConsumerGroupRecords.GROUP_METADATA);
        assertThat(tombstones).allSatisfy(record -> assertThat(record.value()).isNull());
        assertThat(manager.group("h")).isEmpty();
    }

    @Test
    void aRegularExpressionShouldBeResolvedAgainAfterTenMinutesWithoutATopicCreated() {
        // Given: "fo.*" resolved to foo and fob, then fob deleted
        partitionCounts.put("fob", 2);
        ConsumerGroupHeartbeatResponseData last = send(join("a").setSubscribedTopicNames(List.of())
            .setSubscribedTopicRegex("fo.*"));
        partitionCounts.remove("fob");
        Set<String> beforeTenMinutes = null;

        // When: the member heartbeats every 40 s, up to 10 min 40 s
        List<ConsumerGroupHeartbeatRequestData.TopicPartitions> owned = new ArrayList<>();
        for (int i = 0; i < 17; i++) {
            // Two heartbeats in a row: the second one acknowledges what the first revoked, as a client does.
            for (int beat = 0; beat < 2; beat++) {
                if (last.assignment() != null) {
                    owned = new ArrayList<>();
                    for (ConsumerGroupHeartbeatResponseData.TopicPartitions tp : last.assignment().topicPartitions()) {
                        owned.add(new ConsumerGroupHeartbeatRequestData.TopicPartitions().setTopicId(tp.topicId())
                            .setPartitions(tp.partitions()));
                    }
                }
                last = send(new ConsumerGroupHeartbeatRequestData().setGroupId("g").setMemberId("a")
                    .setMemberEpoch(last.memberEpoch()).setRebalanceTimeoutMs(-1).setTopicPartitions(owned));
            }
            ctx.advance(40_000);
            if (i == 14) {
                beforeTenMinutes = manager.group("g").orElseThrow().resolvedRegularExpression("fo.*").topics();
            }
        }

        // Then
        assertThat(error(last)).isEqualTo(Errors.NONE);
        assertThat(beforeTenMinutes).as("after 9 min 20 s").containsExactlyInAnyOrder("foo", "fob");
        assertThat(manager.group("g").orElseThrow().resolvedRegularExpression("fo.*").topics())
            .containsExactly("foo");
    }
}
