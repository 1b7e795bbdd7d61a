package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DescribeQuorum (KIP-595, KIP-836, KIP-853) as the admin client, {@code kafka-metadata-quorum} and a raw client see
 * it, the same on Cairn and the reference Kafka: the leader, its epoch and high watermark, the voters with their log
 * end offsets and the voters' controller endpoints; on three nodes, every voter caught up and a new leader in a
 * later epoch, with a high watermark not below the old one once it committed in its epoch, after the leader is
 * killed; version 0 answered without the v2 fields; a request naming another partition gets
 * UNKNOWN_TOPIC_OR_PARTITION.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class DescribeQuorumIT {

    private static final String TOOL = "org.apache.kafka.tools.MetadataQuorumCommand";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aSingleCombinedNodeIsTheLeaderAndOnlyVoter(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        try (Admin admin = GroupClients.admin(broker)) {
            // When
            QuorumInfo quorum = admin.describeMetadataQuorum().quorumInfo().get(30, TimeUnit.SECONDS);
            JavaTool.Result status = tool(broker.bootstrapServers(), "describe", "--status");
            JavaTool.Result replication = tool(broker.bootstrapServers(), "describe", "--replication");

            // Then
            assertThat(quorum.leaderId()).isEqualTo(1);
            assertThat(quorum.leaderEpoch()).isPositive();
            assertThat(quorum.highWatermark()).isPositive();
            assertThat(quorum.voters()).singleElement().satisfies(voter -> {
                assertThat(voter.replicaId()).isEqualTo(1);
                assertThat(voter.logEndOffset()).isGreaterThanOrEqualTo(quorum.highWatermark());
            });
            assertThat(quorum.observers()).isEmpty();
            assertThat(quorum.nodes()).containsOnlyKeys(1);
            assertThat(quorum.nodes().get(1).endpoints()).singleElement()
                    .satisfies(endpoint -> assertThat(endpoint.port()).isPositive());
            assertThat(status.exitCode()).as("%s", status).isZero();
            assertThat(status.stdout()).containsPattern("(?m)^LeaderId:\\s+1$")
                    .containsPattern("(?m)^LeaderEpoch:\\s+\\d+$").containsPattern("(?m)^HighWatermark:\\s+\\d+$")
                    .containsPattern("(?m)^MaxFollowerLag:\\s+0$")
                    .containsPattern("(?m)^CurrentVoters:\\s+\\[\\{\"id\": 1,")
                    .containsPattern("(?m)^CurrentObservers:\\s+\\[\\]$");
            assertThat(replication.exitCode()).as("%s", replication).isZero();
            assertThat(replication.stdout()).containsPattern("(?m)^NodeId\\s+DirectoryId\\s+LogEndOffset\\s+Lag\\s+"
                    + "LastFetchTimestamp\\s+LastCaughtUpTimestamp\\s+Status\\s*$")
                    .containsPattern("(?m)^1\\s+\\S+\\s+\\d+\\s+0\\s+.*Leader\\s*$");
        }
    }

    @Tag("faults")
    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void threeVotersCatchUpAndAKilledLeaderIsReplacedInALaterEpoch(BrokerKind kind) throws Exception {
        // Given
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of())) {
            cluster.start();
            try (Admin admin = admin(cluster.bootstrapServers())) {
                QuorumInfo before = awaitCaughtUp(admin, 3);

                // When
                cluster.node(before.leaderId()).kill();

                // Then
                QuorumInfo after = await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                        .ignoreExceptions().until(() -> admin.describeMetadataQuorum().quorumInfo()
                                .get(10, TimeUnit.SECONDS), q -> q.leaderId() != before.leaderId()
                                && q.leaderId() > 0 && q.highWatermark() >= before.highWatermark());
                assertThat(after.leaderEpoch()).isGreaterThan(before.leaderEpoch());
                assertThat(after.voters()).extracting(QuorumInfo.ReplicaState::replicaId)
                        .containsExactlyInAnyOrder(1, 2, 3);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void version0IsAnsweredAndARequestForAnotherPartitionIsUnknown(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        DescribeQuorumRequestData request = new DescribeQuorumRequestData();
        DescribeQuorumRequestData.TopicData topic = new DescribeQuorumRequestData.TopicData()
                .setTopicName("__cluster_metadata");
        topic.partitions().add(new DescribeQuorumRequestData.PartitionData().setPartitionIndex(3));
        request.topics().add(topic);
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            // When
            DescribeQuorumResponseData response = client.sendAndReceive(request, (short) 2, TIMEOUT);
            DescribeQuorumResponseData v0 = client.sendAndReceive(new DescribeQuorumRequestData().setTopics(List.of(
                    new DescribeQuorumRequestData.TopicData().setTopicName("__cluster_metadata").setPartitions(
                            List.of(new DescribeQuorumRequestData.PartitionData())))), (short) 0, TIMEOUT);

            // Then
            assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(response.topics()).singleElement().satisfies(t -> assertThat(t.partitions()).singleElement()
                    .satisfies(p -> {
                        assertThat(p.partitionIndex()).isEqualTo(3);
                        assertThat(p.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                    }));
            assertThat(v0.topics()).singleElement().satisfies(t -> assertThat(t.partitions()).singleElement()
                    .satisfies(p -> {
                        assertThat(p.errorCode()).isEqualTo(Errors.NONE.code());
                        assertThat(p.leaderId()).isEqualTo(1);
                        assertThat(p.currentVoters()).extracting(r -> r.replicaId()).containsExactly(1);
                    }));
        }
    }

    private static QuorumInfo awaitCaughtUp(Admin admin, int voters) {
        return await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).ignoreExceptions()
                .until(() -> admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS), q -> {
                    long leaderEnd = q.voters().stream().filter(v -> v.replicaId() == q.leaderId())
                            .mapToLong(QuorumInfo.ReplicaState::logEndOffset).findFirst().orElse(-1);
                    return q.voters().size() == voters && q.voters().stream().allMatch(v -> v.logEndOffset() > 0
                            && v.logEndOffset() >= q.highWatermark() - 100 && v.logEndOffset() <= leaderEnd);
                });
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return Admin.create(props);
    }

    private static JavaTool.Result tool(String bootstrap, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", bootstrap));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(TOOL).args(all).timeout(Duration.ofSeconds(90)).build().run();
    }
}
