package io.cairn.compat.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.group.GroupClients;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.ClusterNode;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.KafkaReferenceProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.RaftVoterEndpoint;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.DuplicateVoterException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.errors.VoterNotFoundException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Changing the controller quorum at run time (KIP-853) as Kafka's documentation does it, on Cairn as on the reference
 * Kafka 4.1.1: three combined nodes with {@code controller.quorum.bootstrap.servers}, formatted with
 * {@code --initial-controllers}; a fourth formatted with {@code --no-initial-controllers} is added with
 * {@code kafka-metadata-quorum add-controller} (its configuration as {@code --command-config}), the four voters
 * survive a restart of every node, and the fourth is removed again with {@code Admin.removeRaftVoter} (it goes on
 * as an observer), while topics are created all along; Kafka's error codes for a duplicate voter and an unknown voter key (the Kafka half of this
 * slow scenario runs in the faults profile, or with {@code -Dcairn.slow.kinds=CAIRN,KAFKA}); and a static quorum
 * ({@code controller.quorum.voters}, kraft.version 0) refuses voter changes with UNSUPPORTED_VERSION.
 */
@Timeout(420)
@ExtendWith(BrokerLogsExtension.class)
class ControllerQuorumChangeIT {

    private static final String TOOL = "org.apache.kafka.tools.MetadataQuorumCommand";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aStaticQuorumRefusesVoterChangesWithUnsupportedVersion(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        try (Admin admin = admin(broker.bootstrapServers())) {
            // When
            Throwable add = catchCause(() -> admin.addRaftVoter(7, Uuid.randomUuid(),
                    Set.of(new RaftVoterEndpoint("CONTROLLER", "localhost", 19093))).all().get(30, TimeUnit.SECONDS));
            Throwable remove = catchCause(() -> admin.removeRaftVoter(1, Uuid.randomUuid()).all()
                    .get(30, TimeUnit.SECONDS));

            // Then
            assertThat(add).isInstanceOf(UnsupportedVersionException.class).hasMessageContaining(
                    "Cluster doesn't support adding voter because the kraft.version feature is 0");
            assertThat(remove).isInstanceOf(UnsupportedVersionException.class).hasMessageContaining(
                    "Cluster doesn't support removing voter because the kraft.version feature is 0");
        }
    }

    @KafkaHalfInFaults
    void threeVotersGrowToFourAndShrinkBackToThreeWhileTopicsAreCreated(BrokerKind kind) throws Exception {
        // Given: three voters formatted with --initial-controllers, a fourth controller with --no-initial-controllers
        int[] ports = FreePorts.freePorts(8);
        String host = FreePorts.LOOPBACK;
        String clusterId = Uuid.randomUuid().toString();
        List<Uuid> directoryIds = IntStream.range(0, 3).mapToObj(i -> Uuid.randomUuid()).toList();
        String bootstrap = String.join(",", IntStream.rangeClosed(1, 3).mapToObj(id -> host + ":" + ports[3 + id])
                .toList());
        String initial = String.join(",", IntStream.rangeClosed(1, 3).mapToObj(id -> id + "@" + host + ":"
                + ports[3 + id] + ":" + directoryIds.get(id - 1)).toList());
        List<BrokerProcess> nodes = new ArrayList<>();
        for (int id = 1; id <= 4; id++) {
            List<String> formatArgs = id <= 3 ? List.of("--initial-controllers", initial)
                    : List.of("--no-initial-controllers");
            nodes.add(node(kind, id, ports[id - 1], ports[3 + id], bootstrap, clusterId, formatArgs));
        }
        String clients = String.join(",", IntStream.range(0, 3).mapToObj(i -> host + ":" + ports[i]).toList());
        TopicCreator topics = new TopicCreator(clients);
        try {
            allOf(nodes.subList(0, 3).stream().map(node -> CompletableFuture.runAsync(node::start)).toList());
            BrokerProcess fourth = nodes.get(3);
            // Cairn's fourth serves clients only once it is a voter, caught up and unfenced (its start ends after
            // the add); Kafka's starts as an observer.
            CompletableFuture<Void> fourthStarted = CompletableFuture.runAsync(fourth::start);
            await().atMost(TIMEOUT).ignoreExceptions().until(() -> fourthStarted.isDone()
                    || !fourth.logLinesContaining("Metadata node 4 started").isEmpty());
            Uuid fourthDirectory = Uuid.fromString(readProperty(fourth, "directory.id"));
            Path fourthConfig = controllerConfig(fourth, ports[3], ports[7]);
            topics.start();
            try (Admin admin = admin(clients)) {
                awaitVoters(admin, Set.of(1, 2, 3));

                // When: kafka-metadata-quorum add-controller, given the fourth's configuration
                JavaTool.Result added = tool(clients, "--command-config", fourthConfig.toString(), "add-controller");

                // Then
                assertThat(added.exitCode()).as("%s", added).isZero();
                assertThat(added.stdout()).contains("Added controller 4 with directory id " + fourthDirectory
                        + " and endpoints: CONTROLLER://" + host + ":" + ports[7]);
                fourthStarted.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                QuorumInfo four = awaitVoters(admin, Set.of(1, 2, 3, 4));
                assertThat(four.voters()).filteredOn(v -> v.replicaId() == 4).singleElement()
                        .satisfies(v -> assertThat(v.replicaDirectoryId()).isEqualTo(fourthDirectory));
                assertThat(four.voters()).filteredOn(v -> v.replicaId() == 1).singleElement()
                        .satisfies(v -> assertThat(v.replicaDirectoryId()).isEqualTo(directoryIds.get(0)));
                assertThat(four.nodes().get(4).endpoints()).singleElement().satisfies(endpoint -> {
                    assertThat(endpoint.name()).isEqualTo("CONTROLLER");
                    assertThat(endpoint.port()).isEqualTo(ports[7]);
                });
                JavaTool.Result replication = tool(clients, "describe", "--replication");
                assertThat(replication.exitCode()).as("%s", replication).isZero();
                assertThat(replication.stdout()).containsPattern("(?m)^4\\s+" + fourthDirectory
                        + "\\s+\\d+\\s+\\d+\\s+.*(Leader|Follower)\\s*$");
                assertThat(catchCause(() -> admin.addRaftVoter(4, fourthDirectory, Set.of(new RaftVoterEndpoint(
                        "CONTROLLER", host, ports[7]))).all().get(30, TimeUnit.SECONDS)))
                        .isInstanceOf(DuplicateVoterException.class);
                assertThat(catchCause(() -> admin.removeRaftVoter(4, Uuid.randomUuid()).all()
                        .get(30, TimeUnit.SECONDS))).isInstanceOf(VoterNotFoundException.class);
            }
            topics.stop();
            assertThat(topics.failures()).isEmpty();
            int createdWhileAdding = topics.created().size();

            // The four voters are the quorum's voter set in the metadata log: they outlive a restart of every node,
            // though three of them were formatted with three voters and the fourth with none.
            allOf(nodes.stream().map(node -> CompletableFuture.runAsync(node::stop)).toList());
            allOf(nodes.stream().map(node -> CompletableFuture.runAsync(node::start)).toList());
            try (Admin admin = admin(clients)) {
                awaitVoters(admin, Set.of(1, 2, 3, 4));
                topics.start();

                // When: the fourth is removed by its voter key
                admin.removeRaftVoter(4, fourthDirectory).all().get(60, TimeUnit.SECONDS);

                // Then
                QuorumInfo three = awaitVoters(admin, Set.of(1, 2, 3));
                assertThat(three.nodes()).doesNotContainKey(4);
                // The removed controller goes on following the metadata log as an observer.
                await().atMost(TIMEOUT).ignoreExceptions().untilAsserted(() -> assertThat(admin
                        .describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS).observers())
                        .anySatisfy(o -> assertThat(o.replicaId()).isEqualTo(4)));
                int before = topics.created().size();
                await().atMost(TIMEOUT).until(() -> topics.created().size() > before + 2);
                topics.stop();
                assertThat(topics.failures()).isEmpty();
                assertThat(createdWhileAdding).isPositive();
                Set<String> listed = admin.listTopics().names().get(30, TimeUnit.SECONDS);
                assertThat(listed).containsAll(topics.created());
            }
        } finally {
            topics.stop();
            allOf(nodes.stream().map(node -> CompletableFuture.runAsync(node::close)).toList());
        }
    }

    /** A combined node of the dynamic quorum, its storage formatted with {@code formatArgs} before its first start. */
    private static BrokerProcess node(BrokerKind kind, int id, int client, int controller, String bootstrap,
                                      String clusterId, List<String> formatArgs) {
        String host = FreePorts.LOOPBACK;
        if (kind == BrokerKind.KAFKA) {
            // The harness's combined node, with the bootstrap servers in place of static voters.
            return KafkaReferenceProcess.builder().clusterNode(new ClusterNode(id, client, controller, "", clusterId))
                    .config("controller.quorum.bootstrap.servers", bootstrap)
                    .formatArgs(formatArgs.toArray(String[]::new)).build();
        }
        CairnProcess cairn = CairnProcess.builder().serverProperties(String.join("\n",
                "process.roles=broker,controller",
                "node.id=" + id,
                "controller.quorum.bootstrap.servers=" + bootstrap,
                "listeners=PLAINTEXT://" + host + ":" + client + ",CONTROLLER://" + host + ":" + controller,
                "advertised.listeners=PLAINTEXT://" + host + ":" + client + ",CONTROLLER://" + host + ":" + controller,
                "inter.broker.listener.name=PLAINTEXT",
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "log.dirs=" + CairnProcess.DATA_DIR_PLACEHOLDER,
                "metrics.port=0",
                "num.partitions=1",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.num.partitions=1",
                ""), client).build();
        List<String> args = new ArrayList<>(List.of("format", "--cluster-id", clusterId, "--config",
                CairnProcess.CONFIG_PLACEHOLDER));
        args.addAll(formatArgs);
        JavaTool.Result format = cairn.storageTool(args.toArray(String[]::new));
        assertThat(format.exitCode()).as("%s", format).isZero();
        return cairn;
    }

    /**
     * What {@code add-controller} reads of the controller it adds (its {@code --command-config}): the node id, its
     * roles, its metadata directory (whose meta.properties holds the directory id) and its controller listener.
     */
    private static Path controllerConfig(BrokerProcess node, int client, int controller) throws IOException {
        String host = FreePorts.LOOPBACK;
        Path file = Files.createTempFile("add-controller", ".properties");
        Files.writeString(file, String.join("\n", "node.id=4", "process.roles=broker,controller",
                "controller.listener.names=CONTROLLER",
                "listeners=PLAINTEXT://" + host + ":" + client + ",CONTROLLER://" + host + ":" + controller,
                "log.dirs=" + node.dataDir(), ""));
        file.toFile().deleteOnExit();
        return file;
    }

    /** The voters once the quorum lists exactly {@code ids}, each with a log end offset. */
    private static QuorumInfo awaitVoters(Admin admin, Set<Integer> ids) {
        return await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(300)).ignoreExceptions()
                .until(() -> admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS),
                        q -> q.voters().stream().map(QuorumInfo.ReplicaState::replicaId).toList().size() == ids.size()
                                && q.voters().stream().allMatch(v -> ids.contains(v.replicaId())
                                && v.logEndOffset() > 0) && ids.contains(q.leaderId()));
    }

    private static String readProperty(BrokerProcess node, String key) throws IOException {
        Properties props = new Properties();
        try (var in = Files.newInputStream(node.dataDir().resolve("meta.properties"))) {
            props.load(in);
        }
        return props.getProperty(key);
    }

    private static Throwable catchCause(ThrowingRunnable call) {
        try {
            call.run();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return e;
        }
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void allOf(Collection<CompletableFuture<Void>> futures) {
        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
    }

    private static JavaTool.Result tool(String bootstrap, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", bootstrap));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(TOOL).args(all).timeout(Duration.ofSeconds(120)).build().run();
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(props);
    }

    /**
     * Creates topics {@code grow-0}, {@code grow-1}, ... one after another on a thread of its own until stopped,
     * keeping the names created and any failure: the quorum must keep committing while its voters change. Bounded
     * to 500 topics.
     */
    private static final class TopicCreator {
        private final String bootstrap;
        private final Set<String> created = ConcurrentHashMap.newKeySet();
        private final List<String> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final AtomicBoolean running = new AtomicBoolean();
        private final java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        private CompletableFuture<Void> loop;

        TopicCreator(String bootstrap) {
            this.bootstrap = bootstrap;
        }

        void start() {
            running.set(true);
            loop = CompletableFuture.runAsync(() -> {
                try (Admin admin = admin(bootstrap)) {
                    while (running.get() && next.get() < 500) {
                        String name = "grow-" + next.getAndIncrement();
                        try {
                            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1))).all()
                                    .get(60, TimeUnit.SECONDS);
                            created.add(name);
                        } catch (ExecutionException e) {
                            if (!(e.getCause() instanceof org.apache.kafka.common.errors.TopicExistsException)) {
                                failures.add(name + ": " + e.getCause());
                            } else {
                                created.add(name);
                            }
                        } catch (Exception e) {
                            failures.add(name + ": " + e);
                        }
                        try {
                            TimeUnit.MILLISECONDS.sleep(100);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                }
            });
        }

        void stop() {
            running.set(false);
            if (loop != null) {
                loop.join();
                loop = null;
            }
        }

        Set<String> created() {
            return created;
        }

        List<String> failures() {
            return failures;
        }
    }
}
