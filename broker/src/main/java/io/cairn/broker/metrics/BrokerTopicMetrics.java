package io.cairn.broker.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Kafka's {@code BrokerTopicStats}: the {@code kafka_server_brokertopicmetrics_*_total} counters of each topic and
 * of all topics together. The all-topics series carry {@code topic=""}, which Prometheus stores without the label,
 * so {@code sum(...{topic!=""})} and the topic-less series both work as dashboards expect.
 *
 * <p>{@link #forTopic} resolves a topic's meters once; callers keep the result for the topic's partitions of a
 * request (or longer). Thread-safe.
 */
public final class BrokerTopicMetrics {

    static final String ALL_TOPICS = "";

    private final MeterRegistry registry;
    private final ConcurrentMap<String, TopicMeters> byTopic = new ConcurrentHashMap<>();
    private final TopicMeters allTopics;

    BrokerTopicMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.allTopics = new TopicMeters(registry, ALL_TOPICS, null);
    }

    /** The meters of {@code topic}; each increment also counts in the all-topics series. */
    public TopicMeters forTopic(String topic) {
        TopicMeters meters = byTopic.get(topic);
        return meters != null ? meters : byTopic.computeIfAbsent(topic, t -> new TopicMeters(registry, t, allTopics));
    }

    /** The all-topics meters. */
    public TopicMeters allTopics() {
        return allTopics;
    }

    /** Drops a deleted topic's series (Kafka's {@code BrokerTopicStats.removeMetrics}). */
    public void removeTopic(String topic) {
        TopicMeters meters = byTopic.remove(topic);
        if (meters != null) {
            meters.remove(registry);
        }
    }
}
