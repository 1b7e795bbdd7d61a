package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.FaultProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
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
        // Given: node i's REPLICATION listener behind proxies[i-1]
        List<FaultProxy> proxies = new ArrayList<>();
        try {
            Map<String, String> config = new LinkedHashMap<>(ReplicationClients.clusterConfig());
            config.put("replica.lag.time.max.ms", "5000");
            try (BrokerCluster cluster = ReplicationClients.createWithProxiedReplication(kind, config, proxies);
                 Admin admin = ReplicationClients.startAndConnect(cluster)) {
                String topic = ReplicationClients.uniqueName("slow-follower");
                ReplicationClients.createTopic(admin, topic, 1, 2);
                int leader = ReplicationClients.leader(admin, topic, 0);
                int slow = leader == 3 ? 2 : 3;
                long slowPid = cluster.node(slow).pid();
                Map<TopicPartition, ConcurrentSkipListMap<Long, String>> acked;

                try (AckedWriter writer = new AckedWriter(cluster, topic, 1, "all", true);
                     AckedWriter filler = new AckedWriter(cluster, topic, 1, "1", true)) {
                    await().atMost(Duration.ofSeconds(60)).until(() -> writer.ackedCount() >= 2_000);

                    // When: the slow follower's fetches from the leader are paced to 64 KiB/s
                    proxies.get(leader - 1).throttleFrom(pid -> pid == slowPid, SLOW_BYTES_PER_SECOND);

                    // Then: it leaves the ISR, the leader stays, and acks=all goes on at the two in-sync replicas'
                    // pace, far above what the slow follower could take
                    ReplicationClients.awaitPartitions(admin, List.of(topic), "node " + slow + " out of the ISR",
                            partition -> partition.leader() != null && partition.leader().id() == leader
                                    && partition.isr().size() == 2
                                    && partition.isr().stream().map(Node::id).noneMatch(id -> id == slow));
                    int outOfIsr = writer.ackedCount();
                    Thread.sleep(SLOW_FOR.toMillis());
                    int ackedWhileSlow = writer.ackedCount() - outOfIsr;
                    long slowRecordsAtMost = SLOW_BYTES_PER_SECOND * SLOW_FOR.toSeconds() / VALUE_BYTES;
                    System.out.printf("%s: node %d out of the ISR of leader %d; %d records acknowledged in %d s "
                            + "while it could take at most %d; slowest acknowledgement so far %d ms%n", kind, slow, leader,
                            ackedWhileSlow, SLOW_FOR.toSeconds(), slowRecordsAtMost, writer.slowestAckMillis());
                    assertThat(ackedWhileSlow).isGreaterThan((int) (4 * slowRecordsAtMost));

                    // When: the link is fast again
                    proxies.get(leader - 1).unthrottle();

                    // Then: it catches up and rejoins the ISR, and the producers saw no error
                    ReplicationClients.awaitFullIsr(admin, List.of(topic));
                    writer.stopAndCheck();
                    filler.stopAndCheck();
                    acked = writer.acked();
                }
                AckedWriter.assertEveryAckedRecordReadOnceInOrder(cluster, acked);
            }
        } finally {
            proxies.forEach(FaultProxy::close);
        }
    }
}
