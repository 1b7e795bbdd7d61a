package io.cairn.broker.metrics;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.OffsetManager;
import io.cairn.broker.group.OffsetManager.CommittedOffset;
import io.cairn.broker.group.OffsetManager.TopicPartitionKey;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.image.TopicPartition;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Consumer lag published by the broker itself, under Kafka Exporter's names so that lag dashboards work unchanged:
 * {@code kafka_consumergroup_current_offset} and {@code kafka_consumergroup_lag} (high watermark minus the
 * committed offset, never negative) per {@code consumergroup}, {@code topic} and {@code partition}, and
 * {@code kafka_consumergroup_lag_sum} per group and topic. Computed at scrape time for the groups this broker
 * coordinates; the lag needs the partition's high watermark, so it is published for the partitions this broker
 * hosts (every partition on a single node).
 *
 * <p>The committed offsets belong to the group coordinator's thread: the collector asks it for a copy and waits
 * at most {@value #TIMEOUT_MS} ms on the scrape thread (the metrics endpoint's own thread, never an event loop);
 * while a coordinator partition loads, or when the wait times out, the scrape has no lag series. Thread-safe.
 */
public final class ConsumerLagCollector implements MultiCollector {

    private static final Logger LOGGER = LogManager.getLogger(ConsumerLagCollector.class);
    private static final long TIMEOUT_MS = 5_000;
    private static final String GROUP = "consumergroup";
    private static final String TOPIC = "topic";
    private static final String PARTITION = "partition";

    private final GroupCoordinator groups;
    private final ReplicaManager replicas;

    public ConsumerLagCollector(GroupCoordinator groups, ReplicaManager replicas) {
        this.groups = groups;
        this.replicas = replicas;
    }

    /** One committed offset, copied off the coordinator thread. */
    private record Committed(String group, String topic, int partition, long offset) {
    }

    @Override
    public MetricSnapshots collect() {
        GaugeFamily current = new GaugeFamily("kafka_consumergroup_current_offset",
                "The group's committed offset of the partition", GROUP, TOPIC, PARTITION);
        GaugeFamily lag = new GaugeFamily("kafka_consumergroup_lag",
                "The partition's high watermark minus the group's committed offset", GROUP, TOPIC, PARTITION);
        GaugeFamily lagSum = new GaugeFamily("kafka_consumergroup_lag_sum",
                "The group's lag summed over the topic's partitions", GROUP, TOPIC);
        Map<List<String>, Long> sums = new LinkedHashMap<>();
        for (Committed committed : committedOffsets()) {
            String index = Integer.toString(committed.partition());
            current.add(committed.offset(), committed.group(), committed.topic(), index);
            Partition partition = replicas.partition(new TopicPartition(committed.topic(), committed.partition()))
                    .orElse(null);
            if (partition != null) {
                long value = Math.max(0, partition.highWatermark() - committed.offset());
                lag.add(value, committed.group(), committed.topic(), index);
                sums.merge(List.of(committed.group(), committed.topic()), value, Long::sum);
            }
        }
        sums.forEach((key, value) -> lagSum.add(value, key.get(0), key.get(1)));
        return MetricSnapshots.of(current.build(), lag.build(), lagSum.build());
    }

    private List<Committed> committedOffsets() {
        try {
            List<List<Committed>> perShard = groups.callAll(shard -> copy(shard.offsets()))
                    .get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
            List<Committed> all = new ArrayList<>();
            perShard.forEach(all::addAll);
            return all;
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            LOGGER.debug("No consumer lag in this scrape: {}", e.toString());
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** Runs on the shard's coordinator thread. */
    private static List<Committed> copy(OffsetManager offsets) {
        List<Committed> copy = new ArrayList<>();
        for (String group : offsets.groupIds()) {
            for (Map.Entry<TopicPartitionKey, CommittedOffset> e : offsets.offsets(group).entrySet()) {
                copy.add(new Committed(group, e.getKey().topic(), e.getKey().partition(), e.getValue().offset()));
            }
        }
        return copy;
    }
}
