package io.cairn.compat.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeGroupsRequestData;
import io.cairn.wire.message.DescribeGroupsResponseData;
import io.cairn.wire.message.FindCoordinatorRequestData;
import io.cairn.wire.message.FindCoordinatorResponseData;
import io.cairn.wire.message.ShareGroupDescribeRequestData;
import io.cairn.wire.message.ShareGroupDescribeResponseData;
import io.cairn.wire.message.ShareGroupHeartbeatRequestData;
import io.cairn.wire.message.ShareGroupHeartbeatResponseData;
import io.cairn.wire.protocol.Uuid;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * KIP-932 share groups on the group coordinator, driven raw and through Admin on Cairn and on Kafka 4.1.1, with the
 * same outcomes: ShareGroupHeartbeat and ShareGroupDescribe answer UNSUPPORTED_VERSION until {@code kafka-features
 * upgrade --feature share.version=1}; then a member joins (epoch 1, nothing assigned until the share coordinator has
 * initialized the share-partitions' state, then epoch 2 with every partition), is described (raw, and by
 * Admin.describeShareGroups and listGroups), is refused with Kafka's errors (INVALID_REQUEST, UNKNOWN_MEMBER_ID,
 * FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND for an unknown group and for a classic group's id; the classic DescribeGroups
 * does not describe it), and leaves (epoch -1; the group Empty at epoch 3).
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class ShareGroupHeartbeatIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(15);
    private static final String GROUP = "share-hb-it";
    private static final String TOPIC = "share-hb-topic";
    private static final String CLASSIC = "classic-of-share-it";
    private static final String MEMBER = org.apache.kafka.common.Uuid.randomUuid().toString();
    private static final String SHARE_GROUPS_TOOL = "org.apache.kafka.tools.consumer.group.ShareGroupCommand";

    @KafkaHalfInFaults
    void heartbeatDescribeErrorsAndLeave(BrokerKind kind) throws Exception {
        BrokerProcess broker = kind.start();
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers()));
             RawKafkaClient client = RawKafkaClient.connect(broker)) {
            // Given: a topic of 3 partitions, a classic group (committed offsets) and the coordinator found
            admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short) 1))).all().get(30, TimeUnit.SECONDS);
            Uuid topicId = Uuid.fromString(admin.describeTopics(List.of(TOPIC)).allTopicNames()
                .get(30, TimeUnit.SECONDS).get(TOPIC).topicId().toString());
            admin.alterConsumerGroupOffsets(CLASSIC, Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(0L)))
                .all().get(30, TimeUnit.SECONDS);
            awaitGroupCoordinator(client, GROUP);

            // Then: share groups are off in a new 4.1 cluster
            assertThat(heartbeat(client, MEMBER, 0, List.of(TOPIC)).errorCode())
                .isEqualTo(Errors.UNSUPPORTED_VERSION.code());
            assertThat(describe(client, GROUP).errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());

            // When: kafka-features upgrade --feature share.version=1
            admin.updateFeatures(Map.of("share.version", new FeatureUpdate((short) 1,
                FeatureUpdate.UpgradeType.UPGRADE)), new UpdateFeaturesOptions()).all().get(30, TimeUnit.SECONDS);
            Awaitility.await().atMost(30, TimeUnit.SECONDS).until(() ->
                heartbeat(client, MEMBER, 0, null).errorCode() != Errors.UNSUPPORTED_VERSION.code());

            // Then: Kafka's request checks and group errors
            ShareGroupHeartbeatResponseData noTopics = heartbeat(client, MEMBER, 0, null);
            assertThat(noTopics.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
            assertThat(noTopics.errorMessage()).isEqualTo("SubscribedTopicNames must be set in first request.");
            assertThat(heartbeat(client, "", 0, List.of(TOPIC)).errorMessage()).isEqualTo("MemberId can't be empty.");
            assertThat(heartbeat(client, MEMBER, -2, null).errorMessage()).isEqualTo("MemberEpoch is invalid.");
            ShareGroupHeartbeatResponseData unknownGroup = heartbeat(client, MEMBER, 1, null);
            assertThat(unknownGroup.errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
            assertThat(unknownGroup.errorMessage()).isEqualTo("Share group " + GROUP + " not found.");
            ShareGroupHeartbeatResponseData classic = client.sendAndReceive(new ShareGroupHeartbeatRequestData()
                .setGroupId(CLASSIC).setMemberId(MEMBER).setMemberEpoch(0).setSubscribedTopicNames(List.of(TOPIC)),
                (short) 1, TIMEOUT);
            assertThat(classic.errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
            assertThat(classic.errorMessage()).isEqualTo("Group " + CLASSIC + " is not a share group.");

            // When: a member joins
            ShareGroupHeartbeatResponseData joined = heartbeat(client, MEMBER, 0, List.of(TOPIC));

            // Then: epoch 1 and no partition yet: their share-group state is initialized after the answer
            assertThat(joined.errorCode()).isZero();
            assertThat(joined.memberId()).isEqualTo(MEMBER);
            assertThat(joined.memberEpoch()).isEqualTo(1);
            assertThat(joined.heartbeatIntervalMs()).isEqualTo(5_000);
            assertThat(joined.assignment().topicPartitions()).isEmpty();

            // When: it heartbeats until it is assigned
            AtomicReference<ShareGroupHeartbeatResponseData> last = new AtomicReference<>(joined);
            Awaitility.await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(300)).until(() -> {
                ShareGroupHeartbeatResponseData next = heartbeat(client, MEMBER, last.get().memberEpoch(), null);
                assertThat(next.errorCode()).isZero();
                last.set(next);
                return next.assignment() != null && !next.assignment().topicPartitions().isEmpty();
            });

            // Then: epoch 2, every partition
            assertThat(last.get().memberEpoch()).isEqualTo(2);
            assertThat(last.get().assignment().topicPartitions()).singleElement().satisfies(tp -> {
                assertThat(tp.topicId()).isEqualTo(topicId);
                assertThat(tp.partitions()).containsExactly(0, 1, 2);
            });

            // And: an unknown member and a wrong epoch are refused
            ShareGroupHeartbeatResponseData stranger = heartbeat(client, "stranger", 1, null);
            assertThat(stranger.errorCode()).isEqualTo(Errors.UNKNOWN_MEMBER_ID.code());
            assertThat(stranger.errorMessage()).isEqualTo("Member stranger is not a member of group " + GROUP + ".");
            assertThat(heartbeat(client, MEMBER, 7, null).errorCode()).isEqualTo(Errors.FENCED_MEMBER_EPOCH.code());

            // And: ShareGroupDescribe
            ShareGroupDescribeResponseData.DescribedGroup described = describe(client, GROUP);
            assertThat(described.errorCode()).isZero();
            assertThat(List.of(described.groupState(), described.groupEpoch(), described.assignmentEpoch(),
                described.assignorName())).containsExactly("Stable", 2, 2, "simple");
            assertThat(described.members()).singleElement().satisfies(member -> {
                assertThat(member.memberId()).isEqualTo(MEMBER);
                assertThat(member.memberEpoch()).isEqualTo(2);
                assertThat(member.clientId()).isEqualTo("cairn-raw-client");
                assertThat(member.clientHost()).isEqualTo("/127.0.0.1");
                assertThat(member.subscribedTopicNames()).containsExactly(TOPIC);
                assertThat(member.assignment().topicPartitions()).singleElement().satisfies(tp -> {
                    assertThat(tp.topicName()).isEqualTo(TOPIC);
                    assertThat(tp.partitions()).containsExactly(0, 1, 2);
                });
            });
            assertThat(describe(client, "no-such-share-group").errorMessage())
                .isEqualTo("Group no-such-share-group not found.");
            assertThat(describe(client, CLASSIC).errorMessage()).isEqualTo("Group " + CLASSIC
                + " is not a share group.");

            // And: Admin sees it as a share group
            ShareGroupDescription description = admin.describeShareGroups(List.of(GROUP)).describedGroups()
                .get(GROUP).get(30, TimeUnit.SECONDS);
            assertThat(description.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(description.groupEpoch()).isEqualTo(2);
            assertThat(description.members()).singleElement().satisfies(m -> {
                Set<Integer> partitions = new TreeSet<>();
                m.assignment().topicPartitions().forEach(tp -> partitions.add(tp.partition()));
                assertThat(partitions).containsExactly(0, 1, 2);
            });
            List<GroupListing> shares = new ArrayList<>(admin.listGroups(new ListGroupsOptions()
                .withTypes(Set.of(GroupType.SHARE))).all().get(30, TimeUnit.SECONDS));
            assertThat(shares).extracting(GroupListing::groupId).containsExactly(GROUP);
            assertThat(shares.get(0).type()).contains(GroupType.SHARE);
            assertThat(shares.get(0).protocol()).isEqualTo("share");

            // And: kafka-share-groups --describe, the real CLI
            JavaTool.Result members = KafkaDistribution.tool(SHARE_GROUPS_TOOL).args("--bootstrap-server",
                broker.bootstrapServers(), "--describe", "--group", GROUP, "--members").timeout(Duration.ofSeconds(60))
                .build().run();
            JavaTool.Result state = KafkaDistribution.tool(SHARE_GROUPS_TOOL).args("--bootstrap-server",
                broker.bootstrapServers(), "--describe", "--group", GROUP, "--state").timeout(Duration.ofSeconds(60))
                .build().run();
            assertThat(members.exitCode()).as("%s", members).isZero();
            assertThat(members.stdout().lines().filter(line -> line.startsWith(GROUP + " ")).toList()).as("%s", members)
                .singleElement().satisfies(line -> assertThat(line.split("\\s+")).contains(MEMBER,
                    "cairn-raw-client", "/127.0.0.1", "3"));
            assertThat(state.exitCode()).as("%s", state).isZero();
            assertThat(state.stdout().lines().filter(line -> line.startsWith(GROUP + " ")).toList()).as("%s", state)
                .singleElement().satisfies(line -> assertThat(line.split("\\s+")).endsWith("(1)", "Stable", "1"));

            // And: the classic DescribeGroups does not describe a share group
            DescribeGroupsResponseData classicView = client.sendAndReceive(new DescribeGroupsRequestData()
                .setGroups(List.of(GROUP)), (short) 6, TIMEOUT);
            assertThat(classicView.groups()).singleElement().satisfies(g -> {
                assertThat(g.errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
                assertThat(g.groupState()).isEqualTo("Dead");
                assertThat(g.errorMessage()).isEqualTo("Group " + GROUP + " is not a classic group.");
            });

            // When: the member leaves
            ShareGroupHeartbeatResponseData left = heartbeat(client, MEMBER, -1, null);

            // Then
            assertThat(left.errorCode()).isZero();
            assertThat(left.memberEpoch()).isEqualTo(-1);
            ShareGroupDescribeResponseData.DescribedGroup empty = describe(client, GROUP);
            assertThat(List.of(empty.groupState(), empty.groupEpoch())).containsExactly("Empty", 3);
            assertThat(empty.members()).isEmpty();
        } finally {
            broker.close();
        }
    }

    private static ShareGroupHeartbeatResponseData heartbeat(RawKafkaClient client, String memberId, int epoch,
                                                             List<String> topics) {
        return client.sendAndReceive(new ShareGroupHeartbeatRequestData().setGroupId(GROUP).setMemberId(memberId)
            .setMemberEpoch(epoch).setSubscribedTopicNames(topics), (short) 1, TIMEOUT);
    }

    private static ShareGroupDescribeResponseData.DescribedGroup describe(RawKafkaClient client, String groupId) {
        ShareGroupDescribeResponseData response = client.sendAndReceive(new ShareGroupDescribeRequestData()
            .setGroupIds(List.of(groupId)), (short) 1, TIMEOUT);
        assertThat(response.groups()).hasSize(1);
        return response.groups().get(0);
    }

    /** Until the group's coordinator is this broker (the first lookup creates __consumer_offsets). */
    private static void awaitGroupCoordinator(RawKafkaClient client, String group) {
        Awaitility.await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(300)).until(() -> {
            FindCoordinatorResponseData found = client.sendAndReceive(new FindCoordinatorRequestData()
                .setKeyType((byte) 0).setCoordinatorKeys(List.of(group)), (short) 6, TIMEOUT);
            return found.coordinators().get(0).errorCode() == Errors.NONE.code();
        });
    }
}
