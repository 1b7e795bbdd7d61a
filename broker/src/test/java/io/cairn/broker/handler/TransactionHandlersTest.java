package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.txn.ProducerIdManager;
import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.group.GroupConfig;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.txn.TransactionConfig;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.broker.txn.TransactionMarkerSender;
import io.cairn.log.Time;
import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddOffsetsToTxnRequestData;
import io.cairn.wire.message.AddOffsetsToTxnResponseData;
import io.cairn.wire.message.AddPartitionsToTxnRequestData;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import io.cairn.wire.message.AddPartitionsToTxnResponseData;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeTransactionsRequestData;
import io.cairn.wire.message.DescribeTransactionsResponseData;
import io.cairn.wire.message.EndTxnRequestData;
import io.cairn.wire.message.EndTxnResponseData;
import io.cairn.wire.message.FindCoordinatorRequestData;
import io.cairn.wire.message.FindCoordinatorResponseData;
import io.cairn.wire.message.InitProducerIdRequestData;
import io.cairn.wire.message.InitProducerIdResponseData;
import io.cairn.wire.message.ListTransactionsRequestData;
import io.cairn.wire.message.ListTransactionsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transactional APIs end to end on one broker: a real metadata node, logs and ReplicaManager, a
 * {@link TransactionCoordinator} loading {@code __transaction_state} (created by the first FindCoordinator), and an
 * in-memory marker sender that acknowledges every marker at once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransactionHandlersTest {

    /** One marker request. */
    record Marker(String transactionalId, long producerId, short producerEpoch, boolean commit,
                  int coordinatorEpoch, List<TopicPartition> partitions) {
    }

    @TempDir
    static Path dir;
    private static PartitionsFixture fixture;
    private static PartitionPurgatory purgatory;
    private static TransactionCoordinator coordinator;
    private static final List<Marker> MARKERS = new CopyOnWriteArrayList<>();
    private static final TransactionMarkerSender SENDER = new TransactionMarkerSender() {
        @Override
        public CompletionStage<Void> writeMarkers(String transactionalId, long producerId, short producerEpoch,
                                                  boolean commit, int coordinatorEpoch,
                                                  Collection<TopicPartition> partitions) {
            MARKERS.add(new Marker(transactionalId, producerId, producerEpoch, commit, coordinatorEpoch,
                    new ArrayList<>(partitions)));
            return CompletableFuture.completedFuture(null);
        }
    };
    private static ProducerIdManager producerIds;
    private static GroupCoordinator groups;
    private static List<ApiHandler<?, ?>> handlers;

    @BeforeAll
    static void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        purgatory = new PartitionPurgatory(fixture.replicaManager());
        producerIds = new ProducerIdManager(fixture.metadata().node(), 1, Time.SYSTEM);
        groups = new GroupCoordinator(fixture.replicaManager(), fixture.metadata().node(), GroupConfig.defaults(),
                new CoordinatorRuntimeSettings(1, 0, 5_000L), 1, Time.SYSTEM, purgatory);
        fixture.createTopic("orders", 2);
        startCoordinator();
    }

    private static void startCoordinator() {
        coordinator = new TransactionCoordinator(fixture.replicaManager(), fixture.metadata().node(), purgatory,
                TransactionConfig.defaults(), Time.SYSTEM, SENDER, producerIds::generateProducerId);
        coordinator.start();
        AutoTopicCreation creation = new AutoTopicCreation(true, 1, (short) 1, 1, (short) 1);
        handlers = List.of(new FindCoordinatorHandler(fixture.metadata().node(), groups, coordinator, creation),
                new InitProducerIdHandler(producerIds, coordinator),
                new AddPartitionsToTxnHandler(coordinator, fixture.metadata().node()),
                new AddOffsetsToTxnHandler(coordinator, groups), new EndTxnHandler(coordinator),
                new DescribeTransactionsHandler(coordinator), new ListTransactionsHandler(coordinator));
    }

    @AfterAll
    static void stop() {
        coordinator.close();
        purgatory.close();
        fixture.close();
    }

    @SuppressWarnings("unchecked")
    private static <S extends ApiMessage> S call(ApiKey key, int version, ApiMessage request) throws Exception {
        ApiHandler<ApiMessage, S> handler = (ApiHandler<ApiMessage, S>) handlers.stream()
                .filter(h -> h.apiKey() == key).findFirst().orElseThrow();
        S response = handler.handle(context(key, version), request).toCompletableFuture().get(30, TimeUnit.SECONDS);
        return (S) MetadataFixture.roundTrip(response, key, version, true);
    }

    /** FindCoordinator until the coordinator is known (the first call creates __transaction_state). */
    private static FindCoordinatorResponseData.Coordinator findCoordinator(String id) {
        FindCoordinatorResponseData.Coordinator[] found = new FindCoordinatorResponseData.Coordinator[1];
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            FindCoordinatorResponseData response = call(ApiKey.FIND_COORDINATOR, 4,
                    new FindCoordinatorRequestData().setKeyType((byte) 1).setCoordinatorKeys(List.of(id)));
            found[0] = response.coordinators().get(0);
            assertThat(found[0].errorCode()).isZero();
        });
        return found[0];
    }

    private static InitProducerIdResponseData init(String id) {
        InitProducerIdResponseData[] result = new InitProducerIdResponseData[1];
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            result[0] = call(ApiKey.INIT_PRODUCER_ID, 5, new InitProducerIdRequestData().setTransactionalId(id)
                    .setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short) -1));
            assertThat(Errors.forCode(result[0].errorCode())).isEqualTo(Errors.NONE);
        });
        return result[0];
    }

    private static AddPartitionsToTxnRequestData addV3(String id, InitProducerIdResponseData producer,
                                                       String topic, Integer... partitions) {
        return new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(id)
                .setV3AndBelowProducerId(producer.producerId()).setV3AndBelowProducerEpoch(producer.producerEpoch())
                .setV3AndBelowTopics(List.of(new AddPartitionsToTxnTopic().setName(topic)
                        .setPartitions(List.of(partitions))));
    }

    private static DescribeTransactionsResponseData.TransactionState describe(String id) throws Exception {
        DescribeTransactionsResponseData response = call(ApiKey.DESCRIBE_TRANSACTIONS, 0,
                new DescribeTransactionsRequestData().setTransactionalIds(List.of(id)));
        return response.transactionStates().get(0);
    }

    @Test
    void aTransactionCommitsThroughEveryApi() throws Exception {
        // Given
        assertThat(findCoordinator("txn-commit").nodeId()).isEqualTo(1);
        InitProducerIdResponseData producer = init("txn-commit");
        AddPartitionsToTxnResponseData added = call(ApiKey.ADD_PARTITIONS_TO_TXN, 3,
                addV3("txn-commit", producer, "orders", 0, 1));
        AddOffsetsToTxnResponseData offsets = call(ApiKey.ADD_OFFSETS_TO_TXN, 4, new AddOffsetsToTxnRequestData()
                .setTransactionalId("txn-commit").setProducerId(producer.producerId())
                .setProducerEpoch(producer.producerEpoch()).setGroupId("group"));

        // When
        EndTxnResponseData ended = call(ApiKey.END_TXN, 4, new EndTxnRequestData().setTransactionalId("txn-commit")
                .setProducerId(producer.producerId()).setProducerEpoch(producer.producerEpoch()).setCommitted(true));

        // Then
        assertThat(added.resultsByTopicV3AndBelow()).singleElement().satisfies(topic -> assertThat(
                topic.resultsByPartition()).allSatisfy(p -> assertThat(p.partitionErrorCode()).isZero()));
        assertThat(offsets.errorCode()).isZero();
        assertThat(ended.errorCode()).isZero();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(describe("txn-commit")
                .transactionState()).isEqualTo("CompleteCommit"));
        assertThat(MARKERS).filteredOn(m -> m.transactionalId().equals("txn-commit")).singleElement()
                .satisfies(m -> {
                    assertThat(m.commit()).isTrue();
                    assertThat(m.partitions()).containsExactlyInAnyOrder(new TopicPartition("orders", 0),
                            new TopicPartition("orders", 1), new TopicPartition(GroupCoordinator.TOPIC, 0));
                    assertThat(m.coordinatorEpoch()).isEqualTo(fixture.partition(TransactionCoordinator.TOPIC, 0)
                            .leaderEpoch());
                });
    }

    @Test
    void atTransactionVersion2ABrokerAddsThePartitionAndEndTxnV5AnswersTheBumpedEpoch() throws Exception {
        // Given: a partition leader adds the partition for the producer (AddPartitionsToTxn v5 without verify_only)
        findCoordinator("txn-tv2");
        InitProducerIdResponseData producer = init("txn-tv2");
        AddPartitionsToTxnResponseData added = call(ApiKey.ADD_PARTITIONS_TO_TXN, 5,
                new AddPartitionsToTxnRequestData().setTransactions(List.of(new AddPartitionsToTxnTransaction()
                        .setTransactionalId("txn-tv2").setProducerId(producer.producerId())
                        .setProducerEpoch(producer.producerEpoch()).setVerifyOnly(false)
                        .setTopics(List.of(new AddPartitionsToTxnTopic().setName("orders")
                                .setPartitions(List.of(0)))))));

        // When
        EndTxnResponseData ended = call(ApiKey.END_TXN, 5, new EndTxnRequestData().setTransactionalId("txn-tv2")
                .setProducerId(producer.producerId()).setProducerEpoch(producer.producerEpoch()).setCommitted(true));

        // Then: the next transaction's epoch, which the markers carry
        short bumped = (short) (producer.producerEpoch() + 1);
        assertThat(added.resultsByTransaction()).singleElement().satisfies(t -> assertThat(t.topicResults())
                .singleElement().satisfies(topic -> assertThat(topic.resultsByPartition())
                        .allSatisfy(p -> assertThat(p.partitionErrorCode()).isZero())));
        assertThat(ended.errorCode()).isZero();
        assertThat(ended.producerId()).isEqualTo(producer.producerId());
        assertThat(ended.producerEpoch()).isEqualTo(bumped);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(describe("txn-tv2")
                .transactionState()).isEqualTo("CompleteCommit"));
        assertThat(MARKERS).filteredOn(m -> m.transactionalId().equals("txn-tv2")).singleElement()
                .satisfies(m -> assertThat(m.producerEpoch()).isEqualTo(bumped));
    }

    @Test
    void unknownPartitionsAreRejectedAndTheOthersNotAttempted() throws Exception {
        // Given
        findCoordinator("txn-unknown");
        InitProducerIdResponseData producer = init("txn-unknown");
        AddPartitionsToTxnRequestData request = addV3("txn-unknown", producer, "orders", 0, 7);

        // When
        AddPartitionsToTxnResponseData response = call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, request);

        // Then
        assertThat(response.resultsByTopicV3AndBelow().get(0).resultsByPartition()).satisfiesExactlyInAnyOrder(
                p -> assertThat(p.partitionErrorCode()).isEqualTo(Errors.OPERATION_NOT_ATTEMPTED.code()),
                p -> assertThat(p.partitionErrorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
    }

    @Test
    void verifyOnlyAnswersPerPartitionAtVersion4() throws Exception {
        // Given
        findCoordinator("txn-verify");
        InitProducerIdResponseData producer = init("txn-verify");
        call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, addV3("txn-verify", producer, "orders", 0));
        AddPartitionsToTxnRequestData verify = new AddPartitionsToTxnRequestData().setTransactions(List.of(
                new AddPartitionsToTxnTransaction().setTransactionalId("txn-verify")
                        .setProducerId(producer.producerId()).setProducerEpoch(producer.producerEpoch())
                        .setVerifyOnly(true).setTopics(List.of(new AddPartitionsToTxnTopic().setName("orders")
                                .setPartitions(List.of(0, 1))))));

        // When
        AddPartitionsToTxnResponseData response = call(ApiKey.ADD_PARTITIONS_TO_TXN, 4, verify);

        // Then
        assertThat(response.errorCode()).isZero();
        assertThat(response.resultsByTransaction().get(0).topicResults().get(0).resultsByPartition())
                .satisfiesExactly(p -> assertThat(p.partitionErrorCode()).isZero(),
                        p -> assertThat(p.partitionErrorCode()).isEqualTo(Errors.TRANSACTION_ABORTABLE.code()));
    }

    @Test
    void aStaleEpochIsFencedWithTheErrorItsVersionKnows() throws Exception {
        // Given
        findCoordinator("txn-fenced");
        InitProducerIdResponseData old = init("txn-fenced");
        init("txn-fenced");
        EndTxnRequestData stale = new EndTxnRequestData().setTransactionalId("txn-fenced")
                .setProducerId(old.producerId()).setProducerEpoch(old.producerEpoch()).setCommitted(false);

        // When
        EndTxnResponseData v1 = call(ApiKey.END_TXN, 1, stale);
        EndTxnResponseData v3 = call(ApiKey.END_TXN, 3, stale);

        // Then
        assertThat(v1.errorCode()).isEqualTo(Errors.INVALID_PRODUCER_EPOCH.code());
        assertThat(v3.errorCode()).isEqualTo(Errors.PRODUCER_FENCED.code());
    }

    @Test
    void initProducerIdWithAProducerIdAndEpochRecoversOrIsFencedPerVersion() throws Exception {
        // Given
        findCoordinator("txn-kip360");
        InitProducerIdResponseData first = init("txn-kip360");
        InitProducerIdRequestData recover = new InitProducerIdRequestData().setTransactionalId("txn-kip360")
                .setTransactionTimeoutMs(60_000).setProducerId(first.producerId())
                .setProducerEpoch(first.producerEpoch());
        InitProducerIdRequestData stale = new InitProducerIdRequestData().setTransactionalId("txn-kip360")
                .setTransactionTimeoutMs(60_000).setProducerId(first.producerId()).setProducerEpoch((short) 40);

        // When
        InitProducerIdResponseData recovered = call(ApiKey.INIT_PRODUCER_ID, 4, recover);
        InitProducerIdResponseData fencedV3 = call(ApiKey.INIT_PRODUCER_ID, 3, stale);
        InitProducerIdResponseData fencedV4 = call(ApiKey.INIT_PRODUCER_ID, 4, stale);
        InitProducerIdResponseData tooLong = call(ApiKey.INIT_PRODUCER_ID, 4, new InitProducerIdRequestData()
                .setTransactionalId("txn-kip360").setTransactionTimeoutMs(900_001).setProducerId(-1)
                .setProducerEpoch((short) -1));

        // Then
        assertThat(recovered.errorCode()).isZero();
        assertThat(recovered.producerId()).isEqualTo(first.producerId());
        assertThat(recovered.producerEpoch()).isEqualTo((short) (first.producerEpoch() + 1));
        assertThat(fencedV3.errorCode()).isEqualTo(Errors.INVALID_PRODUCER_EPOCH.code());
        assertThat(fencedV4.errorCode()).isEqualTo(Errors.PRODUCER_FENCED.code());
        assertThat(tooLong.errorCode()).isEqualTo(Errors.INVALID_TRANSACTION_TIMEOUT.code());
    }

    @SuppressWarnings("unchecked")
    private static <S extends ApiMessage> S callAs(RequestContext ctx, ApiMessage request) throws Exception {
        ApiHandler<ApiMessage, S> handler = (ApiHandler<ApiMessage, S>) handlers.stream()
                .filter(h -> h.apiKey() == ctx.apiKey()).findFirst().orElseThrow();
        S response = handler.handle(ctx, request).toCompletableFuture().get(30, TimeUnit.SECONDS);
        return (S) MetadataFixture.roundTrip(response, ctx.apiKey(), ctx.apiVersion(), true);
    }

    @Test
    void withAnAuthorizerTransactionApisAnswerOnlyForTheTransactionalIdsAndTopicsTheCallerMay() throws Exception {
        // Given: an ongoing transaction on orders; alice may write transactional id txn-alice and describe only it
        findCoordinator("txn-alice");
        InitProducerIdResponseData producer = init("txn-alice");
        call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, addV3("txn-alice", producer, "orders", 1));
        AclEntry writeId = MetadataFixture.allow(AclResourceType.TRANSACTIONAL_ID, "txn-alice",
                AclPatternType.LITERAL, "User:alice", AclOperation.WRITE);

        // When
        AddPartitionsToTxnResponseData otherId = callAs(MetadataFixture.securedContext(ApiKey.ADD_PARTITIONS_TO_TXN,
                3, "alice", writeId), addV3("txn-list", producer, "orders", 1));
        AddPartitionsToTxnResponseData unwritableTopic = callAs(MetadataFixture.securedContext(
                ApiKey.ADD_PARTITIONS_TO_TXN, 3, "alice", writeId), addV3("txn-alice", producer, "orders", 1));
        DescribeTransactionsResponseData described = callAs(MetadataFixture.securedContext(
                ApiKey.DESCRIBE_TRANSACTIONS, 0, "alice", writeId), new DescribeTransactionsRequestData()
                .setTransactionalIds(List.of("txn-alice", "txn-list")));
        ListTransactionsResponseData listed = callAs(MetadataFixture.securedContext(ApiKey.LIST_TRANSACTIONS, 2,
                "alice", writeId), new ListTransactionsRequestData());
        EndTxnResponseData ended = callAs(MetadataFixture.securedContext(ApiKey.END_TXN, 3, "bob"),
                new EndTxnRequestData().setTransactionalId("txn-alice").setProducerId(producer.producerId())
                        .setProducerEpoch(producer.producerEpoch()).setCommitted(false));

        // Then
        assertThat(otherId.resultsByTopicV3AndBelow().get(0).resultsByPartition().get(0).partitionErrorCode())
                .isEqualTo(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code());
        assertThat(unwritableTopic.resultsByTopicV3AndBelow().get(0).resultsByPartition().get(0)
                .partitionErrorCode()).isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED.code());
        assertThat(described.transactionStates()).extracting(t -> t.transactionalId() + ":"
                + Errors.forCode(t.errorCode()) + ":" + t.topics().size())
                .containsExactly("txn-alice:NONE:0", "txn-list:TRANSACTIONAL_ID_AUTHORIZATION_FAILED:0");
        assertThat(listed.transactionStates()).extracting(t -> t.transactionalId()).containsExactly("txn-alice");
        assertThat(ended.errorCode()).isEqualTo(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code());
    }

    @Test
    void listTransactionsFiltersAndReportsUnknownStates() throws Exception {
        // Given
        findCoordinator("txn-list");
        InitProducerIdResponseData producer = init("txn-list");
        call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, addV3("txn-list", producer, "orders", 1));

        // When
        ListTransactionsResponseData response = call(ApiKey.LIST_TRANSACTIONS, 2, new ListTransactionsRequestData()
                .setStateFilters(List.of("Ongoing", "Bogus")).setTransactionalIdPattern("txn-l.*"));
        ListTransactionsResponseData onlyUnknown = call(ApiKey.LIST_TRANSACTIONS, 2,
                new ListTransactionsRequestData().setStateFilters(List.of("Bogus")).setTransactionalIdPattern("txn-list"));
        ListTransactionsResponseData badPattern = call(ApiKey.LIST_TRANSACTIONS, 2,
                new ListTransactionsRequestData().setTransactionalIdPattern("(["));

        // Then
        assertThat(response.errorCode()).isZero();
        assertThat(response.unknownStateFilters()).containsExactly("Bogus");
        assertThat(response.transactionStates()).singleElement().satisfies(s -> {
            assertThat(s.transactionalId()).isEqualTo("txn-list");
            assertThat(s.transactionState()).isEqualTo("Ongoing");
        });
        assertThat(onlyUnknown.transactionStates()).singleElement()
                .satisfies(s -> assertThat(s.transactionalId()).isEqualTo("txn-list"));
        assertThat(badPattern.errorCode()).isEqualTo(Errors.INVALID_REGULAR_EXPRESSION.code());
    }

    @Test
    void aNewCoordinatorLoadsTheStateWrittenByTheLastOne() throws Exception {
        // Given
        findCoordinator("txn-reload");
        InitProducerIdResponseData producer = init("txn-reload");
        call(ApiKey.ADD_PARTITIONS_TO_TXN, 3, addV3("txn-reload", producer, "orders", 0));

        // When
        coordinator.close();
        startCoordinator();

        // Then
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            DescribeTransactionsResponseData.TransactionState state = describe("txn-reload");
            assertThat(state.errorCode()).isZero();
            assertThat(state.transactionState()).isEqualTo("Ongoing");
            assertThat(state.producerId()).isEqualTo(producer.producerId());
        });
    }
}
