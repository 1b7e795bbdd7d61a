package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.ClusterNode;
import io.cairn.testkit.FaultProxy;
import io.cairn.testkit.FreePorts;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * What the replication scenarios share: the broker kinds they run against, the number of bounces, an Admin on a
 * {@link BrokerCluster}, replicated topic creation, and bounded waits on the partition state Admin reports (leader,
 * ISR) instead of sleeps.
 *
 * <p>Stateless; every method may be called from any thread.
 */
final class ReplicationClients {

    /**
     * System property naming the broker kinds the replication scenarios run against, comma-separated; every kind
     * when unset. compat-tests' pom passes its property of the same name (KAFKA until Cairn replicates).
     */
    static final String KINDS_PROPERTY = "cairn.replication.kinds";
    /** System property: how many clean and how many SIGKILL bounces a fault scenario does of each kind. */
    static final String BOUNCES_PROPERTY = "cairn.faults.bounces";
    static final int DEFAULT_BOUNCES = 2;
    static final int NODES = 3;
    static final short REPLICAS = 3;
    /** How long a cluster may take to reach a state (an election, an ISR expansion) before a scenario fails. */
    static final Duration STATE_TIMEOUT = Duration.ofSeconds(90);

    private ReplicationClients() {
    }

    /** The broker kinds to run against: those named by {@value #KINDS_PROPERTY}, or every kind. */
    static Stream<BrokerKind> kinds() {
        String names = System.getProperty(KINDS_PROPERTY, "");
        if (names.isBlank()) {
            return Arrays.stream(BrokerKind.values());
        }
        return Arrays.stream(names.split(",")).map(String::trim).filter(name -> !name.isEmpty())
                .map(BrokerKind::valueOf);
    }

    /** The bounces of each kind a fault scenario does: {@value #BOUNCES_PROPERTY}, by default 2. */
    static int bounces() {
        return Integer.getInteger(BOUNCES_PROPERTY, DEFAULT_BOUNCES);
    }

    /**
     * The settings of a 3-node replicated test cluster: the group coordinator's {@code __consumer_offsets} and the
     * transaction coordinator's {@code __transaction_state} at replication factor 3 (with min.isr 2: Kafka's
     * defaults, which the single-node harness lowers), so groups and transactions survive a bounce.
     */
    static Map<String, String> clusterConfig() {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("offsets.topic.replication.factor", Short.toString(REPLICAS));
        config.put("default.replication.factor", Short.toString(REPLICAS));
        config.put("transaction.state.log.replication.factor", Short.toString(REPLICAS));
        config.put("transaction.state.log.min.isr", "2");
        return config;
    }

    /**
     * The listeners of a node whose inter-broker traffic (follower fetches, transaction markers) goes through a
     * testkit {@code FaultProxy}: {@code inter.broker.listener.name=REPLICATION} bound on {@code replicationPort} and
     * advertised at {@code proxyPort}; the client (PLAINTEXT) and CONTROLLER listeners are reached directly.
     */
    static Map<String, String> proxiedReplicationListener(ClusterNode node, int replicationPort, int proxyPort) {
        String host = FreePorts.LOOPBACK;
        Map<String, String> config = new HashMap<>();
        config.put("listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",REPLICATION://" + host + ":"
                + replicationPort + ",CONTROLLER://" + host + ":" + node.controllerPort());
        config.put("advertised.listeners", "PLAINTEXT://" + host + ":" + node.clientPort() + ",REPLICATION://"
                + host + ":" + proxyPort);
        config.put("inter.broker.listener.name", "REPLICATION");
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,REPLICATION:PLAINTEXT");
        return config;
    }

    /**
     * A cluster of {@link #NODES} nodes of {@code kind} with {@code config}, node i's REPLICATION listener (the
     * inter-broker one) on a port of its own and advertised at a testkit {@code FaultProxy} in front of it, which
     * this adds to {@code proxies} at index i-1 (the caller closes them).
     */
    static BrokerCluster createWithProxiedReplication(BrokerKind kind, Map<String, String> config,
                                                      List<FaultProxy> proxies) {
        int[] replication = FreePorts.freePorts(NODES);
        for (int port : replication) {
            proxies.add(FaultProxy.start(0, FreePorts.LOOPBACK, port));
        }
        return BrokerCluster.create(kind, NODES, config, node -> proxiedReplicationListener(node,
                replication[node.nodeId() - 1], proxies.get(node.nodeId() - 1).port()));
    }

    /**
     * As {@link #proxiedReplicationListener}, with the CONTROLLER listener bound on {@code controllerPort} instead of
     * the node's own: the voters then name a proxy in front of it.
     */
    static Map<String, String> proxiedListeners(ClusterNode node, int replicationPort, int proxyPort,
                                                int controllerPort) {
        Map<String, String> config = proxiedReplicationListener(node, replicationPort, proxyPort);
        config.put("listeners", config.get("listeners").replace("CONTROLLER://" + FreePorts.LOOPBACK + ":"
                + node.controllerPort(), "CONTROLLER://" + FreePorts.LOOPBACK + ":" + controllerPort));
        return config;
    }

    static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** Starts every node of {@code cluster} and returns an Admin on it. */
    static Admin startAndConnect(BrokerCluster cluster) {
        cluster.start();
        return admin(cluster);
    }

    static Admin admin(BrokerCluster cluster) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        return Admin.create(props);
    }

    /**
     * Creates {@code topic} with {@code partitions} partitions at replication factor 3 and {@code min.insync.replicas}
     * {@code minIsr}, and returns once every partition has a leader, a full ISR and answers ListOffsets.
     */
    static void createTopic(Admin admin, String topic, int partitions, int minIsr) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, REPLICAS)
                .configs(Map.of("min.insync.replicas", Integer.toString(minIsr))))).all().get(60, TimeUnit.SECONDS);
        awaitFullIsr(admin, List.of(topic));
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
        }
        admin.listOffsets(latest).all().get(60, TimeUnit.SECONDS);
    }

    /** Waits until every partition of {@code topics} has a leader and all 3 replicas in its ISR. */
    static void awaitFullIsr(Admin admin, Collection<String> topics) {
        awaitPartitions(admin, topics, "a leader and a full ISR", partition -> partition.leader() != null
                && !partition.leader().isEmpty() && partition.isr().size() == partition.replicas().size()
                && partition.replicas().size() == REPLICAS);
    }

    /** Waits until every partition of {@code topics} satisfies {@code condition}, as Admin describes it. */
    static void awaitPartitions(Admin admin, Collection<String> topics, String what,
                                Predicate<TopicPartitionInfo> condition) {
        awaitPartitions(admin, topics, what, condition, STATE_TIMEOUT);
    }

    /** As {@link #awaitPartitions(Admin, Collection, String, Predicate)}, waiting at most {@code timeout}. */
    static void awaitPartitions(Admin admin, Collection<String> topics, String what,
                                Predicate<TopicPartitionInfo> condition, Duration timeout) {
        await().atMost(timeout).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            Map<String, TopicDescription> descriptions = admin.describeTopics(topics).allTopicNames()
                    .get(10, TimeUnit.SECONDS);
            assertThat(descriptions.values().stream().flatMap(d -> d.partitions().stream()).allMatch(condition))
                    .as("every partition of %s has %s; now %s", topics, what, describe(descriptions.values()))
                    .isTrue();
        });
    }

    /** The partitions of {@code topic} as Admin describes them, in partition order. */
    static List<TopicPartitionInfo> partitions(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
                .partitions();
    }

    /** The node id of the leader of {@code topic}'s {@code partition}; fails when it has none. */
    static int leader(Admin admin, String topic, int partition) throws Exception {
        Node leader = partitions(admin, topic).get(partition).leader();
        assertThat(leader).as("the leader of %s-%d", topic, partition).isNotNull();
        assertThat(leader.isEmpty()).as("%s-%d has a leader", topic, partition).isFalse();
        return leader.id();
    }

    /** {@code topic-p leader=L replicas=[..] isr=[..]} for each partition, for failure messages and progress. */
    static String describe(Collection<TopicDescription> descriptions) {
        return descriptions.stream().flatMap(d -> d.partitions().stream().map(p -> d.name() + "-" + p.partition()
                + " leader=" + (p.leader() == null ? "none" : p.leader().id()) + " replicas=" + ids(p.replicas())
                + " isr=" + ids(p.isr()))).collect(Collectors.joining("; "));
    }

    private static List<Integer> ids(List<Node> nodes) {
        return nodes.stream().map(Node::id).toList();
    }
}
