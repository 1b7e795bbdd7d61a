package io.cairn.compat.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.common.Node;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kafka's stock {@code kafka-cluster} tool ({@code org.apache.kafka.tools.ClusterTool}), the same scenarios against
 * Cairn and the reference Kafka: {@code cluster-id} prints the id DescribeCluster reports, and {@code unregister
 * --id} (UnregisterBroker, forwarded to the controller) fails for a broker that is not registered and removes a
 * stopped broker's registration, after which DescribeCluster no longer lists it even among the fenced brokers.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class ClusterToolIT {

    private static final String CLUSTER_TOOL = "org.apache.kafka.tools.ClusterTool";

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void clusterIdPrintsTheIdAndUnregisteringAnUnknownBrokerFails(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String clusterId;
        try (Admin admin = GroupClients.admin(broker)) {
            clusterId = admin.describeCluster().clusterId().get(30, TimeUnit.SECONDS);
        }

        // When
        JavaTool.Result id = tool(broker.bootstrapServers(), "cluster-id");
        JavaTool.Result unknown = tool(broker.bootstrapServers(), "unregister", "--id", "77");

        // Then
        assertThat(id.exitCode()).as("%s", id).isZero();
        assertThat(id.stdout().lines().toList()).as("%s", id).containsExactly("Cluster ID: " + clusterId);
        assertThat(unknown.exitCode()).as("%s", unknown).isEqualTo(1);
        assertThat(unknown.stdout()).as("%s", unknown).isEmpty();
        assertThat(unknown.stderr()).as("%s", unknown).contains("BrokerIdNotRegisteredException");
    }

    @KafkaHalfInFaults
    void unregisterRemovesAStoppedBrokersRegistration(BrokerKind kind) throws Exception {
        // Given: three nodes, the third stopped (fenced once its session expires, still registered).
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of())) {
            cluster.start();
            String bootstrap = cluster.node(1).bootstrapServers();
            cluster.node(3).stop();
            try (Admin admin = admin(bootstrap)) {
                assertThat(nodeIds(admin)).contains(3);

                // When
                JavaTool.Result unregistered = tool(bootstrap, "unregister", "--id", "3");

                // Then
                assertThat(unregistered.exitCode()).as("%s", unregistered).isZero();
                assertThat(unregistered.stdout().lines().toList()).as("%s", unregistered)
                        .containsExactly("Broker 3 is no longer registered.");
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                        assertThat(nodeIds(admin)).containsExactlyInAnyOrder(1, 2));
            }
        }
    }

    private static List<Integer> nodeIds(Admin admin) throws Exception {
        return admin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true)).nodes()
                .get(30, TimeUnit.SECONDS).stream().map(Node::id).toList();
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000);
        return Admin.create(props);
    }

    private static JavaTool.Result tool(String bootstrap, String... command) {
        // kafka-cluster takes the subcommand first, then its options.
        String[] args = new String[command.length + 2];
        args[0] = command[0];
        args[1] = "--bootstrap-server";
        args[2] = bootstrap;
        System.arraycopy(command, 1, args, 3, command.length - 1);
        return KafkaDistribution.tool(CLUSTER_TOOL).args(args).timeout(Duration.ofSeconds(60)).build().run();
    }
}
