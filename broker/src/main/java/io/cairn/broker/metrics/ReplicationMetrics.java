package io.cairn.broker.metrics;

import io.cairn.isr.Partition;
import io.cairn.isr.PartitionListener;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Kafka's replica-manager and controller gauges, computed at scrape time from the hosted partitions and the
 * metadata image: {@code kafka_server_replicamanager_partitioncount}, {@code _leadercount},
 * {@code _underreplicatedpartitions} (led here, ISR smaller than the replicas), {@code _underminisrpartitioncount}
 * and {@code _atminisrpartitioncount} (led here, ISR below or at {@code min.insync.replicas}),
 * {@code kafka_controller_kafkacontroller_activecontrollercount}, {@code _offlinepartitionscount} (partitions
 * without a leader in the image), {@code _globaltopiccount}, {@code _globalpartitioncount},
 * {@code _activebrokercount} and {@code _fencedbrokercount} (registered brokers unfenced and fenced), the last five
 * reported by the active controller only (0 elsewhere, as Kafka's controller reports them); the ISR shrink and expand
 * counters ({@code kafka_server_replicamanager_isrshrinks_total}, {@code _isrexpands_total}), counted from the
 * partitions' ISR changes, and the broker state ({@code kafka_server_kafkaserver_brokerstate}). It also drops a
 * topic's broker-topic series when the topic's last partition leaves this broker.
 *
 * <p>Thread-safe: the gauges read the partitions' thread-safe getters; the ISR listener is called on whatever
 * thread changed the ISR and keeps the last ISR size per partition in a concurrent map.
 */
public final class ReplicationMetrics implements PartitionListener {

    private static final String REPLICA_MANAGER = "kafka.server.replicamanager.";
    private static final String CONTROLLER = "kafka.controller.kafkacontroller.";

    private final ReplicaManager replicas;
    private final BrokerTopicMetrics topics;
    private final Counter isrShrinks;
    private final Counter isrExpands;
    private final Map<TopicPartition, Integer> isrSizes = new ConcurrentHashMap<>();

    private ReplicationMetrics(MeterRegistry registry, BrokerTopicMetrics topics, ReplicaManager replicas,
            MetadataNode metadata, Supplier<BrokerState> state) {
        this.replicas = replicas;
        this.topics = topics;
        gauge(registry, REPLICA_MANAGER + "partitioncount", "Partitions hosted by this broker",
                () -> replicas.allPartitions().size());
        gauge(registry, REPLICA_MANAGER + "leadercount", "Partitions led by this broker",
                () -> count(Partition::isLeader));
        gauge(registry, REPLICA_MANAGER + "underreplicatedpartitions", "Partitions led here with ISR < replicas",
                () -> count(p -> p.isLeader() && p.registration().isr().size() < p.registration().replicas().size()));
        gauge(registry, REPLICA_MANAGER + "underminisrpartitioncount", "Partitions led here with ISR < min ISR",
                () -> count(p -> p.isLeader() && p.registration().isr().size() < p.minInsyncReplicas()));
        gauge(registry, REPLICA_MANAGER + "atminisrpartitioncount", "Partitions led here with ISR = min ISR",
                () -> count(p -> p.isLeader() && p.registration().isr().size() == p.minInsyncReplicas()));
        gauge(registry, CONTROLLER + "activecontrollercount", "1 on the active controller",
                () -> metadata.isActiveController() ? 1 : 0);
        gauge(registry, CONTROLLER + "offlinepartitionscount", "Partitions without leader (active controller only)",
                () -> metadata.isActiveController() ? offlinePartitions(metadata) : 0);
        gauge(registry, CONTROLLER + "globaltopiccount", "Topics in the metadata (active controller only)",
                () -> metadata.isActiveController() ? metadata.currentImage().topicsById().size() : 0);
        gauge(registry, CONTROLLER + "globalpartitioncount", "Partitions in the metadata (active controller only)",
                () -> metadata.isActiveController() ? metadata.currentImage().partitionCount() : 0);
        gauge(registry, CONTROLLER + "activebrokercount", "Registered unfenced brokers (active controller only)",
                () -> metadata.isActiveController() ? brokers(metadata, false) : 0);
        gauge(registry, CONTROLLER + "fencedbrokercount", "Registered fenced brokers (active controller only)",
                () -> metadata.isActiveController() ? brokers(metadata, true) : 0);
        gauge(registry, "kafka.server.kafkaserver.brokerstate", "Kafka's broker state number (3: running)",
                () -> state.get().value());
        this.isrShrinks = Counter.builder(REPLICA_MANAGER + "isrshrinks").description("ISR shrinks")
                .register(registry);
        this.isrExpands = Counter.builder(REPLICA_MANAGER + "isrexpands").description("ISR expands")
                .register(registry);
    }

    /** Registers the gauges and listens to {@code replicas}' ISR changes. */
    public static ReplicationMetrics register(BrokerMetrics metrics, ReplicaManager replicas, MetadataNode metadata,
            Supplier<BrokerState> state) {
        ReplicationMetrics replication = new ReplicationMetrics(metrics.registry(), metrics.topics(), replicas,
                metadata, state);
        replicas.addListener(replication);
        return replication;
    }

    private static void gauge(MeterRegistry registry, String name, String help, Supplier<Number> value) {
        Gauge.builder(name, value).description(help).register(registry);
    }

    private int count(Predicate<Partition> condition) {
        int count = 0;
        for (Partition partition : replicas.allPartitions()) {
            if (condition.test(partition)) {
                count++;
            }
        }
        return count;
    }

    private static int brokers(MetadataNode metadata, boolean fenced) {
        int count = 0;
        for (BrokerRegistration broker : metadata.currentImage().brokers().values()) {
            if (broker.fenced() == fenced) {
                count++;
            }
        }
        return count;
    }

    private static int offlinePartitions(MetadataNode metadata) {
        int offline = 0;
        for (TopicImage topic : metadata.currentImage().topicsById().values()) {
            for (PartitionRegistration partition : topic.partitions().values()) {
                if (partition.leader() == PartitionRegistration.NO_LEADER) {
                    offline++;
                }
            }
        }
        return offline;
    }

    @Override
    public void onHighWatermarkAdvanced(Partition partition) {
    }

    /** Counts a shrink or an expand by comparing the new ISR size with the last one seen. */
    @Override
    public void onIsrChanged(Partition partition) {
        int size = partition.registration().isr().size();
        Integer previous = isrSizes.put(partition.topicPartition(), size);
        if (previous != null && size < previous) {
            isrShrinks.increment();
        } else if (previous != null && size > previous) {
            isrExpands.increment();
        }
    }

    /**
     * A new leadership starts from its own ISR; a removed partition is forgotten, and once the last partition of
     * its topic has left this broker the topic's broker-topic series go too (Kafka's {@code removeMetrics}).
     */
    @Override
    public void onLeadershipChanged(Partition partition) {
        if (partition.isRemoved()) {
            isrSizes.remove(partition.topicPartition());
            if (replicas.allPartitions().stream().noneMatch(p -> p.topic().equals(partition.topic()))) {
                topics.removeTopic(partition.topic());
            }
        } else if (!partition.isLeader()) {
            isrSizes.remove(partition.topicPartition());
        } else {
            isrSizes.put(partition.topicPartition(), partition.registration().isr().size());
        }
    }
}
