package io.cairn.metadata.ratis;

import io.cairn.metadata.MetadataConfig;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import io.cairn.wire.message.DescribeQuorumResponseData.Listener;
import io.cairn.wire.message.DescribeQuorumResponseData.Node;
import io.cairn.wire.message.DescribeQuorumResponseData.PartitionData;
import io.cairn.wire.message.DescribeQuorumResponseData.ReplicaState;
import io.cairn.wire.message.DescribeQuorumResponseData.TopicData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * DescribeQuorum as KRaft answers it, computed by the active controller from its Raft (Apache Ratis) state: the
 * metadata log is Kafka's {@code __cluster_metadata} partition 0, the leader epoch is the Raft term, the high
 * watermark is one past the last committed log index, and each replica's log end offset is the next log index the
 * leader knows it needs (the leader's own next index for itself). Voters are the Raft group's voting members,
 * observers its listeners (broker-only nodes); a voter's directory id and endpoint are those its Raft configuration
 * entry carries (KIP-853's voter key; ZERO for the static {@code controller.quorum.voters}). Timestamps follow the
 * schema: the leader reports no fetch time and
 * "now" as caught up; a follower's fetch time is the leader's clock at its last answered Raft call, and its
 * caught-up time the last fetch time at which this leader saw it at the log end (Raft log entries carry no append
 * time, so this stands in for Kafka's append time of the offset fetched), -1 until it has been seen there.
 *
 * <p>Thread-safety: thread-safe; the caught-up times live in a concurrent map.
 */
final class QuorumDescription {

    /** Kafka's name of the metadata log's topic. */
    static final String METADATA_TOPIC = "__cluster_metadata";

    /** What the Raft leader knows of one follower or listener. */
    record Follower(int id, long nextIndex, long lastRpcElapsedMs) {
    }

    /** A voter's controller endpoint and metadata directory id, as the Raft configuration holds them. */
    record VoterEndpoint(String host, int port, Uuid directoryId) {
    }

    /**
     * The leader's view of the log and its followers, taken at one moment, with the voters' endpoints and directory
     * ids from the Raft configuration (empty: the configured {@code controller.quorum.voters}, no directory ids).
     */
    record RaftState(int leaderId, long term, long lastCommittedIndex, long nextIndex, List<Integer> voters,
                     List<Integer> observers, Map<Integer, Follower> followers,
                     Map<Integer, VoterEndpoint> voterEndpoints) {

        RaftState(int leaderId, long term, long lastCommittedIndex, long nextIndex, List<Integer> voters,
                  List<Integer> observers, Map<Integer, Follower> followers) {
            this(leaderId, term, lastCommittedIndex, nextIndex, voters, observers, followers, Map.of());
        }
    }

    private final Map<Integer, Long> lastCaughtUp = new ConcurrentHashMap<>();

    /**
     * Kafka's check of the request (exactly one topic, {@code __cluster_metadata}, with exactly partition 0; else
     * UNKNOWN_TOPIC_OR_PARTITION on every partition it names, as Kafka's raft client answers), then the description
     * of {@code state}; a null {@code state} (this node is not the ready Raft leader) is NOT_LEADER_OR_FOLLOWER.
     */
    DescribeQuorumResponseData describe(DescribeQuorumRequestData request, RaftState state,
                                        MetadataConfig config, long nowMs) {
        if (!namesTheMetadataPartition(request)) {
            return partitionErrors(request, Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        if (state == null) {
            return notLeader();
        }
        PartitionData data = new PartitionData().setPartitionIndex(0).setLeaderId(state.leaderId())
                .setLeaderEpoch((int) state.term()).setHighWatermark(state.lastCommittedIndex() + 1);
        for (int voter : state.voters()) {
            data.currentVoters().add(replica(voter, state, nowMs));
        }
        for (int observer : state.observers()) {
            data.observers().add(replica(observer, state, nowMs));
        }
        DescribeQuorumResponseData response = single(METADATA_TOPIC, 0, data);
        if (!state.voterEndpoints().isEmpty()) {
            for (int voter : state.voters()) {
                VoterEndpoint endpoint = state.voterEndpoints().get(voter);
                if (endpoint != null) {
                    Node node = new Node().setNodeId(voter);
                    node.listeners().add(new Listener().setName(controllerListenerName(config))
                            .setHost(endpoint.host()).setPort(endpoint.port()));
                    response.nodes().add(node);
                }
            }
            return response;
        }
        for (MetadataConfig.QuorumVoter voter : config.voters()) {
            if (state.voters().contains(voter.id())) {
                Node node = new Node().setNodeId(voter.id());
                node.listeners().add(new Listener().setName(controllerListenerName(config)).setHost(voter.host())
                        .setPort(voter.port()));
                response.nodes().add(node);
            }
        }
        return response;
    }

    private static boolean namesTheMetadataPartition(DescribeQuorumRequestData request) {
        return request.topics().size() == 1 && METADATA_TOPIC.equals(request.topics().get(0).topicName())
                && request.topics().get(0).partitions().size() == 1
                && request.topics().get(0).partitions().get(0).partitionIndex() == 0;
    }

    /** Kafka's partition-level error response: {@code error} on every partition the request names. */
    static DescribeQuorumResponseData partitionErrors(DescribeQuorumRequestData request, Errors error) {
        DescribeQuorumResponseData response = new DescribeQuorumResponseData();
        for (DescribeQuorumRequestData.TopicData topic : request.topics()) {
            TopicData topicData = new TopicData().setTopicName(topic.topicName());
            topic.partitions().forEach(p -> topicData.partitions().add(new PartitionData()
                    .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code())
                    .setErrorMessage(error.message())));
            response.topics().add(topicData);
        }
        return response;
    }

    /** The answer of a node that is not the Raft leader: NOT_LEADER_OR_FOLLOWER on the metadata partition. */
    static DescribeQuorumResponseData notLeader() {
        return single(METADATA_TOPIC, 0, new PartitionData().setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code())
                .setErrorMessage(Errors.NOT_LEADER_OR_FOLLOWER.message()).setLeaderId(-1).setLeaderEpoch(-1)
                .setHighWatermark(-1));
    }

    /** A response naming one partition with no top-level error. */
    private static DescribeQuorumResponseData single(String topicName, int partition, PartitionData data) {
        DescribeQuorumResponseData response = new DescribeQuorumResponseData();
        TopicData topicData = new TopicData().setTopicName(topicName);
        topicData.partitions().add(data.setPartitionIndex(partition));
        response.topics().add(topicData);
        return response;
    }

    private ReplicaState replica(int id, RaftState state, long nowMs) {
        VoterEndpoint endpoint = state.voterEndpoints().get(id);
        ReplicaState replica = new ReplicaState().setReplicaId(id)
                .setReplicaDirectoryId(endpoint == null ? Uuid.ZERO : endpoint.directoryId());
        if (id == state.leaderId()) {
            return replica.setLogEndOffset(state.nextIndex()).setLastFetchTimestamp(-1).setLastCaughtUpTimestamp(nowMs);
        }
        Follower follower = state.followers().get(id);
        if (follower == null) {
            return replica.setLogEndOffset(-1).setLastFetchTimestamp(-1)
                    .setLastCaughtUpTimestamp(lastCaughtUp.getOrDefault(id, -1L));
        }
        long logEnd = Math.min(follower.nextIndex(), state.nextIndex());
        long fetchedAt = nowMs - Math.max(0, follower.lastRpcElapsedMs());
        if (logEnd >= state.nextIndex()) {
            lastCaughtUp.merge(id, fetchedAt, Math::max);
        }
        return replica.setLogEndOffset(logEnd).setLastFetchTimestamp(fetchedAt)
                .setLastCaughtUpTimestamp(lastCaughtUp.getOrDefault(id, -1L));
    }

    private static String controllerListenerName(MetadataConfig config) {
        List<String> names = new ArrayList<>(config.controllerListenerNames());
        return names.isEmpty() ? "CONTROLLER" : names.get(0);
    }
}
