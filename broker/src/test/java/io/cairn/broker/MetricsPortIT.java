package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.config.BrokerConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code /metrics} port is Cairn's own, not Kafka's: a broker whose {@code server.properties} does not set
 * {@code metrics.port} starts and serves clients when the default (9404) is taken, as a second node on one host
 * started from Kafka's files finds it; an explicit {@code metrics.port} that cannot be bound still stops the start.
 */
class MetricsPortIT {

    @TempDir
    Path dataDir;

    private Map<String, String> props() {
        Map<String, String> props = new HashMap<>();
        props.put("listeners", "PLAINTEXT://127.0.0.1:0");
        props.put("log.dirs", dataDir.toString());
        return props;
    }

    /** Binds the wildcard address at {@code port}, or returns null when something else already holds it. */
    private static ServerSocket holdOrNull(int port) {
        try {
            ServerSocket socket = new ServerSocket();
            socket.bind(new InetSocketAddress(port));
            return socket;
        } catch (IOException e) {
            return null;
        }
    }

    @Test
    void aTakenDefaultMetricsPortShouldNotStopTheBroker() throws Exception {
        // Given: the default metrics port taken (by this test, or by whatever already holds it)
        try (ServerSocket taken = holdOrNull(9404)) {
            CairnServer server = new CairnServer(BrokerConfig.fromMap(props()), java.util.List.of());
            try {
                // When
                server.start();

                // Then: no metrics endpoint, and clients are served
                assertThat(server.metricsPort()).isEqualTo(-1);
                try (RawConnection connection = new RawConnection("127.0.0.1", server.boundPort("PLAINTEXT"))) {
                    connection.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 7));
                    ApiVersionsResponseData body = KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 3)
                            .body();
                    assertThat(body.errorCode()).isEqualTo(Errors.NONE.code());
                }
            } finally {
                server.close();
            }
        }
    }

    @Test
    void aTakenExplicitMetricsPortShouldStopTheStartWithTheKeyNamed() throws Exception {
        // Given
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(0));
            Map<String, String> props = props();
            props.put("metrics.port", Integer.toString(taken.getLocalPort()));
            CairnServer server = new CairnServer(BrokerConfig.fromMap(props), java.util.List.of());
            try {
                // When / Then
                assertThatThrownBy(server::start).hasMessageContaining("Cannot bind the metrics endpoint")
                        .hasMessageContaining("metrics.port");
            } finally {
                server.close();
            }
        }
    }
}
