package io.cairn.compat.replication;

import static io.cairn.compat.replication.ReplicationClients.STATE_TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.Signals;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The active controller, also a partition leader, is paused (SIGSTOP) for longer than the quorum's election timeout
 * while acks=all producers write, then resumed (SIGCONT): the other two nodes elect a new controller meanwhile, and
 * the resumed node must follow it, catch up on the metadata it missed (its own view of every partition agrees with
 * the cluster's) and rejoin every ISR. A found defect: the resumed node's Raft server stayed behind for good, its
 * broker fenced, its ISRs never full again.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class PausedControllerIT {

    private static final int PARTITIONS = 3;
    private static final long PAUSE_MS = 6_000;
    private static final long BOUNCE_DOWN_MS = 15_000;

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aPausedActiveControllerFollowsTheNewOneAndRejoinsEveryIsr(BrokerKind kind) throws Exception {
        Map<String, String> config = new HashMap<>(ReplicationClients.clusterConfig());
        config.put("replica.lag.time.max.ms", "5000");
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, config);
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            String topic = ReplicationClients.uniqueName("paused");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);
            int paused = cluster.activeControllerId(STATE_TIMEOUT);
            BrokerProcess node = cluster.node(paused);
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicLong acked = new AtomicLong();
            Thread writer = new Thread(() -> produce(cluster, topic, running, acked), "paused-writer");
            writer.setDaemon(true);
            writer.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> acked.get() > 100);

            // Given: the active controller bounced (down for a while), so that another node leads the quorum
            // while the bounced one catches up
            int bounced = paused;
            cluster.node(bounced).stop();
            Thread.sleep(BOUNCE_DOWN_MS);
            cluster.startNode(cluster.node(bounced));
            paused = cluster.activeControllerId(STATE_TIMEOUT);
            node = cluster.node(paused);
            Thread.sleep(2_000);

            // When: the active controller stops for longer than the election timeout, then goes on
            signal(node, "STOP");
            try {
                Thread.sleep(PAUSE_MS);
            } finally {
                signal(node, "CONT");
            }

            // Then: another node is the controller, and the resumed node's own metadata shows full ISRs
            int controller = cluster.activeControllerId(STATE_TIMEOUT);
            assertThat(controller).as("the quorum elected another controller while node %d was paused", paused)
                    .isNotEqualTo(paused);
            try (Admin own = adminOf(node)) {
                try {
                    ReplicationClients.awaitFullIsr(admin, List.of(topic));
                    ReplicationClients.awaitFullIsr(own, List.of(topic));
                } catch (Throwable stuck) {
                    FaultCampaign.threadDumps(cluster);
                    throw stuck;
                }
                await().atMost(STATE_TIMEOUT).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                        .untilAsserted(() -> assertThat(own.describeCluster().controller()
                                .get(10, TimeUnit.SECONDS).id()).as("the controller the resumed node names")
                                .isEqualTo(cluster.activeControllerId(STATE_TIMEOUT)));
                long before = acked.get();
                await().atMost(Duration.ofSeconds(60)).until(() -> acked.get() > before + 100);
                running.set(false);
                writer.join(30_000);
                Map<String, TopicDescription> seen = own.describeTopics(List.of(topic)).allTopicNames()
                        .get(30, TimeUnit.SECONDS);
                System.out.printf("%s: paused controller %d, controller now %d; %s%n", kind, paused, controller,
                        ReplicationClients.describe(seen.values()));
            } finally {
                running.set(false);
            }
        }
    }

    private static Admin adminOf(BrokerProcess node) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, node.bootstrapServers());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 15_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        // ask the resumed node only: its own image, not another broker's
        props.put("metadata.recovery.strategy", "none");
        return Admin.create(props);
    }

    private static void produce(BrokerCluster cluster, String topic, AtomicBoolean running, AtomicLong acked) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 120_000);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            long n = 0;
            while (running.get()) {
                producer.send(new ProducerRecord<>(topic, (int) (n % PARTITIONS), null, "v" + n), (md, e) -> {
                    if (e == null) {
                        acked.incrementAndGet();
                    }
                });
                n++;
                Thread.sleep(5);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void signal(BrokerProcess node, String signal) {
        Signals.send(node.pid(), signal);
    }
}
