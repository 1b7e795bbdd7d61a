package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.FaultProxy;
import io.cairn.testkit.FreePorts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A slow follower (its fetches from the leader paced to 64 KiB/s by the leader's {@link FaultProxy}, so it keeps
 * fetching but falls ever further behind) of a replication-factor-3 topic with {@code min.insync.replicas=2} and
 * {@code replica.lag.time.max.ms=5000}, written by an idempotent acks=all producer and an acks=1 one, about 1 MB/s
 * each: the leader drops it from the ISR (Kafka's rule is that a follower must have caught up with the log end within
 * the lag time, not merely fetched), so acks=all acknowledgements keep pace with the two in-sync replicas instead of
 * the slow one, and neither producer sees an error. Once the link is fast again the follower catches up and rejoins
 * the ISR, and every acks=all record is read back at its offset, no value twice. One cluster per kind.
 *
 * <p>The acks=1 writer is what lets the leader's log outrun the slow follower. With acks=all writes alone, both
 * brokers keep the slow follower in the ISR and the producer slows to its pace: the acknowledgements wait for it, so
 * at most the producer's in-flight requests separate the leader's log end from the follower's, and each fetch reaches
 * the log end of the one before, which is Kafka's definition of caught up (seen on both kinds while this test was
 * written).
 */
@Timeout(420)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class SlowFollowerIT {

    private static final String HOST = FreePorts.LOOPBACK;
    private static final long SLOW_BYTES_PER_SECOND = 64 * 1024;
    private static final int VALUE_BYTES = 1024;
    private static final Duration SLOW_FOR = Duration.ofSeconds(15);

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aFollowerThatFetchesTooSlowlyLeavesTheIsrAcksAllKeepsPaceAndItRejoinsOnceFastAgain(BrokerKind kind)
            throws Exception {
        // Given: node i's REPLICATION listener on replication[i-1], advertised at proxies[i-1] in front of it
        int[] replication = FreePorts.freePorts(ReplicationClients.NODES);
        List<FaultProxy> proxies = new ArrayList<>();
        try {
            for (int port : replication) {
                proxies.add(FaultProxy.start(0, HOST, port));
            }
            Map<String, String> config = new LinkedHashMap<>(ReplicationClients.clusterConfig());
            config.put("replica.lag.time.max.ms", "5000");
            try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, config,
                    node -> ReplicationClients.proxiedReplicationListener(node, replication[node.nodeId() - 1],
                            proxies.get(node.nodeId() - 1).port()));
                 Admin admin = ReplicationClients.startAndConnect(cluster)) {
                String topic = ReplicationClients.uniqueName("slow-follower");
                ReplicationClients.createTopic(admin, topic, 1, 2);
                int leader = ReplicationClients.leader(admin, topic, 0);
                int slow = leader == 3 ? 2 : 3;
                long slowPid = cluster.node(slow).pid();
                Map<Long, String> acked = new ConcurrentSkipListMap<>();

                try (Producing producing = new Producing(cluster, topic, "all", acked);
                     Producing filler = new Producing(cluster, topic, "1", new ConcurrentSkipListMap<>())) {
                    await().atMost(Duration.ofSeconds(60)).until(() -> acked.size() >= 2_000);

                    // When: the slow follower's fetches from the leader are paced to 64 KiB/s
                    proxies.get(leader - 1).throttleFrom(pid -> pid == slowPid, SLOW_BYTES_PER_SECOND);

                    // Then: it leaves the ISR, the leader stays, and acks=all goes on at the two in-sync replicas'
                    // pace, far above what the slow follower could take
                    ReplicationClients.awaitPartitions(admin, List.of(topic), "node " + slow + " out of the ISR",
                            partition -> partition.leader() != null && partition.leader().id() == leader
                                    && partition.isr().size() == 2
                                    && partition.isr().stream().map(Node::id).noneMatch(id -> id == slow));
                    int outOfIsr = acked.size();
                    Thread.sleep(SLOW_FOR.toMillis());
                    int ackedWhileSlow = acked.size() - outOfIsr;
                    long slowRecordsAtMost = SLOW_BYTES_PER_SECOND * SLOW_FOR.toSeconds() / VALUE_BYTES;
                    System.out.printf("%s: node %d out of the ISR of leader %d; %d records acknowledged in %d s "
                            + "while it could take at most %d; slowest acknowledgement so far %d ms%n", kind, slow, leader,
                            ackedWhileSlow, SLOW_FOR.toSeconds(), slowRecordsAtMost, producing.maxAckMillis());
                    assertThat(ackedWhileSlow).isGreaterThan((int) (4 * slowRecordsAtMost));

                    // When: the link is fast again
                    proxies.get(leader - 1).unthrottle();

                    // Then: it catches up and rejoins the ISR, and the producers saw no error
                    ReplicationClients.awaitFullIsr(admin, List.of(topic));
                    producing.stopAndCheck();
                    filler.stopAndCheck();
                }
                assertEveryAckedRecordReadOnceInOrder(cluster, new TopicPartition(topic, 0), acked);
            }
        } finally {
            proxies.forEach(FaultProxy::close);
        }
    }

    private static void assertEveryAckedRecordReadOnceInOrder(BrokerCluster cluster, TopicPartition tp,
                                                               Map<Long, String> acked) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        ConcurrentSkipListMap<Long, String> read = new ConcurrentSkipListMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
            await().atMost(Duration.ofSeconds(120)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    assertThat(read.isEmpty() || record.offset() > read.lastKey())
                            .as("offset %d in order", record.offset()).isTrue();
                    read.put(record.offset(), record.value());
                }
                return consumer.position(tp) >= end;
            });
        }
        Set<String> values = new HashSet<>();
        read.values().forEach(value -> assertThat(values.add(value)).as("value read twice: %s",
                value.substring(0, 16)).isTrue());
        acked.forEach((offset, value) -> assertThat(read.get(offset)).as("offset %d", offset).isEqualTo(value));
    }

    /**
     * A producer with {@code acks} ({@code all}: idempotent) writing numbered 1 KiB values, about a thousand a second,
     * until stopped; what was acknowledged goes to {@code acked} by offset.
     */
    private static final class Producing implements AutoCloseable {

        private final KafkaProducer<String, String> producer;
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final AtomicReference<Exception> failure = new AtomicReference<>();
        private final AtomicLong maxAckMillis = new AtomicLong();
        private final Thread thread;

        Producing(BrokerCluster cluster, String topic, String acks, Map<Long, String> acked) {
            Properties props = new Properties();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
            props.put(ProducerConfig.ACKS_CONFIG, acks);
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "all".equals(acks));
            props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
            this.producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
            this.thread = new Thread(() -> {
                for (int i = 0; running.get(); i++) {
                    if (i % 10 == 0) {
                        try {
                            Thread.sleep(10);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    String head = String.format("acks-%s-%09d-", acks, i);
                    String value = head + "x".repeat(VALUE_BYTES - head.length());
                    long sentAt = System.nanoTime();
                    producer.send(new ProducerRecord<>(topic, 0, null, value), (metadata, error) -> {
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        } else {
                            acked.put(metadata.offset(), value);
                            maxAckMillis.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt),
                                    Math::max);
                        }
                    });
                }
            }, "slow-follower-producer-acks-" + acks);
            thread.start();
        }

        long maxAckMillis() {
            return maxAckMillis.get();
        }

        void stopAndCheck() throws Exception {
            running.set(false);
            thread.join(TimeUnit.SECONDS.toMillis(60));
            producer.flush();
            assertThat(failure.get()).as("a send failed").isNull();
        }

        @Override
        public void close() {
            running.set(false);
            producer.close(Duration.ofSeconds(30));
        }
    }
}
