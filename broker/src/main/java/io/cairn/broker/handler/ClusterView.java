package io.cairn.broker.handler;

import io.cairn.broker.InternalTopics;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Kafka's metadata-cache reads over one {@link MetadataImage} as the client-facing APIs need them (Kafka's
 * {@code KRaftMetadataCache}): live brokers and their endpoint on a listener, offline replicas, internal topics and
 * the authorized-operations bit fields Kafka reports when no authorizer is configured. Stateless, thread-safe.
 */
final class ClusterView {

    /** Kafka's value of an authorized-operations field that was not asked for. */
    static final int AUTHORIZED_OPERATIONS_OMITTED = Integer.MIN_VALUE;
    /**
     * The topic operations (READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS) as Kafka's
     * 32-bit field: without an authorizer every supported operation is allowed.
     */
    static final int TOPIC_OPERATIONS = bits(3, 4, 5, 6, 7, 8, 10, 11);
    /** The cluster operations (CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE/ALTER_CONFIGS, IDEMPOTENT_WRITE). */
    static final int CLUSTER_OPERATIONS = bits(5, 7, 8, 9, 10, 11, 12);

    /** Kafka's internal topics (Topic.INTERNAL_TOPICS). */
    static final String GROUP_METADATA_TOPIC = GroupCoordinator.TOPIC;
    static final String TRANSACTION_STATE_TOPIC = TransactionCoordinator.TOPIC;

    private ClusterView() {
    }

    private static int bits(int... codes) {
        int field = 0;
        for (int code : codes) {
            field |= 1 << code;
        }
        return field;
    }

    static boolean isInternal(String topic) {
        return InternalTopics.isInternal(topic);
    }

    /** The endpoint of a live (unfenced) broker on {@code listener}, if both exist. */
    static Optional<BrokerEndpoint> aliveEndpoint(MetadataImage image, int brokerId, String listener) {
        return image.broker(brokerId).filter(b -> !b.fenced()).flatMap(b -> b.endpoint(listener));
    }

    /** The live brokers that have {@code listener}, by id. */
    static List<BrokerRegistration> aliveBrokers(MetadataImage image, String listener) {
        return image.brokers().values().stream().filter(b -> !b.fenced() && b.endpoint(listener).isPresent())
                .sorted((a, b) -> Integer.compare(a.id(), b.id())).toList();
    }

    /** Kafka's KRaft brokers report a random live broker as the controller; -1 when none is alive. */
    static int randomAliveBroker(MetadataImage image, String listener) {
        List<BrokerRegistration> alive = aliveBrokers(image, listener);
        return alive.isEmpty() ? -1 : alive.get(ThreadLocalRandom.current().nextInt(alive.size())).id();
    }

    /** The replicas whose broker is unknown, fenced or lacks the listener (Kafka's getOfflineReplicas). */
    static List<Integer> offlineReplicas(MetadataImage image, PartitionRegistration partition, String listener) {
        List<Integer> offline = new ArrayList<>(0);
        for (int replica : partition.replicas()) {
            Optional<BrokerRegistration> broker = image.broker(replica);
            if (broker.isEmpty() || broker.get().fenced() || broker.get().endpoint(listener).isEmpty()) {
                offline.add(replica);
            }
        }
        return offline;
    }

    /** {@code replicas} as given, or only the live ones with the listener when {@code filter} (Metadata v0). */
    static List<Integer> replicas(MetadataImage image, List<Integer> replicas, String listener, boolean filter) {
        if (!filter) {
            return new ArrayList<>(replicas);
        }
        List<Integer> alive = new ArrayList<>(replicas.size());
        for (int replica : replicas) {
            if (aliveEndpoint(image, replica, listener).isPresent()) {
                alive.add(replica);
            }
        }
        return alive;
    }
}
