package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.StorageTool;
import io.cairn.metadata.TestRequests;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AllocateProducerIdsRequestData;
import io.cairn.wire.message.AllocateProducerIdsResponseData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Metadata commit latency: a command that writes one record (AllocateProducerIds), submitted on the active
 * controller, until its future completes (committed by a majority, fsynced, applied). One voter, then three voters
 * in this JVM on loopback.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class MetadataCommitLatencyIT {

    private static final int WARMUP = 200;
    private static final int SAMPLES = Integer.getInteger("cairn.it.latencySamples", 1000);

    @TempDir
    Path dir;

    @Test
    void oneVoterCommitsWithinMilliseconds() throws Exception {
        int port = TestRequests.freePort();
        MetadataConfig config = MetadataConfig.from(Map.of("process.roles", "broker,controller", "node.id", "1",
                "controller.quorum.voters", "1@localhost:" + port, "metadata.log.dir", dir.toString()));
        try (MetadataNode node = MetadataNode.start(config)) {
            long[] micros = measure(node);
            report("1 voter", micros);
        }
    }

    @Test
    void threeVotersOnLoopbackCommitWithinMilliseconds() throws Exception {
        Map<Integer, Integer> ports = new HashMap<>();
        for (int id = 1; id <= 3; id++) {
            ports.put(id, TestRequests.freePort());
        }
        String voters = "1@localhost:" + ports.get(1) + ",2@localhost:" + ports.get(2) + ",3@localhost:"
                + ports.get(3);
        String clusterId = MetaProperties.randomUuid().toString();
        List<MetadataNode> nodes = new ArrayList<>();
        try {
            for (int id = 1; id <= 3; id++) {
                MetadataConfig config = MetadataConfig.from(Map.of("process.roles", "controller", "node.id",
                        Integer.toString(id), "controller.quorum.voters", voters, "metadata.log.dir",
                        dir.resolve("n" + id).toString(), "log.dirs", dir.resolve("n" + id).toString()));
                StorageTool.format(config, clusterId, false,
                        new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
                nodes.add(MetadataNode.start(config));
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> nodes.stream()
                    .anyMatch(MetadataNode::isActiveController));
            MetadataNode active = nodes.stream().filter(MetadataNode::isActiveController).findFirst().orElseThrow();
            long[] micros = measure(active);
            report("3 voters", micros);
        } finally {
            nodes.forEach(MetadataNode::close);
        }
    }

    private static long[] measure(MetadataNode node) throws Exception {
        BrokerRegistrationResponseData registered = node.registerBroker(TestRequests.registration(1, null))
                .get(60, TimeUnit.SECONDS);
        assertThat(registered.errorCode()).isEqualTo(Errors.NONE.code());
        AllocateProducerIdsRequestData request = new AllocateProducerIdsRequestData().setBrokerId(1)
                .setBrokerEpoch(registered.brokerEpoch());
        long[] micros = new long[SAMPLES];
        for (int i = 0; i < WARMUP + SAMPLES; i++) {
            long start = System.nanoTime();
            AllocateProducerIdsResponseData response = node.allocateProducerIds(request).get(30, TimeUnit.SECONDS);
            long elapsed = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
            assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
            if (i >= WARMUP) {
                micros[i - WARMUP] = elapsed;
            }
        }
        return micros;
    }

    private static void report(String what, long[] micros) {
        long[] sorted = micros.clone();
        Arrays.sort(sorted);
        long median = sorted[sorted.length / 2];
        long p99 = sorted[(int) Math.ceil(sorted.length * 0.99) - 1];
        String line = String.format("LATENCY %s: median %.2f ms, p99 %.2f ms, max %.2f ms over %d sequential commits",
                what, median / 1000.0, p99 / 1000.0, sorted[sorted.length - 1] / 1000.0, sorted.length);
        System.out.println(line);
        assertThat(median).isLessThan(TimeUnit.SECONDS.toMicros(1));
    }
}
