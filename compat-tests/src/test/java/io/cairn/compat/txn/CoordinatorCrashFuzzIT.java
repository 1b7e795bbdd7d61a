package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.CairnProcess;
import io.cairn.wire.message.CoordinatorFuzz;
import io.cairn.wire.message.RandomRequests;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Wire's {@link CoordinatorFuzz} against a Cairn process that is killed with SIGKILL and started again while four raw
 * clients interleave group and transaction requests ({@code -Dcairn.fuzz.kills}, default 3): the group and transaction
 * coordinators recover from logs cut wherever the kill fell (joins half-written, transactions between PrepareCommit
 * and their markers, offsets committed in a transaction) and load them. Every request is answered in time with a
 * response kafka-clients parses and no {@code UNKNOWN_SERVER_ERROR}, or cut by a kill; then stock clients take every
 * transactional id and group over and no transaction is left open; the broker logged no ERROR (but Kafka's own line
 * for a rebalance no member came back to) and no leak. {@code -Dcairn.fuzz.seed} repeats a run,
 * {@code -Dcairn.fuzz.ops} sets the requests per client (default 400).
 */
@Timeout(300)
@Tag("faults")
@ExtendWith(BrokerLogsExtension.class)
class CoordinatorCrashFuzzIT {

    private static final String TOPIC = "topic-1";
    private static final int PARTITIONS = 3;
    private static final int CLIENTS = 4;
    private static final int OPS = Integer.getInteger("cairn.fuzz.ops", 400);
    private static final int KILLS = Integer.getInteger("cairn.fuzz.kills", 3);

    @Test
    void coordinatorsRecoverWhateverAKillLeftAndAStockClientCanTakeOver() throws Exception {
        CairnProcess.Builder builder = CairnProcess.builder();
        CoordinatorFuzz.brokerConfig().forEach(builder::config);
        try (CairnProcess broker = builder.build()) {
            // Given
            broker.start();
            Uuid topicId;
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    broker.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 1))).all()
                        .get(30, TimeUnit.SECONDS);
                topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC)
                        .topicId();
            }
            long seed = Long.getLong("cairn.fuzz.seed", System.nanoTime());
            CoordinatorFuzz fuzz = new CoordinatorFuzz(new RandomRequests.Target(TOPIC, topicId, PARTITIONS),
                    () -> new InetSocketAddress(broker.host(), broker.port()));

            // When
            CompletableFuture<Void> kills = fuzz.restartsDuring(KILLS, seed, () -> {
                broker.kill();
                broker.start();
            });
            fuzz.run(CLIENTS, OPS, seed);
            kills.get(3, TimeUnit.MINUTES);
            System.out.println("Coordinator crash fuzz, seed " + seed + ": " + fuzz.outcomes());

            // Then
            assertThat(fuzz.failures()).as("seed %d", seed).isEmpty();
            fuzz.takeOverWithStockClients(broker.bootstrapServers());
            assertThat(broker.logLinesContaining(" ERROR ")).as("seed %d", seed)
                    .filteredOn(line -> !line.contains("could not complete its rebalance because no member"))
                    .isEmpty();
            assertThat(broker.logLinesContaining("LEAK:")).as("seed %d", seed).isEmpty();
        }
    }
}
