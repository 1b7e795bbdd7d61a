package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsResponseData;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three controller processes on loopback and this JVM as a broker-only listener: kill -9 of the active controller,
 * failover time, no committed change lost, brokers keep their sessions, a fenced broker's leaderships move.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
@Tag("faults")
class ControllerQuorumIT {

    private static final Logger LOGGER = LogManager.getLogger(ControllerQuorumIT.class);
    private static final int KILLS = Integer.getInteger("cairn.it.kills", 10);
    private static final long ELECTION_TIMEOUT_MS = Long.getLong("cairn.it.electionTimeoutMs", 1000);

    @Test
    void killingTheActiveControllerTenTimesLosesNoCommittedChangeAndFencedLeadershipsMove() throws Exception {
        // Kept under target/ so the controllers' process.log files can be read after a run.
        Path root = Path.of("target", "controller-quorum-it", Long.toString(System.currentTimeMillis()));
        String clusterId = MetaProperties.randomUuid().toString();
        ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor();
        try (ControllerCluster cluster = new ControllerCluster(root, clusterId, 3, ELECTION_TIMEOUT_MS)) {
            // Given three controllers and a broker-only node following the log as a listener
            cluster.startAll();
            Path listenerProps = cluster.writeProperties(100, Map.of("process.roles", "broker",
                    "metadata.listener.port", Integer.toString(TestRequests.freePort())));
            cluster.format(listenerProps);
            try (MetadataNode listener = MetadataNode.start(MetadataConfig.load(listenerProps))) {
                // (controller JVMs can take a while to start on a loaded machine)
                await().atMost(Duration.ofSeconds(120)).until(() -> listener.activeControllerId() > 0);
                // and three brokers that register and heartbeat through it
                Map<Integer, Long> epochs = new ConcurrentHashMap<>();
                Set<Integer> silent = ConcurrentHashMap.newKeySet();
                for (int broker = 11; broker <= 13; broker++) {
                    BrokerRegistrationResponseData registered = listener.registerBroker(
                            TestRequests.registration(broker, null)).get(60, TimeUnit.SECONDS);
                    assertThat(registered.errorCode()).isEqualTo(Errors.NONE.code());
                    epochs.put(broker, registered.brokerEpoch());
                }
                heartbeats.scheduleWithFixedDelay(() -> epochs.forEach((broker, epoch) -> {
                    if (!silent.contains(broker)) {
                        listener.heartbeat(TestRequests.heartbeat(broker, epoch));
                    }
                }), 0, 300, TimeUnit.MILLISECONDS);
                await().atMost(Duration.ofSeconds(30)).until(() -> listener.currentImage().brokers().values()
                        .stream().noneMatch(BrokerRegistration::fenced) && listener.currentImage().brokers().size() == 3);
                assertThat(create(listener, "base", 6, 3)).isEqualTo(Errors.NONE.code());

                // When the active controller is killed -9 again and again
                List<Long> failoversMs = new ArrayList<>();
                for (int kill = 0; kill < KILLS; kill++) {
                    await().atMost(Duration.ofSeconds(60)).until(() -> listener.activeControllerId() > 0);
                    int active = listener.activeControllerId();
                    long pid = cluster.pid(active);
                    long start = System.nanoTime();
                    cluster.kill(active);
                    // Then a new controller commits again (TOPIC_ALREADY_EXISTS when a routing try timed out after
                    // its command had committed and the retry found the topic: Kafka's admin client does the same)
                    String name = "after-kill-" + kill;
                    short error = create(listener, name, 1, 3);
                    if (error == Errors.TOPIC_ALREADY_EXISTS.code()) {
                        LOGGER.info("Kill {}: the create of {} was retried after it committed", kill, name);
                        assertThat(listener.currentImage().topic(name)).isPresent();
                    } else {
                        assertThat(error).isEqualTo(Errors.NONE.code());
                    }
                    long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                    failoversMs.add(elapsedMs);
                    LOGGER.info("Kill {}: controller {} (pid {}) killed, next commit after {} ms", kill, active, pid,
                            elapsedMs);
                    cluster.start(active);
                    // and the listener follows every committed change
                    int expected = kill + 2;
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> listener.currentImage().topicsById().size() == expected);
                    // give the restarted voter time to rejoin before the next kill
                    awaitQuietly(Duration.ofMillis(4 * ELECTION_TIMEOUT_MS));
                }
                List<Long> sorted = new ArrayList<>(failoversMs);
                Collections.sort(sorted);
                long median = sorted.get(sorted.size() / 2);
                long max = sorted.get(sorted.size() - 1);
                String summary = "FAILOVER over " + KILLS + " kills (election timeout " + ELECTION_TIMEOUT_MS
                        + " ms): median " + median + " ms, max " + max + " ms, all " + failoversMs;
                LOGGER.info(summary);
                System.out.println(summary);

                MetadataImage image = listener.currentImage();
                assertThat(image.topic("base")).isPresent();
                for (int kill = 0; kill < KILLS; kill++) {
                    assertThat(image.topic("after-kill-" + kill)).isPresent();
                }
                assertThat(image.brokers().values()).noneMatch(BrokerRegistration::fenced);

                // When broker 11 stops heartbeating
                silent.add(11);
                // Then it is fenced and every partition it led moves to another ISR member
                await().atMost(Duration.ofSeconds(30)).until(() -> listener.currentImage().broker(11).orElseThrow()
                        .fenced());
                await().atMost(Duration.ofSeconds(30)).until(() -> listener.currentImage().leaderships(11).isEmpty());
                MetadataImage fenced = listener.currentImage();
                for (var topic : fenced.topicsById().values()) {
                    for (PartitionRegistration p : topic.partitions().values()) {
                        assertThat(p.leader()).isNotEqualTo(11);
                        boolean otherUsableInIsr = p.isr().stream().anyMatch(b -> b != 11
                                && fenced.broker(b).map(BrokerRegistration::usable).orElse(false));
                        if (otherUsableInIsr) {
                            // the leadership moved to an ISR member and 11 left the ISR
                            assertThat(p.leader()).isIn(p.isr());
                            assertThat(p.isr()).doesNotContain(11);
                        } else {
                            // 11 was the last ISR member (others were dropped earlier): no clean leader
                            assertThat(p.leader()).isEqualTo(PartitionRegistration.NO_LEADER);
                        }
                    }
                }
                assertThat(median).isLessThan(15_000);
            }
        } finally {
            heartbeats.shutdownNow();
        }
    }

    private static short create(MetadataNode node, String name, int partitions, int replication) throws Exception {
        CreateTopicsResponseData response = node.createTopics(TestRequests.createTopic(name, partitions, replication,
                Map.of())).get(60, TimeUnit.SECONDS);
        return response.topics().get(0).errorCode();
    }

    private static void awaitQuietly(Duration duration) {
        long until = System.nanoTime() + duration.toNanos();
        await().pollInterval(Duration.ofMillis(50)).atMost(duration.plusSeconds(1))
                .until(() -> System.nanoTime() >= until);
    }
}
