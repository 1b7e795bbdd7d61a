package io.cairn.broker.produce;

import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ProduceResponseData;
import io.cairn.wire.message.ProduceResponseData.LeaderIdAndEpoch;
import io.cairn.wire.message.ProduceResponseData.NodeEndpoint;
import io.cairn.wire.message.ProduceResponseData.TopicProduceResponse;
import io.cairn.wire.protocol.Uuid;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Builds a produce response from the partitions of a request: one topic entry per topic (by name before v13, by
 * topic id from v13) holding its partitions in request order, and from v10 the new leader of every partition
 * answered NOT_LEADER_OR_FOLLOWER with that leader's endpoint on the request's listener (KIP-951), as Kafka's
 * {@code KafkaApis.handleProduceRequest} fills {@code current_leader} and {@code node_endpoints}.
 *
 * <p>Stateless and thread-safe.
 */
final class ProduceResponses {

    private static final short TOPIC_ID_VERSION = 13;
    private static final short LEADER_HINT_VERSION = 10;

    private ProduceResponses() {
    }

    /**
     * @param failed the partitions with an error (only NOT_LEADER_OR_FOLLOWER ones matter here)
     * @param replicas where to look the current leader up first; null for none
     * @param image where to look the leader and its endpoint up; null for none
     */
    static ProduceResponseData build(short version, List<ProducePartition> partitions, List<ProducePartition> failed,
                                     ReplicaManager replicas, MetadataImage image, String listener) {
        ProduceResponseData data = new ProduceResponseData().setThrottleTimeMs(0);
        Map<Object, TopicProduceResponse> topics = new LinkedHashMap<>();
        for (ProducePartition p : partitions) {
            boolean byId = version >= TOPIC_ID_VERSION;
            Object key = byId ? p.topicId() : p.topic();
            TopicProduceResponse topic = topics.computeIfAbsent(key, k -> byId
                    ? new TopicProduceResponse().setTopicId(p.topicId())
                    : new TopicProduceResponse().setName(p.topic()).setTopicId(Uuid.ZERO));
            topic.partitionResponses().add(p.response());
        }
        data.responses().addAll(topics.values());
        if (version >= LEADER_HINT_VERSION && image != null) {
            Map<Integer, NodeEndpoint> endpoints = new TreeMap<>();
            for (ProducePartition p : failed) {
                if (p.response().errorCode() == Errors.NOT_LEADER_OR_FOLLOWER.code() && p.topic() != null) {
                    fillLeader(p, replicas, image, listener, endpoints);
                }
            }
            data.nodeEndpoints().addAll(endpoints.values());
        }
        return data;
    }

    /** Kafka's {@code getCurrentLeader}: the local partition's view first, then the metadata image's. */
    private static void fillLeader(ProducePartition p, ReplicaManager replicas, MetadataImage image, String listener,
                                   Map<Integer, NodeEndpoint> endpoints) {
        TopicPartition tp = new TopicPartition(p.topic(), p.index());
        int leaderId = -1;
        int leaderEpoch = -1;
        Optional<Partition> local = replicas == null ? Optional.empty() : replicas.partition(tp);
        if (local.isPresent()) {
            leaderId = local.get().leaderId();
            leaderEpoch = local.get().leaderEpoch();
        } else {
            Optional<PartitionRegistration> registration = image.partition(tp);
            if (registration.isPresent()) {
                leaderId = registration.get().leader();
                leaderEpoch = registration.get().leaderEpoch();
            }
        }
        p.response().setCurrentLeader(new LeaderIdAndEpoch().setLeaderId(leaderId).setLeaderEpoch(leaderEpoch));
        Optional<BrokerRegistration> broker = image.broker(leaderId).filter(b -> !b.fenced());
        Optional<BrokerEndpoint> endpoint = broker.flatMap(b -> b.endpoint(listener));
        if (endpoint.isPresent()) {
            endpoints.put(leaderId, new NodeEndpoint().setNodeId(leaderId).setHost(endpoint.get().host())
                    .setPort(endpoint.get().port()).setRack(broker.get().rack().orElse(null)));
        }
    }
}
