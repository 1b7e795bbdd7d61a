package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.BrokerSessions;
import io.cairn.testkit.SizedTmpfs;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One node of three runs out of disk (its data directory moved onto a 48 MiB tmpfs, {@link SizedTmpfs}) while an
 * idempotent acks=all producer writes to a replication-factor-3 topic with {@code min.insync.replicas=2}: the node
 * halts with exit code 1 after one line naming the failed directory, the two others go on taking acks=all writes
 * without the producer seeing an error, and once space is freed the node starts again and rejoins every ISR. Every
 * acknowledged record is then read back at its offset, in order, none twice. One cluster per kind.
 */
@Timeout(420)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class FullDiskFailoverIT {

    private static final int PARTITIONS = 3;
    private static final int DISK_MIB = 48;
    private static final int RECORDS_AFTER_HALT = 5_000;
    private static final Duration HALT_TIMEOUT = Duration.ofSeconds(120);

    static Stream<BrokerKind> kinds() {
        return ReplicationClients.kinds();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aNodeWhoseDiskFillsStopsTheOthersGoOnAndItRejoinsOnceSpaceIsFreed(BrokerKind kind) throws Exception {
        Map<String, String> config = BrokerSessions.quick(ReplicationClients.clusterConfig());
        config.put("min.insync.replicas", "2");
        try (BrokerCluster cluster = BrokerCluster.create(kind, ReplicationClients.NODES, config);
             Admin admin = ReplicationClients.startAndConnect(cluster)) {
            // Given: an RF-3 topic, and a node that is not the active controller moved onto a small disk
            String topic = ReplicationClients.uniqueName("full-disk");
            ReplicationClients.createTopic(admin, topic, PARTITIONS, 2);
            int controller = cluster.activeControllerId(Duration.ofSeconds(60));
            BrokerProcess node = cluster.node(controller == 3 ? 2 : 3);
            node.stop();
            SizedTmpfs disk = SizedTmpfs.mount(node.dataDir(), DISK_MIB);
            try (disk) {
                node.commandPrefix(disk.enterCommand());
                cluster.startNode(node);
                ReplicationClients.awaitFullIsr(admin, List.of(topic));
                Map<TopicPartition, ConcurrentSkipListMap<Long, String>> acked;

                // When: the producer writes until the node stops, and goes on after
                try (AckedWriter writer = new AckedWriter(cluster, topic, PARTITIONS, "all", false)) {
                    await().atMost(HALT_TIMEOUT).until(() -> !node.isRunning());
                    int atHalt = writer.ackedCount();
                    await().atMost(HALT_TIMEOUT).until(() -> writer.ackedCount() >= atHalt + RECORDS_AFTER_HALT);
                    writer.stopAndCheck();
                    acked = writer.acked();
                }

                // Then: it halted for its disk ("Shutdown broker because all log dirs in ... have failed", or the
                // metadata log dir when the Raft log's write failed first), with exit code 1
                assertThat(node.exitCode()).isEqualTo(OptionalInt.of(1));
                assertThat(node.logLinesContaining("Shutdown broker because ")).singleElement().asString()
                        .contains(node.dataDir().toString());

                // When: space is freed and it starts again
                disk.resize(8 * DISK_MIB);
                cluster.startNode(node);

                // Then: it rejoins every ISR, and every acknowledged record is read back
                ReplicationClients.awaitFullIsr(admin, List.of(topic));
                AckedWriter.assertEveryAckedRecordReadOnceInOrder(cluster, acked);
            }
        }
    }
}
