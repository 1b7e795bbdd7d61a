package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.LeakDetection;
import io.cairn.wire.message.CoordinatorFuzz;
import io.cairn.wire.message.RandomRequests;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The group and transaction coordinators under {@link CoordinatorFuzz}: four raw clients interleave plausible group
 * and transaction requests built from what earlier answers said, at random versions, against an in-process broker
 * that restarts midway ({@code -Dcairn.fuzz.restarts}, default 1) so that the coordinators load whatever state the
 * fuzzers left them in, transactions mid-commit included. Every request is answered in time with a response
 * kafka-clients parses and no {@code UNKNOWN_SERVER_ERROR}; then stock clients take every transactional id and group
 * over, no transaction is left open, and nothing was logged at ERROR (but Kafka's own line for a rebalance no member
 * came back to), no stack trace at WARN, no buffer leaked. {@code -Dcairn.fuzz.seed} repeats a run,
 * {@code -Dcairn.fuzz.ops} sets the requests per client (default 300). compat-tests' {@code CoordinatorCrashFuzzIT}
 * does the same to a broker process it kills.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CoordinatorFuzzIT {

    private static final String TOPIC = "topic-1";
    private static final int PARTITIONS = 3;
    private static final int CLIENTS = 4;
    private static final int OPS = Integer.getInteger("cairn.fuzz.ops", 300);
    private static final int RESTARTS = Integer.getInteger("cairn.fuzz.restarts", 1);

    @TempDir
    static Path dataDir;

    private static LogCapture logs;
    private static volatile InProcessBroker broker;
    private static Uuid topicId;

    /** {@link CoordinatorFuzz#brokerConfig()} on one node: the internal topics with one replica. */
    private static Map<String, String> config() {
        Map<String, String> config = CoordinatorFuzz.brokerConfig();
        config.put("offsets.topic.replication.factor", "1");
        config.put("transaction.state.log.replication.factor", "1");
        config.put("transaction.state.log.min.isr", "1");
        config.put("share.coordinator.state.topic.replication.factor", "1");
        config.put("share.coordinator.state.topic.min.isr", "1");
        return config;
    }

    @BeforeAll
    static void startBroker() throws Exception {
        logs = LogCapture.start();
        broker = InProcessBroker.start(dataDir, config());
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all().get(30, TimeUnit.SECONDS);
            broker.awaitHosted(TOPIC, PARTITIONS);
            topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC)
                    .topicId();
        }
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
        if (logs != null) {
            logs.close();
        }
    }

    private static String bootstrap() {
        return "127.0.0.1:" + broker.port();
    }

    /**
     * The ERROR lines a run against Kafka logs too. Its coordinator logs a rebalance that times out with no member
     * back. The stock consumer logs every STALE_MEMBER_EPOCH answer to its OffsetFetch or OffsetCommit, then
     * retries with its new epoch. It gets one when a heartbeat moves its member epoch on while the request is in
     * flight: the fuzzers' members expire one by one during the take-over, and each expiry brings it more partitions.
     * Kafka's coordinator also wants the exact member epoch (ConsumerGroup#validateOffsetFetch).
     */
    private static boolean expectedError(String message) {
        return message.contains("could not complete its rebalance because no member")
                || message.contains("OffsetFetch failed with STALE_MEMBER_EPOCH")
                || message.contains("with stale member epoch error");
    }

    @Test
    void coordinatorsAnswerEveryInterleavingAndLeaveNothingThatBlocksAStockClient() throws Exception {
        // Given
        long seed = Long.getLong("cairn.fuzz.seed", System.nanoTime());
        CoordinatorFuzz fuzz = new CoordinatorFuzz(new RandomRequests.Target(TOPIC, topicId, PARTITIONS),
                () -> new InetSocketAddress("127.0.0.1", broker.port()));

        // When
        CompletableFuture<Void> restarts = fuzz.restartsDuring(RESTARTS, seed, () -> {
            broker.close();
            try {
                broker = InProcessBroker.start(dataDir, config());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        fuzz.run(CLIENTS, OPS, seed);
        restarts.get(2, TimeUnit.MINUTES);
        System.out.println("Coordinator fuzz, seed " + seed + ": " + fuzz.outcomes());

        // Then
        assertThat(fuzz.failures()).as("seed %d", seed).isEmpty();
        fuzz.takeOverWithStockClients(bootstrap());
        assertThat(logs.messages(Level.ERROR, m -> !expectedError(m))).as("seed %d", seed).isEmpty();
        assertThat(logs.stackTracesAtWarnOrAbove()).as("seed %d", seed).isEmpty();
    }
}
