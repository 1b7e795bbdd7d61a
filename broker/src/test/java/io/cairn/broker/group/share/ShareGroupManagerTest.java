package io.cairn.broker.group.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.ClassicGroupTestShardContext;
import io.cairn.broker.group.consumer.ConsumerGroupTopics;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.ShareGroupDescribeResponseData;
import io.cairn.wire.message.ShareGroupHeartbeatRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The share group state machine of one shard, by Kafka 4.1's rules (GroupMetadataManager.shareGroupHeartbeat). */
class ShareGroupManagerTest {

    private static final Uuid TOPIC = new Uuid(11L, 22L);
    private static final ConsumerGroupTopics TOPICS = new ConsumerGroupTopics() {
        @Override
        public Uuid topicId(String name) {
            return name.equals("t") ? TOPIC : null;
        }

        @Override
        public String topicName(Uuid topicId) {
            return topicId.equals(TOPIC) ? "t" : null;
        }

        @Override
        public int numPartitions(Uuid topicId) {
            return topicId.equals(TOPIC) ? 3 : -1;
        }
    };

    private final ClassicGroupTestShardContext ctx = new ClassicGroupTestShardContext(1_000);
    private final ShareGroupManager manager = new ShareGroupManager(ctx, ShareGroupConfig.defaults(), () -> TOPICS,
        id -> id.equals("classic"));

    private ShareGroupManager.HeartbeatResult heartbeatWritten(String group, String member, int epoch,
                                                               List<String> topics) {
        var future = manager.heartbeat("client", "/127.0.0.1", new ShareGroupHeartbeatRequestData()
            .setGroupId(group).setMemberId(member).setMemberEpoch(epoch).setSubscribedTopicNames(topics));
        ctx.completeWrites();
        return future.join();
    }

    private void initialize(String group, Set<Integer> partitions) {
        manager.initialized(group, Map.of(TOPIC, partitions));
        ctx.completeWrites();
    }

    private static Set<Integer> partitions(ShareGroupHeartbeatResponseData response) {
        return response.assignment().topicPartitions().stream().flatMap(tp -> tp.partitions().stream())
            .collect(Collectors.toSet());
    }

    @Test
    void aFirstMemberJoinsThenGetsThePartitionsOnceTheirStateIsInitialized() {
        // When: a member joins, subscribing to t
        ShareGroupManager.HeartbeatResult joined = heartbeatWritten("g", "m1", 0, List.of("t"));

        // Then: epoch 1, nothing assigned yet (no share-partition is initialized), t's 3 partitions to initialize
        // at state epoch 1 from the offset share.auto.offset.reset picks (-1)
        assertThat(joined.response().errorCode()).isZero();
        assertThat(joined.response().memberEpoch()).isEqualTo(1);
        assertThat(joined.response().heartbeatIntervalMs()).isEqualTo(5_000);
        assertThat(joined.response().assignment().topicPartitions()).isEmpty();
        InitializeShareGroupStateRequestData init = joined.initialize().orElseThrow();
        assertThat(init.groupId()).isEqualTo("g");
        assertThat(init.topics()).singleElement().satisfies(t -> {
            assertThat(t.topicId()).isEqualTo(TOPIC);
            assertThat(t.partitions()).extracting(p -> p.partition() + "@" + p.stateEpoch() + "/" + p.startOffset())
                .containsExactly("0@1/-1", "1@1/-1", "2@1/-1");
        });
        assertThat(ctx.allWrites().get(0)).extracting(CoordinatorRecord::keyVersion)
            .containsExactly((short) 10, (short) 11, (short) 13, (short) 12, (short) 14, (short) 15);
        assertThat(manager.states("g").initializing()).containsOnlyKeys(TOPIC);

        // When: the share coordinator initialized them, and the member heartbeats again (no initialization again)
        initialize("g", Set.of(0, 1, 2));
        ShareGroupManager.HeartbeatResult assigned = heartbeatWritten("g", "m1", 1, null);

        // Then: the epoch is bumped and every partition assigned to the only member
        assertThat(assigned.response().memberEpoch()).isEqualTo(2);
        assertThat(partitions(assigned.response())).containsExactlyInAnyOrder(0, 1, 2);
        assertThat(assigned.initialize()).isEmpty();
        assertThat(manager.states("g").initialized()).containsOnlyKeys(TOPIC);
        assertThat(manager.states("g").initializing()).isEmpty();
    }

    @Test
    void asecondMemberSharesThePartitionsAndALeavingMemberBumpsTheEpoch() {
        heartbeatWritten("g", "m1", 0, List.of("t"));
        initialize("g", Set.of(0, 1, 2));
        heartbeatWritten("g", "m1", 1, null);

        // When
        ShareGroupManager.HeartbeatResult second = heartbeatWritten("g", "m2", 0, List.of("t"));
        ShareGroupManager.HeartbeatResult first = heartbeatWritten("g", "m1", 2, null);

        // Then: epoch 3; 3 partitions over 2 members, at most 2 each and each partition assigned
        assertThat(second.response().memberEpoch()).isEqualTo(3);
        assertThat(first.response().memberEpoch()).isEqualTo(3);
        Set<Integer> union = new java.util.HashSet<>(partitions(second.response()));
        union.addAll(partitions(first.response()));
        assertThat(union).containsExactlyInAnyOrder(0, 1, 2);
        assertThat(partitions(second.response()).size()).isBetween(1, 2);
        ShareGroupDescribeResponseData.DescribedGroup described = manager.describe("g");
        assertThat(described.groupState()).isEqualTo("Stable");
        assertThat(described.groupEpoch()).isEqualTo(3);
        assertThat(described.assignmentEpoch()).isEqualTo(3);
        assertThat(described.assignorName()).isEqualTo("simple");
        assertThat(described.members()).extracting(ShareGroupDescribeResponseData.Member::memberId)
            .containsExactlyInAnyOrder("m1", "m2");

        // When: m2 leaves
        ShareGroupManager.HeartbeatResult left = heartbeatWritten("g", "m2", -1, null);

        // Then
        assertThat(left.response().memberEpoch()).isEqualTo(-1);
        assertThat(manager.describe("g").groupEpoch()).isEqualTo(4);
        assertThat(manager.describe("g").members()).extracting(ShareGroupDescribeResponseData.Member::memberId)
            .containsExactly("m1");
    }

    @Test
    void kafkasErrors() {
        heartbeatWritten("g", "m1", 0, List.of("t"));

        assertThat(heartbeatWritten("g", "m1", 5, null).response().errorCode())
            .isEqualTo(Errors.FENCED_MEMBER_EPOCH.code());
        assertThat(heartbeatWritten("g", "zz", 1, null).response().errorMessage())
            .isEqualTo("Member zz is not a member of group g.");
        assertThat(heartbeatWritten("g", "m2", 0, null).response().errorMessage())
            .isEqualTo("SubscribedTopicNames must be set in first request.");
        assertThat(heartbeatWritten("g", "", 0, List.of("t")).response().errorMessage())
            .isEqualTo("MemberId can't be empty.");
        assertThat(heartbeatWritten("g", "m1", -2, null).response().errorMessage())
            .isEqualTo("MemberEpoch is invalid.");
        ShareGroupHeartbeatResponseData unknown = heartbeatWritten("nope", "m1", 1, null).response();
        assertThat(unknown.errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(unknown.errorMessage()).isEqualTo("Share group nope not found.");
        assertThat(heartbeatWritten("nope", "m1", -1, null).response().errorMessage())
            .isEqualTo("Group nope not found.");
        assertThat(heartbeatWritten("classic", "m1", 0, List.of("t")).response().errorMessage())
            .isEqualTo("Group classic is not a share group.");
        assertThat(manager.describe("nope").errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(manager.describe("classic").errorMessage()).isEqualTo("Group classic is not a share group.");
        // A failed heartbeat changed nothing
        assertThat(manager.describe("g").groupEpoch()).isEqualTo(1);
        assertThat(manager.group("nope")).isEmpty();
    }

    @Test
    void aMemberThatStopsHeartbeatingIsRemovedAfterTheSessionTimeout() {
        heartbeatWritten("g", "m1", 0, List.of("t"));

        // When
        ctx.advance(45_000);
        ctx.completeWrites();

        // Then
        assertThat(manager.describe("g").members()).isEmpty();
        assertThat(manager.describe("g").groupState()).isEqualTo("Empty");
        assertThat(manager.describe("g").groupEpoch()).isEqualTo(2);
        assertThat(manager.validateDeleteGroup("g")).isEqualTo(Errors.NONE);
    }

    @Test
    void theGroupsShareSessionTimeoutAndHeartbeatIntervalOverrideTheBrokers() {
        // Given a group whose configs set share.session.timeout.ms 50000 and share.heartbeat.interval.ms 6000
        ConsumerGroupTopics withConfigs = new ConsumerGroupTopics() {
            @Override
            public Uuid topicId(String name) {
                return TOPICS.topicId(name);
            }

            @Override
            public String topicName(Uuid topicId) {
                return TOPICS.topicName(topicId);
            }

            @Override
            public int numPartitions(Uuid topicId) {
                return TOPICS.numPartitions(topicId);
            }

            @Override
            public Map<String, String> groupConfigs(String groupId) {
                return groupId.equals("cfg") ? Map.of("share.session.timeout.ms", "50000",
                    "share.heartbeat.interval.ms", "6000") : Map.of();
            }
        };
        ShareGroupManager configured = new ShareGroupManager(ctx, ShareGroupConfig.defaults(), () -> withConfigs,
            id -> false);

        // When a member of it and one of another group join
        var cfg = configured.heartbeat("client", "/127.0.0.1", new ShareGroupHeartbeatRequestData()
            .setGroupId("cfg").setMemberId("m1").setMemberEpoch(0).setSubscribedTopicNames(List.of("t")));
        var plain = configured.heartbeat("client", "/127.0.0.1", new ShareGroupHeartbeatRequestData()
            .setGroupId("plain").setMemberId("m2").setMemberEpoch(0).setSubscribedTopicNames(List.of("t")));
        ctx.completeWrites();

        // Then the group's member is told its interval, the other the broker's
        assertThat(cfg.join().response().heartbeatIntervalMs()).isEqualTo(6_000);
        assertThat(plain.join().response().heartbeatIntervalMs()).isEqualTo(5_000);

        // And after the broker's 45 s only the other group's member is gone; the group's own 50 s removes its member
        ctx.advance(45_000);
        ctx.completeWrites();
        assertThat(configured.describe("plain").members()).isEmpty();
        assertThat(configured.describe("cfg").members()).hasSize(1);
        ctx.advance(5_000);
        ctx.completeWrites();
        assertThat(configured.describe("cfg").members()).isEmpty();
    }

    @Test
    void aFailedWriteLeavesTheGroupAsItWas() {
        var future = manager.heartbeat("client", "/127.0.0.1", new ShareGroupHeartbeatRequestData()
            .setGroupId("g").setMemberId("m1").setMemberEpoch(0).setSubscribedTopicNames(List.of("t")));
        ctx.failOldestWrite(Errors.NOT_COORDINATOR.exception());

        assertThat(future.join().response().errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
        assertThat(manager.group("g")).isEmpty();
        assertThat(manager.states("g")).isEqualTo(SharePartitionStates.EMPTY);
    }

    @Test
    void aLoadingShardRebuildsTheGroupsFromTheirRecords() {
        heartbeatWritten("g", "m1", 0, List.of("t"));
        initialize("g", Set.of(0, 1, 2));
        heartbeatWritten("g", "m1", 1, null);
        heartbeatWritten("g", "m2", 0, List.of("t"));

        // When
        ShareGroupManager loaded = new ShareGroupManager(new ClassicGroupTestShardContext(1_000),
            ShareGroupConfig.defaults(), () -> TOPICS, id -> false);
        ctx.allWrites().forEach(records -> records.forEach(loaded::replay));
        loaded.onLoaded();

        // Then
        assertThat(loaded.describe("g")).isEqualTo(manager.describe("g"));
        assertThat(loaded.states("g").initialized()).containsOnlyKeys(TOPIC);
        assertThat(loaded.list(Set.of(), Set.of("share"))).extracting(g -> g.groupId() + "/" + g.groupType() + "/"
            + g.protocolType() + "/" + g.groupState()).containsExactly("g/share/share/Stable");
        assertThat(loaded.list(Set.of(), Set.of("consumer"))).isEmpty();
    }
}
