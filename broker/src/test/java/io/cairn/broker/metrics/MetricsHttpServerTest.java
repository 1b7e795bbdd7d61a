package io.cairn.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The endpoint on a free loopback port: /metrics with the JVM metrics under the Prometheus client's names. */
class MetricsHttpServerTest {

    private final BrokerMetrics metrics = BrokerMetrics.create();
    private final HttpClient client = HttpClient.newHttpClient();
    private MetricsHttpServer server;

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
        metrics.close();
    }

    @Test
    void metricsPathShouldServeTheTextFormatWithJvmAndProcessMetrics() throws Exception {
        // Given
        server = MetricsHttpServer.start("127.0.0.1", 0, metrics);

        // When
        HttpResponse<String> response = get("/metrics");

        // Then
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type")).hasValue("text/plain; version=0.0.4; charset=utf-8");
        assertThat(response.body()).contains("jvm_memory_used_bytes{area=\"heap\"}", "jvm_threads_current",
                "jvm_gc_collection_seconds_count", "process_cpu_seconds_total", "process_open_fds");
    }

    @Test
    void otherPathsShouldGetNotFound() throws Exception {
        // Given
        server = MetricsHttpServer.start("127.0.0.1", 0, metrics);

        // When
        HttpResponse<String> response = get("/other");

        // Then
        assertThat(response.statusCode()).isEqualTo(404);
    }

    private HttpResponse<String> get(String path) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
