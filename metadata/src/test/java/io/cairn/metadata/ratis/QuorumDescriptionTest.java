package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.MetadataConfig;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import io.cairn.wire.message.DescribeQuorumResponseData.PartitionData;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QuorumDescriptionTest {

    private static final MetadataConfig CONFIG = MetadataConfig.from(Map.of("process.roles", "broker,controller",
            "node.id", "1", "controller.quorum.voters", "1@h1:9093,2@h2:9093,3@h3:9093",
            "listeners", "PLAINTEXT://:9092,CONTROLLER://:9093", "controller.listener.names", "CONTROLLER",
            "log.dirs", "/tmp/unused"));

    private final QuorumDescription description = new QuorumDescription();

    @Test
    void theLeaderDescribesItsTermCommitAndFollowersFromTheRaftState() {
        // Given: follower 2 at the log end, follower 3 behind, broker-only node 4 an observer at the end
        QuorumDescription.RaftState state = new QuorumDescription.RaftState(1, 7, 41, 42, List.of(1, 2, 3),
                List.of(4), Map.of(2, new QuorumDescription.Follower(2, 42, 30),
                        3, new QuorumDescription.Follower(3, 30, 2000), 4, new QuorumDescription.Follower(4, 42, 5)));

        // When
        DescribeQuorumResponseData response = description.describe(request("__cluster_metadata", 0), state, CONFIG,
                10_000);

        // Then
        PartitionData p = response.topics().get(0).partitions().get(0);
        assertThat(response.topics().get(0).topicName()).isEqualTo("__cluster_metadata");
        assertThat(p.errorCode()).isZero();
        assertThat(p.leaderId()).isEqualTo(1);
        assertThat(p.leaderEpoch()).isEqualTo(7);
        assertThat(p.highWatermark()).isEqualTo(42);
        assertThat(p.currentVoters()).extracting(r -> r.replicaId(), r -> r.logEndOffset(),
                r -> r.lastFetchTimestamp(), r -> r.lastCaughtUpTimestamp()).containsExactly(
                org.assertj.core.api.Assertions.tuple(1, 42L, -1L, 10_000L),
                org.assertj.core.api.Assertions.tuple(2, 42L, 9_970L, 9_970L),
                org.assertj.core.api.Assertions.tuple(3, 30L, 8_000L, -1L));
        assertThat(p.observers()).extracting(r -> r.replicaId(), r -> r.logEndOffset()).containsExactly(
                org.assertj.core.api.Assertions.tuple(4, 42L));
        assertThat(response.nodes()).extracting(n -> n.nodeId()).containsExactly(1, 2, 3);
        assertThat(response.nodes().iterator().next().listeners()).extracting(l -> l.name(), l -> l.host(),
                l -> l.port()).containsExactly(org.assertj.core.api.Assertions.tuple("CONTROLLER", "h1", 9093));
    }

    @Test
    void aFollowerThatFallsBehindKeepsTheLastTimeItWasSeenCaughtUp() {
        // Given
        description.describe(request("__cluster_metadata", 0), state(42, 0), CONFIG, 1_000);

        // When
        DescribeQuorumResponseData later = description.describe(request("__cluster_metadata", 0), state(20, 100),
                CONFIG, 5_000);

        // Then
        DescribeQuorumResponseData.ReplicaState follower = later.topics().get(0).partitions().get(0).currentVoters()
                .get(1);
        assertThat(follower.logEndOffset()).isEqualTo(20);
        assertThat(follower.lastFetchTimestamp()).isEqualTo(4_900);
        assertThat(follower.lastCaughtUpTimestamp()).isEqualTo(1_000);
    }

    @Test
    void anotherPartitionIsUnknownAndANodeThatDoesNotLeadSaysSo() {
        // When
        DescribeQuorumResponseData other = description.describe(request("__cluster_metadata", 1), state(42, 0),
                CONFIG, 0);
        DescribeQuorumResponseData notLeader = description.describe(request("__cluster_metadata", 0), null, CONFIG,
                0);

        // Then
        assertThat(other.errorCode()).isZero();
        assertThat(other.topics().get(0).partitions().get(0).partitionIndex()).isEqualTo(1);
        assertThat(other.topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(notLeader.topics().get(0).partitions().get(0).errorCode())
                .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
    }

    private static QuorumDescription.RaftState state(long followerNext, long elapsedMs) {
        return new QuorumDescription.RaftState(1, 3, 41, 42, List.of(1, 2), List.of(),
                Map.of(2, new QuorumDescription.Follower(2, followerNext, elapsedMs)));
    }

    private static DescribeQuorumRequestData request(String topic, int partition) {
        DescribeQuorumRequestData request = new DescribeQuorumRequestData();
        DescribeQuorumRequestData.TopicData data = new DescribeQuorumRequestData.TopicData().setTopicName(topic);
        data.partitions().add(new DescribeQuorumRequestData.PartitionData().setPartitionIndex(partition));
        request.topics().add(data);
        return request;
    }
}
