package io.cairn.compat.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * testkit's {@link BrokerCluster#activeControllerId} on 3 combined nodes of each kind (DescribeQuorum on Kafka, the
 * controller's log line on a broker that does not serve it): it names a running node, and after that node is killed
 * (SIGKILL) the new active controller, another node.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class ActiveControllerIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void theActiveControllerIsFoundAndAfterItIsKilledItsSuccessor(BrokerKind kind) {
        try (BrokerCluster cluster = BrokerCluster.create(kind, 3, Map.of())) {
            // Given
            cluster.start();
            int first = cluster.activeControllerId(TIMEOUT);
            assertThat(first).isBetween(1, 3);

            // When
            cluster.node(first).kill();

            // Then
            int second = cluster.activeControllerId(TIMEOUT);
            assertThat(second).as("the controller after node %d was killed", first).isBetween(1, 3)
                    .isNotEqualTo(first);
            assertThat(cluster.node(second).isRunning()).isTrue();
        }
    }
}
