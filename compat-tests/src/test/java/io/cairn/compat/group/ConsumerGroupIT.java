package io.cairn.compat.group;

import static io.cairn.compat.group.GroupClients.TIMEOUT_S;
import static io.cairn.compat.group.GroupClients.collect;
import static io.cairn.compat.group.GroupClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.compat.harness.SlowKinds;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.GroupNotEmptyException;
import org.awaitility.core.ThrowingRunnable;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Consumer groups with the stock Java consumer (kafka-clients, classic group protocol, the default), against Cairn
 * and the reference Kafka with the same scenario: members of one group split a topic's partitions and read every
 * record once, committed offsets are where a new member resumes (also after a broker restart, and a live group keeps
 * reading across one), a member that leaves or whose session expires hands its partitions to the others, a static
 * member (follower or leader) that comes back within its session timeout gets its partitions back without a
 * rebalance; a simple consumer's offsets and a group's life (describe, list, delete) through Admin, what an unknown
 * group answers, and deletions and alterations that stay so after a broker kill.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class ConsumerGroupIT {

    private static final Duration REBALANCE = Duration.ofSeconds(60);

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void threeMembersSplitSixPartitionsAndReadEveryRecordExactlyOnceInOrder(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        int partitions = 6;
        int records = 3_000;
        String topic = GroupClients.createTopic(broker, "group-split", partitions);
        String group = GroupClients.uniqueName("group-split");
        List<KafkaConsumer<String, String>> consumers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                consumers.add(GroupClients.consumer(broker, group, Map.of()));
                consumers.get(i).subscribe(List.of(topic));
            }

            // When
            pollUntil(consumers, () -> assertOneOwnerPerPartition(consumers, partitions));
            GroupClients.produce(broker, topic, partitions, records);
            Map<TopicPartition, List<ConsumerRecord<String, String>>> read = new HashMap<>();
            Map<TopicPartition, Set<Integer>> readers = new HashMap<>();
            pollUntil(consumers, REBALANCE, (consumer, polled) -> {
                collect(polled, read);
                polled.partitions().forEach(tp -> readers.computeIfAbsent(tp, k -> new HashSet<>())
                        .add(consumers.indexOf(consumer)));
                if (!polled.isEmpty()) {
                    consumer.commitSync();
                }
            }, () -> assertThat(read.values().stream().mapToInt(List::size).sum()).isGreaterThanOrEqualTo(records));

            // Then
            for (int p = 0; p < partitions; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                assertThat(read.get(tp)).as("records of %s", tp).extracting(ConsumerRecord::value)
                        .containsExactlyElementsOf(GroupClients.expectedValues(p, partitions, records));
                assertThat(readers.get(tp)).as("members that read %s", tp).hasSize(1);
            }
            try (Admin admin = GroupClients.admin(broker)) {
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                        .partitionsToOffsetAndMetadata().get(TIMEOUT_S, TimeUnit.SECONDS);
                assertThat(committed).as("committed offsets of %s", group).hasSize(partitions)
                        .allSatisfy((tp, offset) -> assertThat(offset.offset()).isEqualTo(records / partitions));
            }
        } finally {
            consumers.forEach(KafkaConsumer::close);
        }
        noLeaks(broker);
    }

    @Tag("faults")
    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aNewMemberResumesAfterTheCommittedOffsetsAlsoAfterABrokerRestart(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = kind.start()) {
            int partitions = 2;
            int records = 100;
            String topic = GroupClients.createTopic(broker, "group-resume", partitions);
            String group = GroupClients.uniqueName("group-resume");
            List<TopicPartition> tps = GroupClients.partitions(topic, partitions);
            GroupClients.produce(broker, topic, partitions, records);
            Map<TopicPartition, OffsetAndMetadata> expected = new HashMap<>();
            try (KafkaConsumer<String, String> first = GroupClients.consumer(broker, group, Map.of())) {
                first.subscribe(List.of(topic));
                Map<TopicPartition, List<ConsumerRecord<String, String>>> read = new HashMap<>();
                pollUntil(List.of(first), REBALANCE, (consumer, polled) -> collect(polled, read), () -> assertThat(tps)
                        .allSatisfy(tp -> assertThat(read.get(tp)).hasSize(records / partitions)));

                // When
                first.commitSync();
                read.forEach((tp, list) -> {
                    ConsumerRecord<String, String> last = list.get(list.size() - 1);
                    expected.put(tp, new OffsetAndMetadata(last.offset() + 1, last.leaderEpoch(), ""));
                });
            }
            GroupClients.produce(broker, topic, partitions, records, records);

            // Then
            assertThat(expected.values()).as("leader epochs of the last records read")
                    .allSatisfy(offset -> assertThat(offset.leaderEpoch()).isPresent());
            assertResumesAt(broker, group, topic, tps, expected, records);

            // When
            broker.stop();
            broker.start();

            // Then
            assertResumesAt(broker, group, topic, tps, expected, records);
            try (Admin admin = GroupClients.admin(broker)) {
                assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                        .get(TIMEOUT_S, TimeUnit.SECONDS)).as("committed offsets after the restart")
                        .isEqualTo(expected);
            }
            noLeaks(broker);
        }
    }

    /**
     * A new member of {@code group} sees {@code expected} as the committed offsets and reads each partition from
     * there, the second half of the {@code 2 * records} records produced, without committing.
     */
    private static void assertResumesAt(BrokerProcess broker, String group, String topic, List<TopicPartition> tps,
            Map<TopicPartition, OffsetAndMetadata> expected, int records) {
        int perPartition = records / tps.size();
        try (KafkaConsumer<String, String> next = GroupClients.consumer(broker, group, Map.of())) {
            assertThat(next.committed(new HashSet<>(tps), GroupClients.TIMEOUT)).as("committed()")
                    .isEqualTo(expected);
            next.subscribe(List.of(topic));
            Map<TopicPartition, List<ConsumerRecord<String, String>>> read = new HashMap<>();
            pollUntil(List.of(next), REBALANCE, (consumer, polled) -> collect(polled, read), () -> assertThat(tps)
                    .allSatisfy(tp -> assertThat(read.get(tp)).hasSize(perPartition)));
            for (TopicPartition tp : tps) {
                List<String> all = GroupClients.expectedValues(tp.partition(), tps.size(), 2 * records);
                assertThat(read.get(tp)).as("records of %s read by the new member", tp)
                        .extracting(ConsumerRecord::value)
                        .containsExactlyElementsOf(all.subList(perPartition, 2 * perPartition));
                assertThat(read.get(tp).get(0).offset()).as("first offset of %s", tp)
                        .isEqualTo(expected.get(tp).offset()).isEqualTo(perPartition);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void whenOneOfTwoMembersLeavesTheOtherGetsAllPartitions(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-leave", 4);
        String group = GroupClients.uniqueName("group-leave");
        List<Set<TopicPartition>> assigned = new ArrayList<>();
        try (KafkaConsumer<String, String> stays = GroupClients.consumer(broker, group, Map.of());
                KafkaConsumer<String, String> leaves = GroupClients.consumer(broker, group, Map.of())) {
            stays.subscribe(List.of(topic), recordingAssignments(assigned));
            pollUntil(List.of(stays), () -> assertThat(stays.assignment()).hasSize(4));
            leaves.subscribe(List.of(topic));
            pollUntil(List.of(stays, leaves), () -> assertOneOwnerPerPartition(List.of(stays, leaves), 4));

            // When
            leaves.close();

            // Then: well within the default 45 s session timeout, so the LeaveGroup did it
            pollUntil(List.of(stays), Duration.ofSeconds(20), (consumer, polled) -> { },
                    () -> assertThat(stays.assignment()).hasSize(4));
            assertThat(assigned.get(assigned.size() - 1)).as("last onPartitionsAssigned")
                    .containsExactlyInAnyOrderElementsOf(GroupClients.partitions(topic, 4));
            assertThat(describe(broker, group).members()).as("members after the leave").hasSize(1);
        }
        noLeaks(broker);
    }

    @KafkaHalfInFaults
    void aMemberThatVanishesWithoutLeavingIsRemovedAfterItsSessionTimeout(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-expiry", 4);
        String group = GroupClients.uniqueName("group-expiry");
        Map<String, Object> shortSession = Map.of(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6_000,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000);
        try (KafkaConsumer<String, String> stays = GroupClients.consumer(broker, group, shortSession);
                KafkaConsumer<String, String> vanishes = GroupClients.consumer(broker, group, shortSession)) {
            stays.subscribe(List.of(topic));
            pollUntil(List.of(stays), () -> assertThat(stays.assignment()).hasSize(4));
            vanishes.subscribe(List.of(topic));
            pollUntil(List.of(stays, vanishes), () -> assertOneOwnerPerPartition(List.of(stays, vanishes), 4));

            // When
            vanishes.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation
                    .REMAIN_IN_GROUP));

            // Then
            assertThat(describe(broker, group).members()).as("members right after the close").hasSize(2);
            pollUntil(List.of(stays), Duration.ofSeconds(30), (consumer, polled) -> { },
                    () -> assertThat(stays.assignment()).hasSize(4));
            assertThat(describe(broker, group).members()).as("members after the session timeout").hasSize(1);
        }
        noLeaks(broker);
    }

    static Stream<Arguments> kindsAndBouncingMember() {
        return SlowKinds.kinds().flatMap(kind -> Stream.of(Arguments.of(kind, "follower"),
                Arguments.of(kind, "leader")));
    }

    @Tag(KafkaHalfInFaults.TAG)
    @ParameterizedTest(name = "{0}, the {1} bounces")
    @MethodSource("kindsAndBouncingMember")
    void aStaticMemberBackWithinItsSessionTimeoutGetsItsPartitionsWithoutARebalance(BrokerKind kind,
            String bouncing) throws Exception {
        // Given: the first member to join is the group's leader (it computes the assignment)
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-static", 4);
        String group = GroupClients.uniqueName("group-static");
        Map<String, Object> leaderConfig = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-1",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000);
        Map<String, Object> followerConfig = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-2",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000);
        boolean leaderBounces = bouncing.equals("leader");
        List<KafkaConsumer<String, String>> open = new ArrayList<>();
        try {
            KafkaConsumer<String, String> leader = GroupClients.consumer(broker, group, leaderConfig);
            open.add(leader);
            leader.subscribe(List.of(topic));
            pollUntil(List.of(leader), () -> assertThat(leader.assignment()).hasSize(4));
            KafkaConsumer<String, String> follower = GroupClients.consumer(broker, group, followerConfig);
            open.add(follower);
            follower.subscribe(List.of(topic));
            pollUntil(List.of(leader, follower), () -> assertOneOwnerPerPartition(List.of(leader, follower), 4));
            int generation = leader.groupMetadata().generationId();
            KafkaConsumer<String, String> bounces = leaderBounces ? leader : follower;
            KafkaConsumer<String, String> stays = leaderBounces ? follower : leader;
            Set<TopicPartition> before = Set.copyOf(bounces.assignment());
            Set<TopicPartition> staysOwns = Set.copyOf(stays.assignment());

            // When: a static member sends no LeaveGroup on close
            bounces.close();
            KafkaConsumer<String, String> back = GroupClients.consumer(broker, group,
                    leaderBounces ? leaderConfig : followerConfig);
            open.add(back);
            back.subscribe(List.of(topic));

            // Then
            pollUntil(List.of(stays, back), () -> assertThat(back.assignment()).isEqualTo(before));
            assertThat(back.groupMetadata().generationId()).as("generation of the member back")
                    .isEqualTo(generation);
            await().during(Duration.ofSeconds(4)).atMost(Duration.ofSeconds(20)).pollInSameThread()
                    .pollInterval(Duration.ofMillis(1)).untilAsserted(() -> {
                        stays.poll(GroupClients.POLL);
                        back.poll(GroupClients.POLL);
                        assertThat(stays.groupMetadata().generationId()).as("generation of the other member")
                                .isEqualTo(generation);
                        assertThat(stays.assignment()).as("partitions of the other member").isEqualTo(staysOwns);
                        assertThat(back.assignment()).as("partitions of the member back").isEqualTo(before);
                    });
            Collection<String> instances = describe(broker, group).members().stream()
                    .map(member -> member.groupInstanceId().orElse("none")).toList();
            assertThat(instances).containsExactlyInAnyOrder("instance-1", "instance-2");
        } finally {
            open.forEach(KafkaConsumer::close);
        }
        noLeaks(broker);
    }

    @Tag("faults")
    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aGroupKeepsItsMembersPartitionsAndOffsetsAcrossABrokerRestart(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = kind.start()) {
            int partitions = 4;
            int records = 400;
            String topic = GroupClients.createTopic(broker, "group-live-restart", partitions);
            String group = GroupClients.uniqueName("group-live-restart");
            List<KafkaConsumer<String, String>> consumers = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    consumers.add(GroupClients.consumer(broker, group, Map.of()));
                    consumers.get(i).subscribe(List.of(topic));
                }
                pollUntil(consumers, () -> assertOneOwnerPerPartition(consumers, partitions));
                Map<TopicPartition, List<ConsumerRecord<String, String>>> read = new HashMap<>();
                GroupClients.produce(broker, topic, partitions, records / 2);
                pollCommittingUntil(consumers, read, records / 2);

                // When
                broker.stop();
                broker.start();
                GroupClients.produce(broker, topic, partitions, records / 2, records / 2);

                // Then: every record read once, also while the group settles again
                pollCommittingUntil(consumers, read, records);
                pollCommittingUntil(consumers, read, () -> assertOneOwnerPerPartition(consumers, partitions));
                for (int p = 0; p < partitions; p++) {
                    TopicPartition tp = new TopicPartition(topic, p);
                    assertThat(read.get(tp)).as("records of %s", tp).extracting(ConsumerRecord::value)
                            .containsExactlyElementsOf(GroupClients.expectedValues(p, partitions, records));
                }
                try (Admin admin = GroupClients.admin(broker)) {
                    assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                            .get(TIMEOUT_S, TimeUnit.SECONDS)).as("committed offsets after the restart")
                            .hasSize(partitions)
                            .allSatisfy((tp, offset) -> assertThat(offset.offset()).isEqualTo(records / partitions));
                }
            } finally {
                consumers.forEach(KafkaConsumer::close);
            }
            noLeaks(broker);
        }
    }

    @Tag("faults")
    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void deletedGroupsDeletedOffsetsAndAlteredOffsetsStaySoAfterABrokerKill(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = kind.start()) {
            String topic = GroupClients.createTopic(broker, "group-kill", 2);
            String deletedGroup = GroupClients.uniqueName("group-kill-deleted");
            String trimmedGroup = GroupClients.uniqueName("group-kill-trimmed");
            String alteredGroup = GroupClients.uniqueName("gruppe-kill-\u00e4ltered-\u2713");
            TopicPartition p0 = new TopicPartition(topic, 0);
            TopicPartition p1 = new TopicPartition(topic, 1);
            Map<TopicPartition, OffsetAndMetadata> both = Map.of(p0, new OffsetAndMetadata(1, "a"),
                    p1, new OffsetAndMetadata(2, "b"));
            for (String group : List.of(deletedGroup, trimmedGroup, alteredGroup)) {
                try (KafkaConsumer<String, String> consumer = GroupClients.consumer(broker, group, Map.of())) {
                    consumer.commitSync(both, GroupClients.TIMEOUT);
                }
            }
            try (Admin admin = GroupClients.admin(broker)) {
                admin.deleteConsumerGroups(List.of(deletedGroup)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                admin.deleteConsumerGroupOffsets(trimmedGroup, Set.of(p1)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                admin.alterConsumerGroupOffsets(alteredGroup, Map.of(p0, new OffsetAndMetadata(7, "altered"))).all()
                        .get(TIMEOUT_S, TimeUnit.SECONDS);
            }

            // When
            broker.kill();
            broker.start();

            // Then
            try (Admin admin = GroupClients.admin(broker)) {
                assertThat(offsets(admin, deletedGroup)).as("offsets of the deleted group").isEmpty();
                assertThat(admin.listGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS)).extracting(GroupListing::groupId)
                        .as("groups").contains(trimmedGroup, alteredGroup).doesNotContain(deletedGroup);
                assertThat(describeError(admin, deletedGroup)).as("describe of the deleted group")
                        .isInstanceOf(GroupIdNotFoundException.class);
                assertThat(offsets(admin, trimmedGroup)).as("offsets of the group whose p1 offset was deleted")
                        .isEqualTo(Map.of(p0, both.get(p0)));
                assertThat(offsets(admin, alteredGroup)).as("offsets of the group whose p0 offset was altered")
                        .isEqualTo(Map.of(p0, new OffsetAndMetadata(7, "altered"), p1, both.get(p1)));
            }
            noLeaks(broker);
        }
    }

    /** Polls {@code consumers}, committing after each poll that returned records, until {@code total} were read. */
    private static void pollCommittingUntil(List<KafkaConsumer<String, String>> consumers,
            Map<TopicPartition, List<ConsumerRecord<String, String>>> read, int total) {
        pollCommittingUntil(consumers, read,
                () -> assertThat(read.values().stream().mapToInt(List::size).sum()).isGreaterThanOrEqualTo(total));
    }

    /**
     * Polls {@code consumers}, collecting into {@code read} and committing after each poll that returned records,
     * until {@code assertion} holds.
     */
    private static void pollCommittingUntil(List<KafkaConsumer<String, String>> consumers,
            Map<TopicPartition, List<ConsumerRecord<String, String>>> read, ThrowingRunnable assertion) {
        pollUntil(consumers, REBALANCE, (consumer, polled) -> {
            collect(polled, read);
            if (!polled.isEmpty()) {
                consumer.commitSync();
            }
        }, assertion);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aSimpleConsumersCommittedOffsetsAreListedAlteredAndDeletedWithAdmin(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-simple", 2);
        String group = GroupClients.uniqueName("group-simple");
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        GroupClients.produce(broker, topic, 2, 20);
        Map<TopicPartition, OffsetAndMetadata> commit = Map.of(p0, new OffsetAndMetadata(4, "four"),
                p1, new OffsetAndMetadata(7, "seven"));
        try (KafkaConsumer<String, String> simple = GroupClients.consumer(broker, group, Map.of());
                KafkaConsumer<String, String> other = GroupClients.consumer(broker, group, Map.of());
                Admin admin = GroupClients.admin(broker)) {
            simple.assign(List.of(p0, p1));

            // When
            simple.commitSync(commit, GroupClients.TIMEOUT);

            // Then
            assertThat(other.committed(Set.of(p0, p1), GroupClients.TIMEOUT)).as("committed()").isEqualTo(commit);
            other.assign(List.of(p0));
            List<ConsumerRecord<String, String>> read = new ArrayList<>();
            pollUntil(List.of(other), REBALANCE, (consumer, polled) -> polled.forEach(read::add),
                    () -> assertThat(read).isNotEmpty());
            assertThat(read.get(0).offset()).as("first offset read after the commit").isEqualTo(4);
            assertThat(offsets(admin, group)).as("listConsumerGroupOffsets").isEqualTo(commit);
            assertThat(admin.listGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS)).as("listGroups")
                    .contains(new GroupListing(group, Optional.of(GroupType.CLASSIC), "",
                            Optional.of(GroupState.EMPTY)));

            // When
            admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(1, "one"))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(offsets(admin, group)).as("offsets after alterConsumerGroupOffsets")
                    .isEqualTo(Map.of(p0, new OffsetAndMetadata(1, "one"), p1, commit.get(p1)));

            // When
            admin.deleteConsumerGroupOffsets(group, Set.of(p1)).all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(offsets(admin, group)).as("offsets after deleteConsumerGroupOffsets")
                    .isEqualTo(Map.of(p0, new OffsetAndMetadata(1, "one")));
            Map<TopicPartition, OffsetAndMetadata> afterDelete = new HashMap<>();
            afterDelete.put(p0, new OffsetAndMetadata(1, "one"));
            afterDelete.put(p1, null);
            assertThat(other.committed(Set.of(p0, p1), GroupClients.TIMEOUT)).as("committed() after the deletion")
                    .isEqualTo(afterDelete);
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void adminDescribesAndListsAnActiveGroupAndDeletesItOnlyOnceItIsEmpty(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-admin", 3);
        String group = GroupClients.uniqueName("group-admin");
        try (Admin admin = GroupClients.admin(broker)) {
            try (KafkaConsumer<String, String> member = GroupClients.consumer(broker, group,
                    Map.of(ConsumerConfig.CLIENT_ID_CONFIG, "member-client"))) {
                member.subscribe(List.of(topic));
                pollUntil(List.of(member), () -> assertThat(member.assignment()).hasSize(3));
                member.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)));

                // When
                ConsumerGroupDescription description = describe(broker, group);
                Collection<GroupListing> listed = admin.listGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS);
                Collection<GroupListing> consumerGroups = admin.listGroups(ListGroupsOptions.forConsumerGroups())
                        .all().get(TIMEOUT_S, TimeUnit.SECONDS);
                Throwable deleteWhileActive = deleteError(admin, group);

                // Then
                assertThat(description.groupId()).isEqualTo(group);
                assertThat(description.groupState()).isEqualTo(GroupState.STABLE);
                assertThat(description.type()).isEqualTo(GroupType.CLASSIC);
                assertThat(description.isSimpleConsumerGroup()).isFalse();
                assertThat(description.partitionAssignor()).isEqualTo("range");
                assertThat(description.coordinator().id()).as("coordinator").isEqualTo(1);
                assertThat(description.coordinator().host()).as("coordinator").isEqualTo(broker.host());
                assertThat(description.coordinator().port()).as("coordinator").isEqualTo(broker.port());
                assertThat(description.members()).singleElement().satisfies(m -> {
                    assertThat(m.consumerId()).isEqualTo(member.groupMetadata().memberId());
                    assertThat(m.clientId()).isEqualTo("member-client");
                    assertThat(m.host()).isEqualTo("/127.0.0.1");
                    assertThat(m.groupInstanceId()).isEmpty();
                    assertThat(m.assignment().topicPartitions())
                            .containsExactlyInAnyOrderElementsOf(GroupClients.partitions(topic, 3));
                });
                GroupListing listing = new GroupListing(group, Optional.of(GroupType.CLASSIC), "consumer",
                        Optional.of(GroupState.STABLE));
                assertThat(listed).as("listGroups").contains(listing);
                assertThat(consumerGroups).as("listGroups for consumer groups").contains(listing);
                assertThat(deleteWhileActive).as("deleteConsumerGroups while a member is active")
                        .isInstanceOf(GroupNotEmptyException.class);
            }

            // When: the member left
            ConsumerGroupDescription empty = describe(broker, group);
            admin.deleteConsumerGroups(List.of(group)).all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(empty.groupState()).as("state once the member left").isEqualTo(GroupState.EMPTY);
            assertThat(empty.members()).as("members once the member left").isEmpty();
            assertThat(offsets(admin, group)).as("offsets of the deleted group").isEmpty();
            assertThat(admin.listGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS))
                    .extracting(GroupListing::groupId).as("groups after the deletion").doesNotContain(group);
            assertThat(describeError(admin, group)).as("describe after the deletion")
                    .isInstanceOf(GroupIdNotFoundException.class);
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void anUnknownGroupHasNoOffsetsAndCannotBeDescribedOrDeleted(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-unknown", 1);
        String group = GroupClients.uniqueName("group-unknown");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = GroupClients.admin(broker);
                KafkaConsumer<String, String> consumer = GroupClients.consumer(broker, group, Map.of())) {

            // When
            Map<TopicPartition, OffsetAndMetadata> listed = offsets(admin, group);
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(Set.of(tp), GroupClients.TIMEOUT);
            Throwable described = describeError(admin, group);
            Throwable deleted = deleteError(admin, group);
            Throwable offsetsDeleted = errorOf(() -> admin.deleteConsumerGroupOffsets(group, Set.of(tp)).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS));

            // Then
            assertThat(listed).as("listConsumerGroupOffsets").isEmpty();
            Map<TopicPartition, OffsetAndMetadata> none = new HashMap<>();
            none.put(tp, null);
            assertThat(committed).as("committed()").isEqualTo(none);
            assertThat(described).as("describeConsumerGroups").isInstanceOf(GroupIdNotFoundException.class);
            assertThat(deleted).as("deleteConsumerGroups").isInstanceOf(GroupIdNotFoundException.class);
            assertThat(offsetsDeleted).as("deleteConsumerGroupOffsets").isInstanceOf(GroupIdNotFoundException.class);
        }
        noLeaks(broker);
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(Admin admin, String group) throws Exception {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static Throwable describeError(Admin admin, String group) {
        return errorOf(() -> admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                .get(TIMEOUT_S, TimeUnit.SECONDS));
    }

    private static Throwable deleteError(Admin admin, String group) {
        return errorOf(() -> admin.deleteConsumerGroups(List.of(group)).all().get(TIMEOUT_S, TimeUnit.SECONDS));
    }

    /** The cause of the {@link ExecutionException} {@code call} throws, or null when it succeeds. */
    private static Throwable errorOf(Callable<?> call) {
        try {
            call.call();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new AssertionError("Expected the admin call to complete (with or without an error): " + e, e);
        }
    }

    private static ConsumerRebalanceListener recordingAssignments(List<Set<TopicPartition>> assigned) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                assigned.add(Set.copyOf(partitions));
            }
        };
    }

    /**
     * Every partition of the topic is owned by exactly one of {@code consumers}, each owns at least one, and all are
     * in the same generation (the rebalance is over for all of them).
     */
    static void assertOneOwnerPerPartition(List<KafkaConsumer<String, String>> consumers, int partitions) {
        List<TopicPartition> owned = new ArrayList<>();
        Set<Integer> generations = new HashSet<>();
        for (KafkaConsumer<String, String> consumer : consumers) {
            assertThat(consumer.assignment()).as("assignment of a member").isNotEmpty();
            owned.addAll(consumer.assignment());
            generations.add(consumer.groupMetadata().generationId());
        }
        assertThat(owned).as("owned partitions").doesNotHaveDuplicates().hasSize(partitions);
        assertThat(generations).as("generations of the members").hasSize(1);
    }

    private static ConsumerGroupDescription describe(BrokerProcess broker, String group) throws Exception {
        try (Admin admin = GroupClients.admin(broker)) {
            return admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
        }
    }

    private static void noLeaks(BrokerProcess broker) {
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }
}
