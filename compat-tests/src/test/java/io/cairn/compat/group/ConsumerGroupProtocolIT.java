package io.cairn.compat.group;

import static io.cairn.compat.group.GroupClients.TIMEOUT_S;
import static io.cairn.compat.group.GroupClients.pollUntil;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberToRemove;
import org.apache.kafka.clients.admin.RemoveMembersFromConsumerGroupOptions;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.FencedInstanceIdException;
import org.apache.kafka.common.errors.GroupSubscribedToTopicException;
import org.apache.kafka.common.errors.InconsistentGroupProtocolException;
import org.apache.kafka.common.errors.InvalidSessionTimeoutException;
import org.apache.kafka.common.errors.OffsetMetadataTooLarge;
import org.apache.kafka.common.errors.UnknownMemberIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The finer points of the classic group protocol as a Java client sees them, against Cairn and the reference Kafka
 * with the same scenario: the incremental (cooperative) rebalance moves only the partitions that change owner, the
 * group's protocol is one every member supports (a member with none in common is refused), session timeouts outside
 * the broker's bounds are refused, a second live member with a static member's instance id fences the first, Admin
 * removes members that left without a LeaveGroup; offsets: auto-commit on close, metadata over Kafka's 4096-byte
 * limit refused, a deleted topic's offsets gone, an active group's offsets neither altered nor deleted for a topic it
 * subscribes to, unknown topics, a new group created by Admin; two groups in one Admin call, groups listed by state
 * and type, authorized operations without an authorizer.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class ConsumerGroupProtocolIT {

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aCooperativeRebalanceRevokesOnlyThePartitionsThatMoveToTheNewMember(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-cooperative", 6);
        String group = GroupClients.uniqueName("group-cooperative");
        Map<String, Object> cooperative = Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                CooperativeStickyAssignor.class.getName());
        List<Collection<TopicPartition>> revoked = new ArrayList<>();
        try (KafkaConsumer<String, String> first = GroupClients.consumer(broker, group, cooperative);
                KafkaConsumer<String, String> second = GroupClients.consumer(broker, group, cooperative);
                Admin admin = GroupClients.admin(broker)) {
            first.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    revoked.add(List.copyOf(partitions));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                }
            });
            pollUntil(List.of(first), () -> assertThat(first.assignment()).hasSize(6));

            // When
            second.subscribe(List.of(topic));

            // Then
            pollUntil(List.of(first, second), () -> {
                assertThat(first.assignment()).hasSize(3);
                assertThat(second.assignment()).hasSize(3);
                assertThat(first.groupMetadata().generationId()).isEqualTo(second.groupMetadata().generationId());
            });
            Set<TopicPartition> allRevoked = new HashSet<>();
            revoked.forEach(allRevoked::addAll);
            assertThat(allRevoked).as("partitions the first member gave up (each onPartitionsRevoked: %s)", revoked)
                    .isEqualTo(second.assignment());
            assertThat(admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_S, TimeUnit.SECONDS).partitionAssignor()).isEqualTo("cooperative-sticky");
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void theGroupUsesAnAssignorEveryMemberSupportsAndRefusesAMemberWithoutOne(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-protocol", 2);
        String group = GroupClients.uniqueName("group-protocol");
        try (KafkaConsumer<String, String> both = GroupClients.consumer(broker, group,
                Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                        RangeAssignor.class.getName() + "," + RoundRobinAssignor.class.getName()));
                KafkaConsumer<String, String> roundRobin = GroupClients.consumer(broker, group,
                        Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                                RoundRobinAssignor.class.getName()));
                KafkaConsumer<String, String> range = GroupClients.consumer(broker, group,
                        Map.of(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, RangeAssignor.class.getName()));
                Admin admin = GroupClients.admin(broker)) {
            both.subscribe(List.of(topic));
            roundRobin.subscribe(List.of(topic));

            // When
            pollUntil(List.of(both, roundRobin), () -> {
                assertThat(both.assignment()).hasSize(1);
                assertThat(roundRobin.assignment()).hasSize(1);
            });
            range.subscribe(List.of(topic));

            // Then
            assertThat(admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_S, TimeUnit.SECONDS).partitionAssignor()).as("assignor of the group")
                    .isEqualTo("roundrobin");
            await().atMost(Duration.ofSeconds(30)).pollInSameThread().untilAsserted(() -> {
                both.poll(GroupClients.POLL);
                roundRobin.poll(GroupClients.POLL);
                assertThatThrownBy(() -> range.poll(GroupClients.POLL)).as("poll of a range-only member")
                        .isInstanceOf(InconsistentGroupProtocolException.class);
            });
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aSecondLiveConsumerWithTheSameGroupInstanceIdFencesTheFirst(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-fenced", 2);
        String group = GroupClients.uniqueName("group-fenced");
        Map<String, Object> instance = Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-1",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 30_000, ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
        try (KafkaConsumer<String, String> old = GroupClients.consumer(broker, group, instance);
                KafkaConsumer<String, String> replacement = GroupClients.consumer(broker, group, instance)) {
            old.subscribe(List.of(topic));
            pollUntil(List.of(old), () -> assertThat(old.assignment()).hasSize(2));

            // When
            replacement.subscribe(List.of(topic));
            pollUntil(List.of(replacement), () -> assertThat(replacement.assignment()).hasSize(2));

            // Then
            await().atMost(Duration.ofSeconds(30)).pollInSameThread().untilAsserted(() ->
                    assertThatThrownBy(() -> old.poll(GroupClients.POLL)).as("poll of the fenced consumer")
                            .isInstanceOf(FencedInstanceIdException.class));
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void adminRemovesAStaticMemberThatLeftAndTheOtherMemberGetsItsPartitions(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-remove", 4);
        String group = GroupClients.uniqueName("group-remove");
        try (KafkaConsumer<String, String> stays = GroupClients.consumer(broker, group,
                Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-1",
                        ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 60_000));
                Admin admin = GroupClients.admin(broker)) {
            stays.subscribe(List.of(topic));
            pollUntil(List.of(stays), () -> assertThat(stays.assignment()).hasSize(4));
            try (KafkaConsumer<String, String> leaves = GroupClients.consumer(broker, group, Map.of(
                    ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, "instance-2",
                    ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 60_000))) {
                leaves.subscribe(List.of(topic));
                pollUntil(List.of(stays, leaves), () -> {
                    assertThat(stays.assignment()).hasSize(2);
                    assertThat(leaves.assignment()).hasSize(2);
                });
            }

            // When
            admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions(
                    List.of(new MemberToRemove("instance-2")))).all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then: well before the 60 s session timeout
            pollUntil(List.of(stays), () -> assertThat(stays.assignment()).hasSize(4));
            assertThat(admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_S, TimeUnit.SECONDS).members()).singleElement()
                    .satisfies(member -> assertThat(member.groupInstanceId()).contains("instance-1"));
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void adminRemovesAllMembersThatVanishedSoTheGroupCanBeDeletedButNotAnUnknownInstance(BrokerKind kind)
            throws Exception {
        // Given: a dynamic member that vanished without a LeaveGroup (its session would last 45 s)
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-remove-all", 2);
        String group = GroupClients.uniqueName("group-remove-all");
        try (Admin admin = GroupClients.admin(broker)) {
            try (KafkaConsumer<String, String> vanishes = GroupClients.consumer(broker, group, Map.of())) {
                vanishes.subscribe(List.of(topic));
                pollUntil(List.of(vanishes), () -> assertThat(vanishes.assignment()).hasSize(2));
                vanishes.close(CloseOptions.groupMembershipOperation(
                        CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP));
            }

            // When
            Throwable unknownInstance = errorOf(() -> admin.removeMembersFromConsumerGroup(group,
                    new RemoveMembersFromConsumerGroupOptions(List.of(new MemberToRemove("no-such-instance"))))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS));
            int membersBefore = admin.describeConsumerGroups(List.of(group)).describedGroups().get(group)
                    .get(TIMEOUT_S, TimeUnit.SECONDS).members().size();
            admin.removeMembersFromConsumerGroup(group, new RemoveMembersFromConsumerGroupOptions()).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(unknownInstance).as("removing an unknown instance").isInstanceOf(UnknownMemberIdException.class);
            assertThat(membersBefore).as("members before the removal").isEqualTo(1);
            ConsumerGroupDescription after = admin.describeConsumerGroups(List.of(group)).describedGroups()
                    .get(group).get(TIMEOUT_S, TimeUnit.SECONDS);
            assertThat(after.groupState()).as("state after removing every member").isEqualTo(GroupState.EMPTY);
            assertThat(after.members()).as("members after removing every member").isEmpty();
            admin.deleteConsumerGroups(List.of(group)).all().get(TIMEOUT_S, TimeUnit.SECONDS);
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void autoCommitOnCloseStoresThePositionsAndTheEmptyGroupIsListedByState(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-autocommit", 2);
        String group = GroupClients.uniqueName("group-autocommit");
        GroupClients.produce(broker, topic, 2, 30);
        try (Admin admin = GroupClients.admin(broker)) {
            try (KafkaConsumer<String, String> consumer = GroupClients.consumer(broker, group, Map.of(
                    ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, true,
                    ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, 600_000))) {
                consumer.subscribe(List.of(topic));
                List<String> read = new ArrayList<>();
                pollUntil(List.of(consumer), Duration.ofSeconds(60),
                        (c, polled) -> polled.forEach(record -> read.add(record.value())),
                        () -> assertThat(read).hasSize(30));
                assertThat(listed(admin, GroupState.STABLE)).as("stable groups").contains(group);

                // When
            }

            // Then
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(TIMEOUT_S, TimeUnit.SECONDS)).as("offsets committed on close").isEqualTo(Map.of(
                            new TopicPartition(topic, 0), new OffsetAndMetadata(15, Optional.of(0), ""),
                            new TopicPartition(topic, 1), new OffsetAndMetadata(15, Optional.of(0), "")));
            assertThat(listed(admin, GroupState.EMPTY)).as("empty groups").contains(group);
            assertThat(listed(admin, GroupState.STABLE)).as("stable groups").doesNotContain(group);
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aCommitWithMetadataOverTheLimitIsRefusedAndNothingIsStored(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-metadata", 1);
        String group = GroupClients.uniqueName("group-metadata");
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = GroupClients.consumer(broker, group, Map.of())) {
            consumer.assign(List.of(tp));

            // When / Then
            assertThatThrownBy(() -> consumer.commitSync(Map.of(tp, new OffsetAndMetadata(1, "m".repeat(4097))),
                    GroupClients.TIMEOUT)).isInstanceOf(OffsetMetadataTooLarge.class);
            Map<TopicPartition, OffsetAndMetadata> none = new HashMap<>();
            none.put(tp, null);
            assertThat(consumer.committed(Set.of(tp), GroupClients.TIMEOUT)).as("committed()").isEqualTo(none);
            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(1, "m".repeat(4096))), GroupClients.TIMEOUT);
            assertThat(consumer.committed(Set.of(tp), GroupClients.TIMEOUT).get(tp).metadata())
                    .as("metadata of 4096 bytes").hasSize(4096);
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void theOffsetsOfADeletedTopicAreRemovedFromTheGroup(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String deleted = GroupClients.createTopic(broker, "group-deleted", 1);
        String kept = GroupClients.createTopic(broker, "group-kept", 1);
        String group = GroupClients.uniqueName("group-deleted");
        Map<TopicPartition, OffsetAndMetadata> keptOffsets = Map.of(new TopicPartition(kept, 0),
                new OffsetAndMetadata(3));
        try (KafkaConsumer<String, String> consumer = GroupClients.consumer(broker, group, Map.of());
                Admin admin = GroupClients.admin(broker)) {
            consumer.assign(List.of(new TopicPartition(deleted, 0), new TopicPartition(kept, 0)));
            consumer.commitSync(Map.of(new TopicPartition(deleted, 0), new OffsetAndMetadata(5),
                    new TopicPartition(kept, 0), new OffsetAndMetadata(3)), GroupClients.TIMEOUT);
            consumer.unsubscribe();

            // When
            admin.deleteTopics(List.of(deleted)).all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(admin
                    .listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(TIMEOUT_S, TimeUnit.SECONDS))
                    .as("offsets once the topic is deleted").isEqualTo(keptOffsets));
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aSessionTimeoutOutsideTheBrokersBoundsIsRefused(BrokerKind kind) {
        // Given: Kafka's group.min.session.timeout.ms is 6 s and group.max.session.timeout.ms 30 min
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-session", 1);
        String group = GroupClients.uniqueName("group-session");
        try (KafkaConsumer<String, String> tooShort = GroupClients.consumer(broker, group, Map.of(
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 5_000, ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 1_000));
                KafkaConsumer<String, String> tooLong = GroupClients.consumer(broker, group,
                        Map.of(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 1_800_001))) {

            // When
            tooShort.subscribe(List.of(topic));
            tooLong.subscribe(List.of(topic));

            // Then
            for (KafkaConsumer<String, String> consumer : List.of(tooShort, tooLong)) {
                await().atMost(Duration.ofSeconds(30)).pollInSameThread().untilAsserted(() ->
                        assertThatThrownBy(() -> consumer.poll(GroupClients.POLL)).as("poll")
                                .isInstanceOf(InvalidSessionTimeoutException.class));
            }
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void theOffsetsOfAnActiveGroupCannotBeAlteredNorDeletedForATopicItSubscribesTo(BrokerKind kind)
            throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String subscribed = GroupClients.createTopic(broker, "group-active", 1);
        String other = GroupClients.createTopic(broker, "group-other", 1);
        String group = GroupClients.uniqueName("group-active");
        TopicPartition subscribedTp = new TopicPartition(subscribed, 0);
        TopicPartition otherTp = new TopicPartition(other, 0);
        try (KafkaConsumer<String, String> member = GroupClients.consumer(broker, group, Map.of());
                Admin admin = GroupClients.admin(broker)) {
            member.subscribe(List.of(subscribed));
            pollUntil(List.of(member), () -> assertThat(member.assignment()).hasSize(1));
            member.commitSync(Map.of(subscribedTp, new OffsetAndMetadata(0), otherTp, new OffsetAndMetadata(0)));

            // When
            Throwable altered = errorOf(() -> admin.alterConsumerGroupOffsets(group,
                    Map.of(subscribedTp, new OffsetAndMetadata(1))).all().get(TIMEOUT_S, TimeUnit.SECONDS));
            Throwable deletedSubscribed = errorOf(() -> admin.deleteConsumerGroupOffsets(group, Set.of(subscribedTp))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS));
            Throwable deletedOther = errorOf(() -> admin.deleteConsumerGroupOffsets(group, Set.of(otherTp))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS));

            // Then
            assertThat(altered).as("alterConsumerGroupOffsets").isInstanceOf(UnknownMemberIdException.class);
            assertThat(deletedSubscribed).as("deleteConsumerGroupOffsets of the subscribed topic")
                    .isInstanceOf(GroupSubscribedToTopicException.class);
            assertThat(deletedOther).as("deleteConsumerGroupOffsets of another topic").isNull();
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(TIMEOUT_S, TimeUnit.SECONDS)).as("offsets left")
                    .isEqualTo(Map.of(subscribedTp, new OffsetAndMetadata(0)));
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void adminListsDescribesAndDeletesTwoGroupsInOneGo(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-two", 2);
        String first = GroupClients.uniqueName("group-two-a");
        String second = GroupClients.uniqueName("group-two-b");
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        try (KafkaConsumer<String, String> a = GroupClients.consumer(broker, first, Map.of());
                KafkaConsumer<String, String> b = GroupClients.consumer(broker, second, Map.of());
                Admin admin = GroupClients.admin(broker)) {
            a.commitSync(Map.of(p0, new OffsetAndMetadata(1), p1, new OffsetAndMetadata(2)));
            b.commitSync(Map.of(p0, new OffsetAndMetadata(3)));

            // When
            Map<String, Map<TopicPartition, OffsetAndMetadata>> offsets = admin.listConsumerGroupOffsets(Map.of(
                    first, new ListConsumerGroupOffsetsSpec(),
                    second, new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(p0, p1))))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            Map<String, ConsumerGroupDescription> described = admin.describeConsumerGroups(List.of(first, second),
                    new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            admin.deleteConsumerGroups(List.of(first, second)).all().get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(offsets.get(first)).as("offsets of %s", first)
                    .isEqualTo(Map.of(p0, new OffsetAndMetadata(1), p1, new OffsetAndMetadata(2)));
            Map<TopicPartition, OffsetAndMetadata> secondExpected = new HashMap<>();
            secondExpected.put(p0, new OffsetAndMetadata(3));
            secondExpected.put(p1, null);
            assertThat(offsets.get(second)).as("offsets of %s", second).isEqualTo(secondExpected);
            assertThat(described.values()).extracting(ConsumerGroupDescription::groupState)
                    .containsExactly(GroupState.EMPTY, GroupState.EMPTY);
            assertThat(described.get(first).authorizedOperations()).as("authorized operations (no authorizer)")
                    .containsExactlyInAnyOrder(AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE,
                            AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS);
            assertThat(listedIds(admin, new ListGroupsOptions())).as("groups after the deletion")
                    .doesNotContain(first, second);
            assertThat(listedIds(admin, new ListGroupsOptions().withTypes(Set.of(GroupType.CONSUMER))))
                    .as("groups of the new consumer protocol").doesNotContain(first, second);
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void offsetsOfAnUnknownTopicAreNeitherStoredNorFound(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String group = GroupClients.uniqueName("group-unknown-topic");
        TopicPartition unknown = new TopicPartition(GroupClients.uniqueName("no-such-topic"), 0);
        try (Admin admin = GroupClients.admin(broker)) {

            // When
            Throwable altered = errorOf(() -> admin.alterConsumerGroupOffsets(group,
                    Map.of(unknown, new OffsetAndMetadata(1))).all().get(TIMEOUT_S, TimeUnit.SECONDS));
            Map<TopicPartition, OffsetAndMetadata> fetched = admin.listConsumerGroupOffsets(Map.of(group,
                    new ListConsumerGroupOffsetsSpec().topicPartitions(List.of(unknown))))
                    .partitionsToOffsetAndMetadata().get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(altered).as("alterConsumerGroupOffsets").isInstanceOf(UnknownTopicOrPartitionException.class);
            Map<TopicPartition, OffsetAndMetadata> none = new HashMap<>();
            none.put(unknown, null);
            assertThat(fetched).as("listConsumerGroupOffsets").isEqualTo(none);
        }
        noLeaks(broker);
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void adminAltersTheOffsetsOfAGroupThatDidNotExistAndAConsumerThenStartsThere(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "group-new", 1);
        String group = GroupClients.uniqueName("group-new");
        TopicPartition tp = new TopicPartition(topic, 0);
        GroupClients.produce(broker, topic, 1, 10);
        try (Admin admin = GroupClients.admin(broker)) {

            // When
            admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(6, "set by admin"))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS);

            // Then
            assertThat(admin.listGroups().all().get(TIMEOUT_S, TimeUnit.SECONDS)).as("listGroups")
                    .contains(new GroupListing(group, Optional.of(GroupType.CLASSIC), "",
                            Optional.of(GroupState.EMPTY)));
            try (KafkaConsumer<String, String> consumer = GroupClients.consumer(broker, group, Map.of())) {
                consumer.subscribe(List.of(topic));
                List<Long> offsets = new ArrayList<>();
                pollUntil(List.of(consumer), Duration.ofSeconds(60),
                        (c, polled) -> polled.forEach(record -> offsets.add(record.offset())),
                        () -> assertThat(offsets).hasSize(4));
                assertThat(offsets).as("offsets read").containsExactly(6L, 7L, 8L, 9L);
            }
        }
        noLeaks(broker);
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

    private static List<String> listedIds(Admin admin, ListGroupsOptions options) throws Exception {
        return admin.listGroups(options).all().get(TIMEOUT_S, TimeUnit.SECONDS).stream().map(GroupListing::groupId)
                .toList();
    }

    private static List<String> listed(Admin admin, GroupState state) throws Exception {
        return admin.listGroups(new ListGroupsOptions().inGroupStates(Set.of(state))).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS).stream().map(GroupListing::groupId).toList();
    }

    private static void noLeaks(BrokerProcess broker) {
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }
}
