package io.cairn.broker.metrics;

import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.PartitionLog;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;

/**
 * The per-partition series of the partitions this broker hosts, read at scrape time so that a deleted partition's
 * series disappear with it: Kafka's {@code kafka.log:type=Log} gauges ({@code kafka_log_log_size},
 * {@code kafka_log_log_logstartoffset}, {@code kafka_log_log_logendoffset}, {@code kafka_log_log_numlogsegments})
 * and {@code kafka.cluster:type=Partition} flags of the partitions led here ({@code kafka_cluster_partition_*}:
 * {@code underreplicated}, {@code underminisr}, {@code atminisr}), labelled {@code topic} and {@code partition}.
 *
 * <p>Thread-safe: reads the partitions' and logs' thread-safe getters.
 */
public final class PartitionLogCollector implements MultiCollector {

    private static final String TOPIC = "topic";
    private static final String PARTITION = "partition";

    private final ReplicaManager replicas;

    public PartitionLogCollector(ReplicaManager replicas) {
        this.replicas = replicas;
    }

    @Override
    public MetricSnapshots collect() {
        GaugeFamily size = new GaugeFamily("kafka_log_log_size", "Bytes of the partition's log segments", TOPIC,
                PARTITION);
        GaugeFamily start = new GaugeFamily("kafka_log_log_logstartoffset", "The partition's log start offset",
                TOPIC, PARTITION);
        GaugeFamily end = new GaugeFamily("kafka_log_log_logendoffset", "The partition's log end offset", TOPIC,
                PARTITION);
        GaugeFamily segments = new GaugeFamily("kafka_log_log_numlogsegments", "The partition's log segments",
                TOPIC, PARTITION);
        GaugeFamily underReplicated = new GaugeFamily("kafka_cluster_partition_underreplicated",
                "1 when the partition is led here and its ISR is smaller than its replicas", TOPIC, PARTITION);
        GaugeFamily underMinIsr = new GaugeFamily("kafka_cluster_partition_underminisr",
                "1 when the partition is led here and its ISR is below min.insync.replicas", TOPIC, PARTITION);
        GaugeFamily atMinIsr = new GaugeFamily("kafka_cluster_partition_atminisr",
                "1 when the partition is led here and its ISR is at min.insync.replicas", TOPIC, PARTITION);
        for (Partition partition : replicas.allPartitions()) {
            String topic = partition.topic();
            String index = Integer.toString(partition.partitionIndex());
            PartitionLog log = partition.log();
            size.add(log.size(), topic, index);
            start.add(log.logStartOffset(), topic, index);
            end.add(log.logEndOffset(), topic, index);
            segments.add(log.numberOfSegments(), topic, index);
            if (partition.isLeader()) {
                int isr = partition.registration().isr().size();
                underReplicated.add(isr < partition.registration().replicas().size() ? 1 : 0, topic, index);
                underMinIsr.add(isr < partition.minInsyncReplicas() ? 1 : 0, topic, index);
                atMinIsr.add(isr == partition.minInsyncReplicas() ? 1 : 0, topic, index);
            }
        }
        return MetricSnapshots.of(size.build(), start.build(), end.build(), segments.build(), underReplicated.build(),
                underMinIsr.build(), atMinIsr.build());
    }
}
