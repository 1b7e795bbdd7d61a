package io.cairn.compat.group;

import static io.cairn.compat.group.GroupClients.TIMEOUT_S;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * KIP-848 consumer groups as a Java consumer with {@code group.protocol=consumer} sees them, on Cairn and on the
 * reference Kafka with the same scenario: members 1 → 3 → 1 (leaving one at a time) on a 6-partition topic read every
 * record exactly once across the rebalances with their commits, the group is listed, described by Admin and by {@code
 * kafka-consumer-groups --describe} as on Kafka, and a regular expression subscription ({@link SubscriptionPattern},
 * RE2J on the broker) picks up a topic created later; {@code kafka-features describe} shows {@code group.version}
 * supported up to 1 and finalized at 1, as a new Kafka 4.1 cluster has it. One node per kind, shared by the cases, with
 * {@code group.consumer.heartbeat.interval.ms=500} (Kafka's default 5 s would make each rebalance take seconds).
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class ConsumerGroupProtocolKip848IT {

    private static final String GROUPS_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand";
    private static final String FEATURES_TOOL = "org.apache.kafka.tools.FeatureCommand";
    private static final int PARTITIONS = 6;
    private static final Map<BrokerKind, BrokerCluster> NODES = new EnumMap<>(BrokerKind.class);

    @AfterAll
    static void stopNodes() {
        NODES.values().forEach(BrokerCluster::close);
        NODES.clear();
    }

    private static synchronized BrokerProcess node(BrokerKind kind) {
        BrokerCluster started = NODES.get(kind);
        if (started == null) {
            started = BrokerCluster.create(kind, 1, Map.of("offsets.topic.replication.factor", "1",
                    "group.consumer.heartbeat.interval.ms", "500", "group.consumer.min.heartbeat.interval.ms", "500"));
            try {
                started.start();
            } catch (RuntimeException | AssertionError e) {
                started.close();
                throw e;
            }
            NODES.put(kind, started);
        }
        return started.node(1);
    }

    /** A string consumer of the KIP-848 protocol in {@code group}, committing by hand, 10 records a poll at most. */
    private static KafkaConsumer<String, String> consumer(BrokerProcess broker, String group, String clientId) {
        // No heartbeat.interval.ms: the consumer protocol refuses it (the broker sets the interval).
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /**
     * Commits what the consumer read. A commit that meets a member epoch bumped meanwhile fails (STALE_MEMBER_EPOCH,
     * on Kafka as on Cairn: the consumer does not retry it); the next commit or the revocation's carries it.
     */
    private static void commitAfterPoll(KafkaConsumer<String, String> consumer) {
        try {
            consumer.commitSync(GroupClients.TIMEOUT);
        } catch (CommitFailedException e) {
            // Committed by the next poll's commit, or by onPartitionsRevoked before a partition moves.
        }
    }

    @KafkaHalfInFaults
    void membersOneThreeOneReadEveryRecordOnceAndTheToolsDescribeTheGroupAsKafka(BrokerKind kind) throws Exception {
        // Given: 300 records on 6 partitions, a first member that read some of them
        BrokerProcess broker = node(kind);
        String topic = GroupClients.createTopic(broker, "kip848", PARTITIONS);
        String group = GroupClients.uniqueName("kip848");
        GroupClients.produce(broker, topic, PARTITIONS, 300);
        List<String> read = new ArrayList<>();
        Map<KafkaConsumer<String, String>, CommittingOnRevocation> listeners = new IdentityHashMap<>();
        GroupClients.RecordSink committing = (consumer, records) -> {
            records.forEach(record -> read.add(record.value()));
            listeners.get(consumer).read(records);
            if (!records.isEmpty()) {
                commitAfterPoll(consumer);
            }
        };
        try (KafkaConsumer<String, String> first = consumer(broker, group, "first");
                KafkaConsumer<String, String> second = consumer(broker, group, "second");
                KafkaConsumer<String, String> third = consumer(broker, group, "third");
                Admin admin = GroupClients.admin(broker)) {
            CommittingOnRevocation.subscribe(first, topic, listeners);
            GroupClients.pollUntil(List.of(first), Duration.ofSeconds(30), committing, () -> {
                assertThat(first.assignment()).hasSize(PARTITIONS);
                assertThat(read).hasSizeGreaterThanOrEqualTo(30);
            });

            // When: two more members join, read on, then leave while more records arrive
            CommittingOnRevocation.subscribe(second, topic, listeners);
            CommittingOnRevocation.subscribe(third, topic, listeners);
            List<KafkaConsumer<String, String>> all = List.of(first, second, third);
            GroupClients.pollUntil(all, Duration.ofSeconds(30), committing, () -> {
                for (KafkaConsumer<String, String> member : all) {
                    assertThat(member.assignment()).as("assignment of a member").hasSize(2);
                }
            });
            ConsumerGroupDescription threeMembers = admin.describeConsumerGroups(List.of(group)).describedGroups()
                    .get(group).get(TIMEOUT_S, TimeUnit.SECONDS);
            JavaTool.Result describe = groupsTool(broker, "--describe", "--group", group);
            JavaTool.Result state = groupsTool(broker, "--describe", "--group", group, "--state");
            JavaTool.Result members = groupsTool(broker, "--describe", "--group", group, "--members");
            JavaTool.Result types = groupsTool(broker, "--list", "--type");
            JavaTool.Result features = KafkaDistribution.tool(FEATURES_TOOL)
                    .args("--bootstrap-server", broker.bootstrapServers(), "describe")
                    .timeout(Duration.ofSeconds(60)).build().run();
            GroupClients.pollUntil(all, Duration.ofSeconds(30), committing,
                    () -> assertThat(read).hasSizeGreaterThanOrEqualTo(300));
            second.close();
            // third leaves once its callbacks handed it its share of second's partitions: closed while it takes
            // them over in the background, its revocation commit could race the heartbeat bumping its epoch
            // (STALE_MEMBER_EPOCH, CommitFailedException out of close(), on Kafka as on Cairn).
            List<KafkaConsumer<String, String>> remaining = List.of(first, third);
            GroupClients.pollUntil(remaining, Duration.ofSeconds(30), committing, () -> {
                for (KafkaConsumer<String, String> member : remaining) {
                    assertThat(listeners.get(member).owned()).as("partitions of a remaining member").hasSize(3);
                }
            });
            third.close();
            GroupClients.produce(broker, topic, PARTITIONS, 300, 60);
            GroupClients.pollUntil(List.of(first), Duration.ofSeconds(30), committing, () -> {
                assertThat(first.assignment()).hasSize(PARTITIONS);
                assertThat(read).hasSizeGreaterThanOrEqualTo(360);
            });

            // Then
            assertThat(new HashSet<>(read)).as("distinct records read").hasSize(read.size());
            assertThat(read).containsExactlyInAnyOrderElementsOf(
                    IntStream.range(0, 360).mapToObj(GroupClients::value).toList());
            assertThat(threeMembers.type()).isEqualTo(GroupType.CONSUMER);
            assertThat(threeMembers.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(threeMembers.partitionAssignor()).isEqualTo("uniform");
            assertThat(threeMembers.members()).extracting(m -> m.clientId())
                    .containsExactlyInAnyOrder("first", "second", "third");
            assertThat(threeMembers.members()).allSatisfy(m -> assertThat(m.assignment().topicPartitions())
                    .hasSize(2));
            assertThat(header(describe)).as("%s", describe).containsExactly("GROUP", "TOPIC", "PARTITION",
                    "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID");
            List<List<String>> rows = rows(describe, group);
            assertThat(rows).as("%s", describe).hasSize(PARTITIONS);
            assertThat(rows).as("%s", describe).allSatisfy(row -> {
                assertThat(row).hasSize(9);
                assertThat(row.get(1)).isEqualTo(topic);
                assertThat(row.get(6)).isNotEqualTo("-");
                assertThat(row.get(7)).isEqualTo("/" + broker.host());
            });
            assertThat(rows).extracting(row -> row.get(8)).containsOnly("first", "second", "third");
            assertThat(header(state)).as("%s", state).containsExactly("GROUP", "COORDINATOR", "(ID)",
                    "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS");
            assertThat(rows(state, group)).as("%s", state).singleElement()
                    .satisfies(row -> assertThat(row.subList(row.size() - 3, row.size()))
                            .containsExactly("uniform", "Stable", "3"));
            assertThat(header(members)).as("%s", members).containsExactly("GROUP", "CONSUMER-ID", "HOST",
                    "CLIENT-ID", "#PARTITIONS");
            assertThat(rows(members, group)).as("%s", members).extracting(row -> row.get(row.size() - 1))
                    .containsExactly("2", "2", "2");
            assertThat(rows(types, group)).as("%s", types).containsExactly(List.of(group, "Consumer"));
            assertThat(admin.listGroups(new ListGroupsOptions().withTypes(Set.of(GroupType.CONSUMER))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS)).extracting(GroupListing::groupId).contains(group);
            assertThat(features.stdout().lines().filter(line -> line.contains("Feature: group.version")).toList())
                    .as("%s", features).singleElement().satisfies(line -> assertThat(line.split("\\s+"))
                            .containsSequence("SupportedMinVersion:", "0", "SupportedMaxVersion:", "1",
                                    "FinalizedVersionLevel:", "1"));
            for (JavaTool.Result result : List.of(describe, state, members, types, features)) {
                assertThat(result.exitCode()).as("%s", result).isZero();
            }
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @KafkaHalfInFaults
    void aRegularExpressionSubscriptionPicksUpATopicCreatedLater(BrokerKind kind) throws Exception {
        // Given: a member subscribed to "<prefix>-.*" while one matching topic and one other topic exist
        BrokerProcess broker = node(kind);
        String prefix = GroupClients.uniqueName("kip848-regex");
        String existing = createTopic(broker, prefix + "-a", 2);
        String other = GroupClients.createTopic(broker, "kip848-other", 1);
        String group = GroupClients.uniqueName("kip848-regex");
        GroupClients.produce(broker, existing, 2, 4);
        GroupClients.produce(broker, other, 1, 1);
        List<String> read = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(broker, group, "regex")) {
            consumer.subscribe(new SubscriptionPattern(prefix + "-.*"));
            GroupClients.pollUntil(List.of(consumer), Duration.ofSeconds(30),
                    (c, records) -> records.forEach(record -> read.add(record.topic())),
                    () -> assertThat(read).hasSize(4));

            // When
            String created = createTopic(broker, prefix + "-b", 1);
            GroupClients.produce(broker, created, 1, 1);

            // Then: Kafka resolves regular expressions again at most every 10 s
            GroupClients.pollUntil(List.of(consumer), Duration.ofSeconds(40),
                    (c, records) -> records.forEach(record -> read.add(record.topic())), () -> {
                        assertThat(consumer.assignment()).containsExactlyInAnyOrder(
                                new TopicPartition(existing, 0), new TopicPartition(existing, 1),
                                new TopicPartition(created, 0));
                        assertThat(read).hasSize(5);
                    });
            assertThat(read).doesNotContain(other).containsOnlyOnce(created);
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    /** Creates the topic {@code name} (not a unique name: the regular expression must match it). */
    private static String createTopic(BrokerProcess broker, String name, int partitions) throws Exception {
        try (Admin admin = GroupClients.admin(broker)) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            GroupClients.partitions(name, partitions).forEach(tp -> latest.put(tp, OffsetSpec.latest()));
            // As GroupClients.createTopic: until every partition answers on its leader.
            await().atMost(Duration.ofSeconds(TIMEOUT_S)).pollInterval(Duration.ofMillis(100))
                    .ignoreExceptionsMatching(e -> e instanceof ExecutionException
                            && e.getCause() instanceof UnknownTopicOrPartitionException)
                    .until(() -> admin.listOffsets(latest).all().get(TIMEOUT_S, TimeUnit.SECONDS) != null);
        }
        return name;
    }

    private static JavaTool.Result groupsTool(BrokerProcess broker, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(GROUPS_TOOL).args(all.toArray(String[]::new)).timeout(Duration.ofSeconds(60))
                .build().run();
    }

    /** The rows of a table the tool printed whose first column is {@code first}, split into columns. */
    private static List<List<String>> rows(JavaTool.Result result, String first) {
        return result.stdout().lines().map(String::strip).map(line -> List.of(line.split("\\s+")))
                .filter(columns -> columns.get(0).equals(first)).toList();
    }

    /** The column names of the table the tool printed (the line starting with {@code GROUP}). */
    private static List<String> header(JavaTool.Result result) {
        return rows(result, "GROUP").stream().findFirst().orElse(List.of());
    }
}
