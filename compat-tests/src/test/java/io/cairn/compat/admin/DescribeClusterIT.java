package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeClusterRequestData;
import io.cairn.wire.message.DescribeClusterResponseData;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.acl.AclOperation;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DescribeCluster (KIP-700; endpoint types KIP-919, fenced brokers KIP-1073) as the admin client and a raw client see
 * it, the same on Cairn and the reference Kafka: the cluster id, the broker with its client endpoint and fencing
 * state, a live broker as controller, the cluster's authorized operations without an authorizer, and the endpoint
 * type errors of a broker asked for controllers or for an unknown type.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class DescribeClusterIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void theAdminClientDescribesTheBrokerItsControllerAndTheClusterOperations(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        try (Admin admin = GroupClients.admin(broker)) {
            // When
            DescribeClusterResult cluster = admin.describeCluster(new DescribeClusterOptions()
                    .includeAuthorizedOperations(true).includeFencedBrokers(true));

            // Then
            assertThat(cluster.clusterId().get(30, TimeUnit.SECONDS)).isNotBlank();
            List<Node> nodes = List.copyOf(cluster.nodes().get(30, TimeUnit.SECONDS));
            assertThat(nodes).extracting(Node::id, Node::host, Node::port, Node::isFenced)
                    .containsExactly(org.assertj.core.api.Assertions.tuple(1, broker.host(), broker.port(), false));
            assertThat(cluster.controller().get(30, TimeUnit.SECONDS).id()).isEqualTo(1);
            assertThat(cluster.authorizedOperations().get(30, TimeUnit.SECONDS)).containsExactlyInAnyOrderElementsOf(
                    Set.of(AclOperation.CREATE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION,
                            AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE));
            assertThat(admin.describeCluster().authorizedOperations().get(30, TimeUnit.SECONDS)).isNull();
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aBrokerAskedForControllersOrAnUnknownEndpointTypeSaysSo(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            // When
            DescribeClusterResponseData controllers = client.sendAndReceive(new DescribeClusterRequestData()
                    .setEndpointType((byte) 2), (short) 1, TIMEOUT);
            DescribeClusterResponseData unknown = client.sendAndReceive(new DescribeClusterRequestData()
                    .setEndpointType((byte) 7), (short) 2, TIMEOUT);
            DescribeClusterResponseData v0 = client.sendAndReceive(new DescribeClusterRequestData(), (short) 0,
                    TIMEOUT);

            // Then
            assertThat(controllers.errorCode()).isEqualTo(Errors.MISMATCHED_ENDPOINT_TYPE.code());
            assertThat(controllers.errorMessage()).isEqualTo("The request was sent to an endpoint of type BROKER, "
                    + "but we wanted an endpoint of type CONTROLLER");
            assertThat(unknown.errorCode()).isEqualTo(Errors.UNSUPPORTED_ENDPOINT_TYPE.code());
            assertThat(unknown.errorMessage()).isEqualTo("Unsupported endpoint type 7");
            assertThat(v0.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(v0.brokers()).extracting(DescribeClusterResponseData.DescribeClusterBroker::brokerId)
                    .containsExactly(1);
            assertThat(v0.clusterAuthorizedOperations()).isEqualTo(Integer.MIN_VALUE);
        }
    }
}
