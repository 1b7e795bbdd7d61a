package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.LogCapture;
import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.group.GroupConfig;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.txn.TransactionConfig;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.log.Time;
import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ConsumerGroupDescribeRequestData;
import io.cairn.wire.message.ConsumerGroupDescribeResponseData;
import io.cairn.wire.message.ConsumerGroupHeartbeatRequestData;
import io.cairn.wire.message.ConsumerGroupHeartbeatResponseData;
import io.cairn.wire.message.DeleteGroupsRequestData;
import io.cairn.wire.message.DeleteGroupsResponseData;
import io.cairn.wire.message.DescribeGroupsRequestData;
import io.cairn.wire.message.DescribeGroupsResponseData.DescribedGroup;
import io.cairn.wire.message.FindCoordinatorRequestData;
import io.cairn.wire.message.FindCoordinatorResponseData;
import io.cairn.wire.message.FindCoordinatorResponseData.Coordinator;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.message.JoinGroupRequestData.JoinGroupRequestProtocol;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.LeaveGroupRequestData;
import io.cairn.wire.message.LeaveGroupResponseData;
import io.cairn.wire.message.ListGroupsRequestData;
import io.cairn.wire.message.ListGroupsResponseData;
import io.cairn.wire.message.OffsetCommitRequestData;
import io.cairn.wire.message.OffsetCommitRequestData.OffsetCommitRequestPartition;
import io.cairn.wire.message.OffsetCommitRequestData.OffsetCommitRequestTopic;
import io.cairn.wire.message.OffsetCommitResponseData;
import io.cairn.wire.message.OffsetFetchRequestData;
import io.cairn.wire.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import io.cairn.wire.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import io.cairn.wire.message.OffsetFetchResponseData;
import io.cairn.wire.message.OffsetFetchResponseData.OffsetFetchResponsePartitions;
import io.cairn.wire.message.SyncGroupRequestData;
import io.cairn.wire.message.SyncGroupRequestData.SyncGroupRequestAssignment;
import io.cairn.wire.message.SyncGroupResponseData;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The group coordinator behind its handlers, on a real metadata node, real logs and a real {@code
 * __consumer_offsets}: FindCoordinator creates the topic, commits survive a reload from the log, a group goes through
 * join, sync, describe, list, leave and delete.
 */
@Timeout(120)
class GroupCoordinatorTest {

    private static final int OFFSETS_PARTITIONS = 3;

    @TempDir
    Path dir;

    private PartitionsFixture fixture;
    private GroupCoordinator coordinator;

    @BeforeEach
    void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        coordinator = newCoordinator();
    }

    private PartitionPurgatory purgatory;
    /** The transaction coordinator FindCoordinator needs; it never leads a partition here. */
    private TransactionCoordinator transactions;

    @AfterEach
    void stop() {
        if (transactions != null) {
            transactions.close();
        }
        coordinator.close();
        if (purgatory != null) {
            purgatory.close();
        }
        fixture.close();
    }

    private GroupCoordinator newCoordinator() {
        if (purgatory == null) {
            purgatory = new PartitionPurgatory(fixture.replicaManager());
        }
        GroupCoordinator created = new GroupCoordinator(fixture.replicaManager(), fixture.metadata().node(),
            new GroupConfig(6_000, 300_000, 0, 10, 7L * 24 * 3_600_000, 600_000, 64),
            new CoordinatorRuntimeSettings(2, 5, 5_000L), OFFSETS_PARTITIONS,
            Time.SYSTEM, purgatory);
        created.start();
        return created;
    }

    private static <S> S call(ApiHandler<?, ?> handler, ApiMessage request, int version) throws Exception {
        @SuppressWarnings("unchecked")
        ApiHandler<ApiMessage, ApiMessage> h = (ApiHandler<ApiMessage, ApiMessage>) handler;
        @SuppressWarnings("unchecked")
        S response = (S) h.handle(MetadataFixture.context(h.apiKey(), version), request).toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
        return response;
    }

    private FindCoordinatorHandler findCoordinator() {
        if (transactions == null) {
            transactions = new TransactionCoordinator(fixture.replicaManager(), fixture.metadata().node(), purgatory,
                TransactionConfig.defaults(), Time.SYSTEM, (id, producerId, epoch, commit, coordinatorEpoch,
                    partitions) -> CompletableFuture.completedFuture(null),
                () -> CompletableFuture.failedFuture(new IllegalStateException("no producer ids here")));
        }
        return new FindCoordinatorHandler(fixture.metadata().node(), coordinator, transactions,
            new AutoTopicCreation(true, OFFSETS_PARTITIONS, (short) 1, 1, (short) 1));
    }

    /** Finds the coordinator of {@code group} until it is this broker (the topic is created by the first call). */
    /** Waits until FindCoordinator names this broker and the group's shard has loaded (as a client retries). */
    private void awaitCoordinator(String group) {
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            FindCoordinatorResponseData response = call(findCoordinator(),
                new FindCoordinatorRequestData().setKeyType((byte) 0).setCoordinatorKeys(List.of(group)), 4);
            if (response.coordinators().get(0).errorCode() != Errors.NONE.code()) {
                return false;
            }
            OffsetFetchResponseData offsets = call(new OffsetFetchHandler(coordinator), new OffsetFetchRequestData()
                .setGroups(List.of(new OffsetFetchRequestGroup().setGroupId(group))), 9);
            return offsets.groups().get(0).errorCode() == Errors.NONE.code();
        });
    }

    private OffsetCommitResponseData commit(String group, String topic, long offset, String metadata)
        throws Exception {
        return commit(group, -1, topic, 0, offset, metadata);
    }

    private OffsetCommitResponseData commit(String group, int generation, String topic, int partition, long offset,
                                            String metadata) throws Exception {
        OffsetCommitRequestData request = new OffsetCommitRequestData().setGroupId(group)
            .setGenerationIdOrMemberEpoch(generation).setMemberId("").setTopics(List.of(new OffsetCommitRequestTopic()
                .setName(topic).setPartitions(List.of(new OffsetCommitRequestPartition().setPartitionIndex(partition)
                    .setCommittedOffset(offset).setCommittedLeaderEpoch(3).setCommittedMetadata(metadata)))));
        return call(GroupHandlers.offsetCommit(coordinator, fixture.metadata().node()), request, 9);
    }

    private OffsetFetchResponsePartitions fetch(String group, String topic) throws Exception {
        OffsetFetchRequestData request = new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestGroup()
            .setGroupId(group).setTopics(List.of(new OffsetFetchRequestTopics().setName(topic)
                .setPartitionIndexes(List.of(0))))));
        OffsetFetchResponseData response = call(new OffsetFetchHandler(coordinator), request, 9);
        assertThat(response.groups().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        return response.groups().get(0).topics().get(0).partitions().get(0);
    }

    @Test
    void findCoordinatorCreatesTheOffsetsTopicAndThenNamesThisBroker() throws Exception {
        // Given no __consumer_offsets yet
        FindCoordinatorRequestData request = new FindCoordinatorRequestData().setKey("g1").setKeyType((byte) 0);

        // When
        FindCoordinatorResponseData first = call(findCoordinator(), request, 3);

        // Then
        assertThat(first.errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE.code());
        awaitCoordinator("g1");
        FindCoordinatorResponseData found = call(findCoordinator(), request, 3);
        assertThat(found.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(found.nodeId()).isEqualTo(1);
        assertThat(found.host()).isEqualTo("localhost");
        assertThat(found.port()).isEqualTo(9092);
        assertThat(fixture.metadata().node().currentImage().topic(GroupCoordinator.TOPIC).orElseThrow()
            .partitions()).hasSize(OFFSETS_PARTITIONS);
        Coordinator txn = ((FindCoordinatorResponseData) call(findCoordinator(), new FindCoordinatorRequestData()
            .setKeyType((byte) 1).setCoordinatorKeys(List.of("t")), 4)).coordinators().get(0);
        assertThat(txn.errorCode()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE.code());
    }

    @Test
    void findCoordinatorAnswersCoordinatorNotAvailableAsKafkaWhileTheOffsetsTopicCannotBeCreated() throws Exception {
        // Given offsets.topic.replication.factor 3 on a cluster of one broker
        findCoordinator();
        FindCoordinatorHandler handler = new FindCoordinatorHandler(fixture.metadata().node(), coordinator,
            transactions, new AutoTopicCreation(true, OFFSETS_PARTITIONS, (short) 3, 1, (short) 3));
        FindCoordinatorRequestData batch = new FindCoordinatorRequestData().setKeyType((byte) 0)
            .setCoordinatorKeys(List.of("g1", "g2"));

        // Then every request is COORDINATOR_NOT_AVAILABLE (no message per v4+ key, the default one before v4) and
        // asks again, and the controller keeps refusing the topic; the refusal is logged at WARN once, not per ask
        List<String> refusals;
        try (LogCapture logs = LogCapture.start()) {
            awaitRefusals(handler, batch);
            refusals = logs.warnings("Creation of __consumer_offsets failed");
        }
        assertThat(refusals).as("WARN lines of the refusal").singleElement().asString()
            .contains("INVALID_REPLICATION_FACTOR").contains("(replication factor 3)");
        FindCoordinatorResponseData unknownType = call(handler, new FindCoordinatorRequestData().setKeyType((byte) 9)
            .setCoordinatorKeys(List.of("a", "b")), 4);
        assertThat(unknownType.coordinators()).as("an unknown key type fails the whole request").hasSize(2)
            .allMatch(c -> c.errorCode() == Errors.INVALID_REQUEST.code()
                && Errors.INVALID_REQUEST.message().equals(c.errorMessage()));
        FindCoordinatorResponseData share = call(handler, new FindCoordinatorRequestData().setKeyType((byte) 2)
            .setCoordinatorKeys(List.of("s")), 5);
        assertThat(share.coordinators().get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
    }

    /** Asks for two groups' coordinators until COORDINATOR_NOT_AVAILABLE has been the answer for 500 ms. */
    private void awaitRefusals(FindCoordinatorHandler handler, FindCoordinatorRequestData batch) {
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(10)).until(() -> {
            FindCoordinatorResponseData v4 = call(handler, batch, 4);
            FindCoordinatorResponseData v3 = call(handler, new FindCoordinatorRequestData().setKey("g1"), 3);
            return v4.coordinators().stream().allMatch(c -> c.errorCode() == Errors.COORDINATOR_NOT_AVAILABLE.code()
                    && c.errorMessage() == null && c.nodeId() == -1)
                && v3.errorCode() == Errors.COORDINATOR_NOT_AVAILABLE.code()
                && "The coordinator is not available.".equals(v3.errorMessage())
                && fixture.metadata().node().currentImage().topic(GroupCoordinator.TOPIC).isEmpty();
        });
    }

    @Test
    void committedOffsetsAreReadBackAndSurviveReloadingTheShardFromTheLog() throws Exception {
        // Given
        fixture.createTopic("orders", 1);
        awaitCoordinator("loader");
        assertThat(commit("loader", "orders", 42, "m").topics().get(0).partitions().get(0).errorCode())
            .isEqualTo(Errors.NONE.code());
        assertThat(commit("loader", "orders", 43, "x".repeat(65)).topics().get(0).partitions().get(0).errorCode())
            .isEqualTo(Errors.OFFSET_METADATA_TOO_LARGE.code());
        assertThat(commit("loader", "nope", 1, "").topics().get(0).partitions().get(0).errorCode())
            .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(fetch("loader", "orders").committedOffset()).isEqualTo(42);

        // When a new coordinator loads the shard from the log
        coordinator.close();
        coordinator = newCoordinator();

        // Then
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            OffsetFetchResponsePartitions loaded = fetch("loader", "orders");
            assertThat(loaded.committedOffset()).isEqualTo(42);
            assertThat(loaded.committedLeaderEpoch()).isEqualTo(3);
            assertThat(loaded.metadata()).isEqualTo("m");
        });
        assertThat(fetch("loader", "other").committedOffset()).isEqualTo(-1);
        ListGroupsResponseData listed = call(new ListGroupsHandler(coordinator), new ListGroupsRequestData(), 5);
        assertThat(listed.groups()).extracting(ListGroupsResponseData.ListedGroup::groupId).contains("loader");
    }

    private OffsetFetchResponsePartitions fetchStable(String group, String topic) throws Exception {
        OffsetFetchRequestData request = new OffsetFetchRequestData().setRequireStable(true).setGroups(List.of(
            new OffsetFetchRequestGroup().setGroupId(group).setTopics(List.of(new OffsetFetchRequestTopics()
                .setName(topic).setPartitionIndexes(List.of(0))))));
        OffsetFetchResponseData response = call(new OffsetFetchHandler(coordinator), request, 9);
        return response.groups().get(0).topics().get(0).partitions().get(0);
    }

    @Test
    void withAnAuthorizerGroupApisAnswerForTheGroupsAndTopicsTheCallerMayRead() throws Exception {
        // Given: alice may read group acl-group and topic acl-readable, nothing else
        fixture.createTopic("acl-readable", 1);
        fixture.createTopic("acl-secret", 1);
        awaitCoordinator("acl-group");
        AclEntry[] acls = {
            MetadataFixture.allow(AclResourceType.GROUP, "acl-group", AclPatternType.LITERAL, "User:alice",
                AclOperation.READ),
            MetadataFixture.allow(AclResourceType.TOPIC, "acl-readable", AclPatternType.LITERAL, "User:alice",
                AclOperation.READ)};
        OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId("acl-group")
            .setGenerationIdOrMemberEpoch(-1).setMemberId("").setTopics(List.of(
                new OffsetCommitRequestTopic().setName("acl-readable").setPartitions(List.of(
                    new OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(5))),
                new OffsetCommitRequestTopic().setName("acl-secret").setPartitions(List.of(
                    new OffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(6)))));
        OffsetFetchRequestData fetch = new OffsetFetchRequestData().setGroups(List.of(
            new OffsetFetchRequestGroup().setGroupId("acl-group").setTopics(List.of(
                new OffsetFetchRequestTopics().setName("acl-readable").setPartitionIndexes(List.of(0)),
                new OffsetFetchRequestTopics().setName("acl-secret").setPartitionIndexes(List.of(0)))),
            new OffsetFetchRequestGroup().setGroupId("other-group").setTopics(null)));

        // When
        OffsetCommitResponseData committed = (OffsetCommitResponseData) GroupHandlers.offsetCommit(coordinator,
            fixture.metadata().node()).handle(MetadataFixture.securedContext(ApiKey.OFFSET_COMMIT, 9, "alice", acls),
            commit).toCompletableFuture().get(30, TimeUnit.SECONDS);
        OffsetFetchResponseData fetched = new OffsetFetchHandler(coordinator).handle(
            MetadataFixture.securedContext(ApiKey.OFFSET_FETCH, 9, "alice", acls), fetch).toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
        HeartbeatResponseData otherGroup = (HeartbeatResponseData) GroupHandlers.heartbeat(coordinator).handle(
            MetadataFixture.securedContext(ApiKey.HEARTBEAT, 4, "alice", acls), new HeartbeatRequestData()
                .setGroupId("other-group").setGenerationId(1).setMemberId("m")).toCompletableFuture()
            .get(30, TimeUnit.SECONDS);

        // Then
        assertThat(committed.topics()).extracting(t -> t.name() + ":"
            + Errors.forCode(t.partitions().get(0).errorCode()))
            .containsExactly("acl-readable:NONE", "acl-secret:TOPIC_AUTHORIZATION_FAILED");
        assertThat(fetched.groups().get(0).topics()).extracting(t -> t.name() + ":"
            + Errors.forCode(t.partitions().get(0).errorCode()) + ":" + t.partitions().get(0).committedOffset())
            .containsExactly("acl-readable:NONE:5", "acl-secret:TOPIC_AUTHORIZATION_FAILED:-1");
        assertThat(fetched.groups().get(1).errorCode()).isEqualTo(Errors.GROUP_AUTHORIZATION_FAILED.code());
        assertThat(otherGroup.errorCode()).isEqualTo(Errors.GROUP_AUTHORIZATION_FAILED.code());
        assertThat(fetch("acl-group", "acl-secret").committedOffset()).isEqualTo(-1);
    }

    @Test
    void aTransactionalCommitIsUnstableUntilItsCommitMarkerAndSurvivesAReload() throws Exception {
        // Given: producer 5's transactional offset, written through TxnOffsetCommit
        fixture.createTopic("orders", 1);
        awaitCoordinator("txn-group");
        TxnOffsetCommitRequestData request = new TxnOffsetCommitRequestData().setTransactionalId("tx")
            .setGroupId("txn-group").setProducerId(5L).setProducerEpoch((short) 0).setTopics(List.of(
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName("orders").setPartitions(List.of(
                    new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0)
                        .setCommittedOffset(17L).setCommittedMetadata("t")))));
        TxnOffsetCommitResponseData written = call(GroupHandlers.txnOffsetCommit(coordinator,
            fixture.metadata().node()), request, 5);
        assertThat(written.topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(fetchStable("txn-group", "orders").errorCode()).isEqualTo(Errors.UNSTABLE_OFFSET_COMMIT.code());
        assertThat(fetch("txn-group", "orders").committedOffset()).isEqualTo(-1);

        // When
        coordinator.completeTransaction(coordinator.partitionFor("txn-group"), 5L, (short) 0, 0, true)
            .get(30, TimeUnit.SECONDS);

        // Then
        assertThat(fetchStable("txn-group", "orders").committedOffset()).isEqualTo(17);
        coordinator.close();
        coordinator = newCoordinator();
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
            assertThat(fetchStable("txn-group", "orders").committedOffset()).isEqualTo(17));
    }

    @Test
    void aCommitToAPartitionTheTopicDoesNotHaveIsUnknownTopicOrPartitionAndNotStored() throws Exception {
        // Given a topic of three partitions
        fixture.createTopic("three", 3);
        awaitCoordinator("beyond");

        // When offsets are committed to partition 2 and to partition 7
        short inRange = commit("beyond", -1, "three", 2, 5, "").topics().get(0).partitions().get(0).errorCode();
        short beyond = commit("beyond", -1, "three", 7, 5, "").topics().get(0).partitions().get(0).errorCode();
        // and by a member of a generation the (empty) group does not have: Kafka's KafkaApis filters the unknown
        // partition before the coordinator sees the request
        short beyondStale = commit("beyond", 4, "three", 7, 5, "").topics().get(0).partitions().get(0)
            .errorCode();

        // Then
        assertThat(inRange).isEqualTo(Errors.NONE.code());
        assertThat(beyond).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(beyondStale).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        OffsetFetchRequestData request = new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestGroup()
            .setGroupId("beyond").setTopics(null)));
        OffsetFetchResponseData all = call(new OffsetFetchHandler(coordinator), request, 9);
        assertThat(all.groups().get(0).topics()).hasSize(1);
        assertThat(all.groups().get(0).topics().get(0).partitions())
            .extracting(OffsetFetchResponsePartitions::partitionIndex).containsExactly(2);
    }

    @Test
    void aGroupJoinsSyncsIsDescribedLeavesAndIsDeleted() throws Exception {
        // Given
        fixture.createTopic("events", 1);
        awaitCoordinator("team");
        JoinGroupRequestData join = new JoinGroupRequestData().setGroupId("team").setMemberId("")
            .setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000).setProtocolType("consumer")
            .setProtocols(List.of(new JoinGroupRequestProtocol().setName("range").setMetadata(new byte[] {1})));
        JoinGroupResponseData required = call(GroupHandlers.joinGroup(coordinator), join, 9);
        assertThat(required.errorCode()).isEqualTo(Errors.MEMBER_ID_REQUIRED.code());

        // When
        JoinGroupResponseData joined = call(GroupHandlers.joinGroup(coordinator),
            join.setMemberId(required.memberId()), 9);
        SyncGroupResponseData synced = call(GroupHandlers.syncGroup(coordinator), new SyncGroupRequestData()
            .setGroupId("team").setGenerationId(joined.generationId()).setMemberId(joined.memberId())
            .setProtocolType("consumer").setProtocolName("range").setAssignments(List.of(
                new SyncGroupRequestAssignment().setMemberId(joined.memberId()).setAssignment(new byte[] {7}))), 5);

        // Then
        assertThat(joined.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(joined.leader()).isEqualTo(joined.memberId());
        assertThat(synced.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(synced.assignment()).containsExactly(7);
        DescribedGroup described = ((io.cairn.wire.message.DescribeGroupsResponseData) call(
            new DescribeGroupsHandler(coordinator), new DescribeGroupsRequestData().setGroups(List.of("team")), 5))
            .groups().get(0);
        assertThat(described.groupState()).isEqualTo("Stable");
        assertThat(described.members()).hasSize(1);
        DeleteGroupsResponseData busy = call(new DeleteGroupsHandler(coordinator),
            new DeleteGroupsRequestData().setGroupsNames(List.of("team")), 2);
        assertThat(busy.results().get(0).errorCode()).isEqualTo(Errors.NON_EMPTY_GROUP.code());

        LeaveGroupResponseData left = call(GroupHandlers.leaveGroup(coordinator), new LeaveGroupRequestData()
            .setGroupId("team").setMembers(List.of(new LeaveGroupRequestData.MemberIdentity()
                .setMemberId(joined.memberId()))), 5);
        assertThat(left.errorCode()).isEqualTo(Errors.NONE.code());
        DeleteGroupsResponseData deleted = call(new DeleteGroupsHandler(coordinator),
            new DeleteGroupsRequestData().setGroupsNames(List.of("team", "missing")), 2);
        assertThat(deleted.results()).extracting(r -> Errors.forCode(r.errorCode()))
            .containsExactly(Errors.NONE, Errors.GROUP_ID_NOT_FOUND);
    }

    @Test
    void aConsumerGroupJoinsCommitsIsListedDescribedLeavesAndIsDeletedThroughItsHandlers() throws Exception {
        // Given
        fixture.createTopic("clicks", 2);
        awaitCoordinator("modern");
        ConsumerGroupHeartbeatHandler heartbeat = new ConsumerGroupHeartbeatHandler(coordinator,
            fixture.metadata().node());
        ConsumerGroupHeartbeatRequestData join = new ConsumerGroupHeartbeatRequestData().setGroupId("modern")
            .setMemberId("m-1").setMemberEpoch(0).setRebalanceTimeoutMs(30_000)
            .setSubscribedTopicNames(List.of("clicks")).setTopicPartitions(List.of());

        // When
        ConsumerGroupHeartbeatResponseData joined = call(heartbeat, join, 1);
        OffsetCommitRequestData commit = new OffsetCommitRequestData().setGroupId("modern").setMemberId("m-1")
            .setGenerationIdOrMemberEpoch(joined.memberEpoch()).setTopics(List.of(new OffsetCommitRequestTopic()
                .setName("clicks").setPartitions(List.of(new OffsetCommitRequestPartition().setPartitionIndex(0)
                    .setCommittedOffset(5).setCommittedLeaderEpoch(-1).setCommittedMetadata("")))));
        OffsetCommitResponseData committed = call(GroupHandlers.offsetCommit(coordinator, fixture.metadata().node()),
            commit, 9);
        OffsetCommitResponseData stale = call(GroupHandlers.offsetCommit(coordinator, fixture.metadata().node()),
            commit.setGenerationIdOrMemberEpoch(joined.memberEpoch() + 1), 9);
        ConsumerGroupDescribeResponseData describedModern = call(new ConsumerGroupDescribeHandler(coordinator,
            fixture.metadata().node()), new ConsumerGroupDescribeRequestData().setGroupIds(List.of("modern", "")), 1);
        DescribedGroup describedClassic = ((io.cairn.wire.message.DescribeGroupsResponseData) call(
            new DescribeGroupsHandler(coordinator), new DescribeGroupsRequestData().setGroups(List.of("modern")), 6))
            .groups().get(0);
        ListGroupsResponseData listed = call(new ListGroupsHandler(coordinator), new ListGroupsRequestData()
            .setTypesFilter(List.of("consumer")), 5);
        DeleteGroupsResponseData busy = call(new DeleteGroupsHandler(coordinator),
            new DeleteGroupsRequestData().setGroupsNames(List.of("modern")), 2);
        ConsumerGroupHeartbeatResponseData left = call(heartbeat, new ConsumerGroupHeartbeatRequestData()
            .setGroupId("modern").setMemberId("m-1").setMemberEpoch(-1), 1);
        DeleteGroupsResponseData deleted = call(new DeleteGroupsHandler(coordinator),
            new DeleteGroupsRequestData().setGroupsNames(List.of("modern")), 2);

        // Then
        assertThat(joined.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(joined.memberId()).isEqualTo("m-1");
        assertThat(joined.assignment().topicPartitions().get(0).partitions()).containsExactly(0, 1);
        assertThat(committed.topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(stale.topics().get(0).partitions().get(0).errorCode())
            .isEqualTo(Errors.STALE_MEMBER_EPOCH.code());
        assertThat(describedModern.groups()).extracting(g -> Errors.forCode(g.errorCode()))
            .containsExactly(Errors.NONE, Errors.INVALID_GROUP_ID);
        assertThat(describedModern.groups().get(0).groupState()).isEqualTo("Stable");
        assertThat(describedModern.groups().get(0).assignorName()).isEqualTo("uniform");
        assertThat(describedModern.groups().get(0).members()).singleElement()
            .satisfies(m -> assertThat(m.memberId()).isEqualTo("m-1"));
        assertThat(describedClassic.errorCode()).isEqualTo(Errors.GROUP_ID_NOT_FOUND.code());
        assertThat(describedClassic.groupState()).isEqualTo("Dead");
        assertThat(listed.groups()).extracting(ListGroupsResponseData.ListedGroup::groupId).containsExactly("modern");
        assertThat(listed.groups().get(0).protocolType()).isEqualTo("consumer");
        assertThat(busy.results().get(0).errorCode()).isEqualTo(Errors.NON_EMPTY_GROUP.code());
        assertThat(left.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(left.memberEpoch()).isEqualTo(-1);
        assertThat(deleted.results().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(fetch("modern", "clicks").committedOffset()).as("offsets deleted with the group").isEqualTo(-1);
    }

    @Test
    void theConsumerGroupApisAnswerUnsupportedVersionWhileGroupVersionIsZero() throws Exception {
        // Given: group.version disabled as kafka-features disable does it
        fixture.createTopic("views", 1);
        awaitCoordinator("disabled");
        io.cairn.wire.message.UpdateFeaturesResponseData disabled = call(new UpdateFeaturesHandler(
            fixture.metadata().node()), new io.cairn.wire.message.UpdateFeaturesRequestData().setTimeoutMs(30_000)
                .setFeatureUpdates(List.of(new io.cairn.wire.message.UpdateFeaturesRequestData.FeatureUpdateKey()
                    .setFeature("group.version").setMaxVersionLevel((short) 0).setUpgradeType((byte) 2))), 1);
        assertThat(disabled.errorCode()).isEqualTo(Errors.NONE.code());
        await().atMost(Duration.ofSeconds(30)).until(() ->
            fixture.metadata().node().currentImage().featureLevel("group.version") == 0);

        // When
        ConsumerGroupHeartbeatResponseData heartbeat = call(new ConsumerGroupHeartbeatHandler(coordinator,
            fixture.metadata().node()), new ConsumerGroupHeartbeatRequestData().setGroupId("disabled")
                .setMemberId("m").setMemberEpoch(0).setRebalanceTimeoutMs(30_000)
                .setSubscribedTopicNames(List.of("views")).setTopicPartitions(List.of()), 1);
        ConsumerGroupDescribeResponseData described = call(new ConsumerGroupDescribeHandler(coordinator,
            fixture.metadata().node()), new ConsumerGroupDescribeRequestData().setGroupIds(List.of("disabled")), 1);

        // Then
        assertThat(heartbeat.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(described.groups()).singleElement()
            .satisfies(g -> assertThat(g.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code()));
    }
}
