package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.FaultProxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A leader cut off from its followers while its clients still reach it. Each of 3 nodes has a separate REPLICATION
 * listener ({@code inter.broker.listener.name=REPLICATION}) advertised at a testkit {@link FaultProxy} in front of
 * it, so followers fetch from a leader through that leader's proxy; the CONTROLLER and client (PLAINTEXT) listeners
 * are reached directly. With replication factor 3, {@code min.insync.replicas=2} and
 * {@code replica.lag.time.max.ms=5000}, partitioning the leader's proxy and writing to it with acks=1 (a follower
 * whose log ends where the leader's does is in sync however long it is silent, as in Kafka) makes the leader shrink
 * the ISR to itself; an acks=all produce to it then fails at once with NOT_ENOUGH_REPLICAS (as Kafka's leader answers
 * when the ISR is below min.insync.replicas). After {@code heal()} the followers catch up, the ISR is 3 again and
 * acks=all succeeds.
 */
@Timeout(600)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class NetworkPartitionIT {

    private static final int MIN_ISR = 2;

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void anIsolatedLeaderShrinksItsIsrRejectsAcksAllWithNotEnoughReplicasAndRecoversOnHeal(BrokerKind kind)
            throws Exception {
        // Given: node i's REPLICATION listener behind proxies[i-1]
        List<FaultProxy> proxies = new ArrayList<>();
        try {
            Map<String, String> config = new LinkedHashMap<>(ReplicationClients.clusterConfig());
            config.put("replica.lag.time.max.ms", "5000");
            try (BrokerCluster cluster = ReplicationClients.createWithProxiedReplication(kind, config, proxies);
                 Admin admin = ReplicationClients.startAndConnect(cluster);
                 KafkaProducer<String, String> acksAll = producer(cluster, "all");
                 KafkaProducer<String, String> acksOne = producer(cluster, "1")) {
                String topic = ReplicationClients.uniqueName("partitioned");
                ReplicationClients.createTopic(admin, topic, 1, MIN_ISR);
                assertThat(catchThrowable(() -> send(acksAll, topic, "before")))
                        .as("acks=all to %s while every replica is in sync", topic).isNull();
                int leader = ReplicationClients.leader(admin, topic, 0);

                // When: the leader's followers can no longer fetch from it, and it takes a write they miss (a
                // follower whose log ends where the leader's does stays in sync however long it is silent)
                proxies.get(leader - 1).partition();
                assertThat(send(acksOne, topic, "acks=1 while isolated").offset()).isEqualTo(1);

                // Then: the leader drops them from the ISR, stays the leader, and refuses acks=all
                ReplicationClients.awaitPartitions(admin, List.of(topic), "only its leader " + leader + " in the ISR",
                        partition -> partition.leader() != null && partition.leader().id() == leader
                                && partition.isr().stream().map(Node::id).toList().equals(List.of(leader)));
                Throwable refused = catchThrowable(() -> send(acksAll, topic, "isolated"));
                assertThat(refused).as("acks=all to the isolated leader").isInstanceOf(ExecutionException.class)
                        .hasCauseInstanceOf(NotEnoughReplicasException.class);

                // When: healed
                proxies.get(leader - 1).heal();

                // Then
                ReplicationClients.awaitFullIsr(admin, List.of(topic));
                RecordMetadata after = send(acksAll, topic, "after");
                System.out.printf("%s: leader %d isolated, acks=all refused with %s, after heal acks=all at offset "
                        + "%d%n", kind, leader, refused.getCause().getClass().getSimpleName(), after.offset());
                assertThat(after.offset()).as("the record after the heal follows the acks=1 one").isEqualTo(2);
            }
        } finally {
            proxies.forEach(FaultProxy::close);
        }
    }

    /** A producer that does not retry, so a refused produce surfaces as the error the leader answered. */
    private static KafkaProducer<String, String> producer(BrokerCluster cluster, String acks) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, acks);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        props.put(ProducerConfig.RETRIES_CONFIG, 0);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 20_000);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 30_000);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static RecordMetadata send(KafkaProducer<String, String> producer, String topic, String value)
            throws Exception {
        return producer.send(new ProducerRecord<>(topic, 0, null, value)).get(60, TimeUnit.SECONDS);
    }
}
