package io.cairn.compat.group;

import static io.cairn.compat.group.GroupClients.TIMEOUT_S;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Kafka's online migration between the classic and the consumer group protocols (KIP-848,
 * {@code group.consumer.migration.policy=bidirectional}, the default) as a user runs it: three classic Java consumers
 * read a 6-partition topic, are restarted one by one with {@code group.protocol=consumer} (a rolling upgrade: the
 * classic group becomes a consumer group whose remaining classic members keep consuming, answered from it), then one by
 * one back with {@code group.protocol=classic} (a rolling downgrade: the group becomes a classic group when its last
 * consumer-protocol member leaves). Records keep arriving; every record is read exactly once across the restarts
 * with the members' commits, on Cairn and on the reference Kafka 4.1.1 alike. A mixed group (classic and
 * consumer-protocol members) is restored with its members when its coordinator restarts and reloads
 * {@code __consumer_offsets}: no member has to rejoin with a new id, no record is read twice.
 */
@Timeout(240)
@ExtendWith(BrokerLogsExtension.class)
class GroupProtocolMigrationIT {

    private static final int PARTITIONS = 6;
    private static final int MEMBERS = 3;
    private static final int BATCH = 60;
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
                    "group.initial.rebalance.delay.ms", "0", "group.consumer.heartbeat.interval.ms", "500",
                    "group.consumer.min.heartbeat.interval.ms", "500"));
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

    /** A member of {@code group} speaking {@code protocol}, committing by hand, 10 records a poll at most. */
    private static KafkaConsumer<String, String> member(BrokerProcess broker, String group, String protocol,
            String clientId) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10);
        if (protocol.equals("classic")) {
            // The consumer protocol refuses heartbeat.interval.ms (the broker sets it).
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, GroupClients.HEARTBEAT_INTERVAL_MS);
        }
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /** Closes a member; a failure to close (after a failed scenario) does not hide the scenario's. */
    private static void closeQuietly(KafkaConsumer<String, String> member) {
        try {
            member.close(GroupClients.TIMEOUT);
        } catch (KafkaException e) {
            System.err.println("Closing a member failed: " + e);
        }
    }

    private static ConsumerGroupDescription describe(Admin admin, String group)
            throws ExecutionException, InterruptedException, TimeoutException {
        return admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                .get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    /**
     * Polls until every member holds its share (its listener was handed it), the records up to {@code expected} are
     * read and the coordinator describes the group Stable with every member holding its share: the rebalance is over.
     */
    private static void pollUntilStable(List<KafkaConsumer<String, String>> members, GroupClients.RecordSink sink,
            Map<KafkaConsumer<String, String>, CommittingOnRevocation> listeners, List<String> read, int expected,
            Admin admin, String group) {
        GroupClients.pollUntil(members, Duration.ofSeconds(60), sink, () -> {
            // Held once the callbacks handed them over: a member closed while it takes a partition over in the
            // background revokes one it may have no position for yet.
            assertThat(members).allSatisfy(m -> assertThat(listeners.get(m).owned()).hasSize(PARTITIONS / MEMBERS));
            assertThat(read).hasSizeGreaterThanOrEqualTo(expected);
            ConsumerGroupDescription described;
            try {
                described = describe(admin, group);
            } catch (ExecutionException | TimeoutException e) {
                // The coordinator is loading or moving: not stable yet.
                throw new AssertionError("describe of " + group + " failed", e);
            }
            assertThat(described.groupState()).isEqualTo(GroupState.STABLE);
            assertThat(described.members()).hasSize(MEMBERS).allSatisfy(member -> assertThat(
                    member.assignment().topicPartitions()).hasSize(PARTITIONS / MEMBERS));
        });
    }

    @KafkaHalfInFaults
    void aRollingUpgradeAndDowngradeOfAConsumingGroupReadsEveryRecordOnce(BrokerKind kind) throws Exception {
        // Given: three classic members sharing the partitions, having read and committed some records
        BrokerProcess broker = node(kind);
        String topic = GroupClients.createTopic(broker, "migration", PARTITIONS);
        String group = GroupClients.uniqueName("migration");
        GroupClients.produce(broker, topic, PARTITIONS, 0, BATCH);
        int produced = BATCH;
        List<String> read = new ArrayList<>();
        Map<KafkaConsumer<String, String>, CommittingOnRevocation> listeners = new IdentityHashMap<>();
        GroupClients.RecordSink committing = (consumer, records) -> {
            records.forEach(record -> read.add(record.value()));
            listeners.get(consumer).read(records);
            if (!records.isEmpty()) {
                try {
                    consumer.commitSync(GroupClients.TIMEOUT);
                } catch (KafkaException e) {
                    // A rebalance is under way (CommitFailedException, RebalanceInProgressException): the
                    // revocation's commit or the next poll's carries these positions.
                }
            }
        };
        List<KafkaConsumer<String, String>> members = new ArrayList<>();
        List<GroupType> typesAfterUpgradeSteps = new ArrayList<>();
        List<GroupType> typesAfterDowngradeSteps = new ArrayList<>();
        try (Admin admin = GroupClients.admin(broker)) {
            for (int i = 0; i < MEMBERS; i++) {
                KafkaConsumer<String, String> member = member(broker, group, "classic", "classic-" + i);
                CommittingOnRevocation.subscribe(member, topic, listeners);
                members.add(member);
            }
            pollUntilStable(members, committing, listeners, read, produced, admin, group);
            assertThat(describe(admin, group).type()).isEqualTo(GroupType.CLASSIC);

            // When: each member is restarted with the consumer protocol, then each back with the classic one
            for (String protocol : List.of("consumer", "classic")) {
                for (int i = 0; i < MEMBERS; i++) {
                    members.remove(0).close(GroupClients.TIMEOUT);
                    KafkaConsumer<String, String> member = member(broker, group, protocol, protocol + "-" + i);
                    CommittingOnRevocation.subscribe(member, topic, listeners);
                    members.add(member);
                    GroupClients.produce(broker, topic, PARTITIONS, produced, BATCH);
                    produced += BATCH;
                    pollUntilStable(members, committing, listeners, read, produced, admin, group);
                    (protocol.equals("consumer") ? typesAfterUpgradeSteps : typesAfterDowngradeSteps)
                            .add(describe(admin, group).type());
                }
            }
        } finally {
            members.forEach(GroupProtocolMigrationIT::closeQuietly);
        }

        // Then: the group was a consumer group from the first upgraded member on, a classic group again once the
        // last consumer-protocol member left; nothing was read twice or missed
        assertThat(typesAfterUpgradeSteps).containsOnly(GroupType.CONSUMER);
        assertThat(typesAfterDowngradeSteps).containsExactly(GroupType.CONSUMER, GroupType.CONSUMER,
                GroupType.CLASSIC);
        assertThat(new HashSet<>(read)).as("distinct records read").hasSize(read.size());
        assertThat(read).containsExactlyInAnyOrderElementsOf(
                IntStream.range(0, produced).mapToObj(GroupClients::value).toList());
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @KafkaHalfInFaults
    void aMixedGroupIsRestoredWhenItsCoordinatorRestarts(BrokerKind kind) throws Exception {
        // Given: a mixed group (two classic members, one restarted with the consumer protocol) on its own node
        try (BrokerCluster cluster = BrokerCluster.create(kind, 1, Map.of("offsets.topic.replication.factor", "1",
                "group.initial.rebalance.delay.ms", "0", "group.consumer.heartbeat.interval.ms", "500",
                "group.consumer.min.heartbeat.interval.ms", "500"))) {
            cluster.start();
            BrokerProcess broker = cluster.node(1);
            String topic = GroupClients.createTopic(broker, "migration-restart", PARTITIONS);
            String group = GroupClients.uniqueName("migration-restart");
            GroupClients.produce(broker, topic, PARTITIONS, 0, BATCH);
            int produced = BATCH;
            List<String> read = new ArrayList<>();
            Map<KafkaConsumer<String, String>, CommittingOnRevocation> listeners = new IdentityHashMap<>();
            GroupClients.RecordSink committing = (consumer, records) -> {
                records.forEach(record -> read.add(record.value()));
                listeners.get(consumer).read(records);
                if (!records.isEmpty()) {
                    try {
                        consumer.commitSync(GroupClients.TIMEOUT);
                    } catch (KafkaException e) {
                        // During the rebalance or the restart: the next commit carries these positions.
                    }
                }
            };
            List<KafkaConsumer<String, String>> members = new ArrayList<>();
            Map<String, Boolean> upgradedBefore = new HashMap<>();
            Map<String, Boolean> upgradedAfter = new HashMap<>();
            GroupType typeAfter;
            try (Admin admin = GroupClients.admin(broker)) {
                for (String protocol : List.of("classic", "classic", "consumer")) {
                    KafkaConsumer<String, String> member = member(broker, group, protocol, protocol + "-"
                            + members.size());
                    CommittingOnRevocation.subscribe(member, topic, listeners);
                    members.add(member);
                    GroupClients.pollUntil(members, Duration.ofSeconds(60), committing,
                            () -> assertThat(members).allSatisfy(m -> assertThat(m.assignment()).isNotEmpty()));
                }
                pollUntilStable(members, committing, listeners, read, produced, admin, group);
                describe(admin, group).members().forEach(m -> upgradedBefore.put(m.consumerId(),
                        m.upgraded().orElse(null)));

                // When: the node restarts (its coordinator reloads __consumer_offsets) while the members go on
                cluster.stop();
                cluster.start();
                GroupClients.produce(broker, topic, PARTITIONS, produced, BATCH);
                produced += BATCH;
                pollUntilStable(members, committing, listeners, read, produced, admin, group);
                ConsumerGroupDescription after = describe(admin, group);
                typeAfter = after.type();
                after.members().forEach(m -> upgradedAfter.put(m.consumerId(), m.upgraded().orElse(null)));
            } finally {
                members.forEach(GroupProtocolMigrationIT::closeQuietly);
            }

            // Then: the same members, of the same protocols, in a consumer group; nothing lost or read twice
            assertThat(upgradedBefore.values()).containsExactlyInAnyOrder(false, false, true);
            assertThat(upgradedAfter).isEqualTo(upgradedBefore);
            assertThat(typeAfter).isEqualTo(GroupType.CONSUMER);
            assertThat(new HashSet<>(read)).as("distinct records read").hasSize(read.size());
            assertThat(read).containsExactlyInAnyOrderElementsOf(
                    IntStream.range(0, produced).mapToObj(GroupClients::value).toList());
        }
    }
}
