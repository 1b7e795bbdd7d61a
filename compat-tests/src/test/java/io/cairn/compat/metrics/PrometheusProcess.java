package io.cairn.compat.metrics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.TestDirectories;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real Prometheus server (Debian's {@code prometheus} package) scraping one target every second, on a free
 * loopback port with its TSDB in a temporary directory, and a client of its HTTP query API. Stopped by its PID.
 *
 * <p>Not thread-safe; one per test.
 */
final class PrometheusProcess implements AutoCloseable {

    static final String JOB = "cairn";

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private final Path dir;
    private final int port;
    private final Process process;
    private final HttpClient http = HttpClient.newHttpClient();

    private PrometheusProcess(Path dir, int port, Process process) {
        this.dir = dir;
        this.port = port;
        this.process = process;
    }

    /** The {@code prometheus} binary on PATH, if any. */
    static Optional<Path> binary() {
        return Arrays.stream(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(d -> !d.isBlank()).map(d -> Paths.get(d, "prometheus")).filter(Files::isExecutable)
                .findFirst();
    }

    /** Starts {@code binary} scraping {@code http://127.0.0.1:targetPort/metrics}; returns once it is ready. */
    static PrometheusProcess start(Path binary, int targetPort) throws IOException, InterruptedException {
        return start(binary, List.of(targetPort));
    }

    /** Starts {@code binary} scraping {@code /metrics} on each of {@code targetPorts} (one job, one instance each). */
    static PrometheusProcess start(Path binary, List<Integer> targetPorts) throws IOException, InterruptedException {
        String targets = String.join(", ", targetPorts.stream().map(port -> "'127.0.0.1:" + port + "'").toList());
        Path dir = TestDirectories.createTempDirectory("cairn-prometheus-");
        Path config = Files.writeString(dir.resolve("prometheus.yml"), String.join("\n",
                "global:",
                "  scrape_interval: 1s",
                "  evaluation_interval: 1s",
                "scrape_configs:",
                "  - job_name: " + JOB,
                "    metrics_path: /metrics",
                "    static_configs:",
                "      - targets: [" + targets + "]",
                ""), StandardCharsets.UTF_8);
        int port = FreePorts.freePort();
        List<String> command = new ArrayList<>(List.of(binary.toString(), "--config.file=" + config,
                "--web.listen-address=127.0.0.1:" + port, "--storage.tsdb.path=" + dir.resolve("data")));
        Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        PrometheusProcess prometheus = new PrometheusProcess(dir, port, process);
        try {
            prometheus.awaitReady();
        } catch (IOException | InterruptedException | RuntimeException | AssertionError e) {
            prometheus.close();
            throw e;
        }
        return prometheus;
    }

    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError("prometheus exited with " + process.exitValue() + ":\n" + log());
            }
            try {
                HttpResponse<String> ready = http.send(HttpRequest.newBuilder(uri("/-/ready")).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (ready.statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            process.waitFor(200, TimeUnit.MILLISECONDS);
        }
        throw new AssertionError("prometheus was not ready within " + START_TIMEOUT + ":\n" + log());
    }

    /** The instant vector of {@code promql}: one value per series, in Prometheus' order. */
    List<Sample> query(String promql) {
        JsonNode body = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8), promql);
        List<Sample> samples = new ArrayList<>();
        for (JsonNode series : body.path("data").path("result")) {
            samples.add(new Sample(series.path("metric").toString(),
                    Double.parseDouble(series.path("value").get(1).asText())));
        }
        return samples;
    }

    /**
     * The range vector of {@code promql} from {@code startSeconds} to {@code endSeconds} (Unix time) at
     * {@code stepSeconds}: one series per label set.
     */
    List<Series> queryRange(String promql, long startSeconds, long endSeconds, int stepSeconds) {
        JsonNode body = get("/api/v1/query_range?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8)
                + "&start=" + startSeconds + "&end=" + endSeconds + "&step=" + stepSeconds, promql);
        List<Series> series = new ArrayList<>();
        for (JsonNode result : body.path("data").path("result")) {
            JsonNode values = result.path("values");
            double[] times = new double[values.size()];
            double[] points = new double[values.size()];
            for (int i = 0; i < values.size(); i++) {
                times[i] = values.get(i).get(0).asDouble();
                points[i] = Double.parseDouble(values.get(i).get(1).asText());
            }
            series.add(new Series(result.path("metric"), times, points));
        }
        return series;
    }

    private JsonNode get(String pathAndQuery, String promql) {
        try {
            HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri(pathAndQuery)).build(),
                    HttpResponse.BodyHandlers.ofString());
            JsonNode body = JSON.readTree(response.body());
            if (response.statusCode() != 200 || !"success".equals(body.path("status").asText())) {
                throw new AssertionError("Query " + promql + " failed: " + response.statusCode() + " "
                        + response.body());
            }
            return body;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot query prometheus at " + uri("/"), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted querying " + promql, e);
        }
    }

    /** The single value of {@code promql}; fails unless exactly one series answers. */
    double value(String promql) {
        List<Sample> samples = query(promql);
        if (samples.size() != 1) {
            throw new AssertionError("Query " + promql + " returned " + samples.size() + " series: " + samples);
        }
        return samples.get(0).value();
    }

    String log() {
        try {
            return Files.readString(dir.resolve("prometheus.log"));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        TestDirectories.deleteRecursively(dir);
    }

    /** One series of a query answer: its labels (as JSON) and its value. */
    record Sample(String labels, double value) {
    }

    /** One series of a range query: its labels, and its values at the given Unix times. */
    record Series(JsonNode labels, double[] times, double[] values) {
    }
}
