package io.cairn.isr.fetcher;

import io.cairn.isr.fetcher.LeaderEndpoint.PartitionFetchRequest;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A follower's Fetch request from a session plan (Kafka's {@code FetchRequest.Builder.forReplica}) and the partitions
 * of its response by name. Stateless.
 */
final class FetchRequests {

    private FetchRequests() {
    }

    /** The request of {@code plan} at {@code version} (12-17): topics by name below v13, by id from v13. */
    static FetchRequestData request(FetchSessionHandler.Plan plan, short version, int brokerId, long brokerEpoch,
                                    ReplicaFetcherConfig config) {
        FetchRequestData request = new FetchRequestData().setMaxWaitMs(config.fetchWaitMaxMs())
            .setMinBytes(config.fetchMinBytes()).setMaxBytes(config.fetchResponseMaxBytes())
            .setIsolationLevel((byte) 0).setSessionId(plan.sessionId()).setSessionEpoch(plan.epoch());
        if (version >= 15) {
            request.setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(brokerId)
                .setReplicaEpoch(brokerEpoch));
        } else {
            request.setReplicaId(brokerId);
        }
        boolean byId = version >= 13;
        Map<String, FetchRequestData.FetchTopic> topics = new LinkedHashMap<>();
        plan.toSend().forEach((tp, p) -> topics.computeIfAbsent(tp.topic(), name -> byId
                ? new FetchRequestData.FetchTopic().setTopicId(p.topicId())
                : new FetchRequestData.FetchTopic().setTopic(name))
            .partitions().add(partition(tp, p)));
        request.setTopics(new ArrayList<>(topics.values()));
        Map<String, FetchRequestData.ForgottenTopic> forgotten = new LinkedHashMap<>();
        for (FetchSessionHandler.Forgotten f : plan.toForget()) {
            if (!byId && plan.toSend().containsKey(f.tp())) {
                continue; // below v13 a replaced partition is simply sent again
            }
            String key = byId ? f.topicId().toString() : f.tp().topic();
            forgotten.computeIfAbsent(key, k -> byId ? new FetchRequestData.ForgottenTopic().setTopicId(f.topicId())
                : new FetchRequestData.ForgottenTopic().setTopic(f.tp().topic())).partitions().add(f.tp().partition());
        }
        request.setForgottenTopicsData(new ArrayList<>(forgotten.values()));
        return request;
    }

    private static FetchRequestData.FetchPartition partition(TopicPartition tp, PartitionFetchRequest p) {
        return new FetchRequestData.FetchPartition().setPartition(tp.partition())
            .setCurrentLeaderEpoch(p.currentLeaderEpoch()).setFetchOffset(p.fetchOffset())
            .setLastFetchedEpoch(p.lastFetchedEpoch()).setLogStartOffset(p.logStartOffset())
            .setPartitionMaxBytes(p.maxBytes());
    }

    /**
     * The response's partitions by topic name (v13+: through the session's topic ids; a topic id the session does
     * not know is left out).
     */
    static Map<TopicPartition, FetchResponseData.PartitionData> partitions(FetchResponseData response, short version,
                                                                          Map<Uuid, String> topicNames) {
        Map<TopicPartition, FetchResponseData.PartitionData> result = new LinkedHashMap<>();
        for (FetchResponseData.FetchableTopicResponse topic : response.responses()) {
            String name = version >= 13 ? topicNames.get(topic.topicId()) : topic.topic();
            if (name == null) {
                continue;
            }
            for (FetchResponseData.PartitionData p : topic.partitions()) {
                result.put(new TopicPartition(name, p.partitionIndex()), p);
            }
        }
        return result;
    }

    /** Releases the records buffers the decoder retained. */
    static void release(FetchResponseData response) {
        List<ByteBuf> buffers = new ArrayList<>();
        for (FetchResponseData.FetchableTopicResponse topic : response.responses()) {
            for (FetchResponseData.PartitionData p : topic.partitions()) {
                if (p.records() != null) {
                    buffers.add(p.records());
                    p.setRecords(null);
                }
            }
        }
        buffers.forEach(ByteBuf::release);
    }
}
