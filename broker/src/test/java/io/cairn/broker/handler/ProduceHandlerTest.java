package io.cairn.broker.handler;

import io.micrometer.core.instrument.Clock;
import io.cairn.broker.produce.ProduceService;
import io.cairn.broker.produce.ProduceVerification;
import io.cairn.broker.metrics.BrokerTopicMetrics;
import io.cairn.broker.metrics.BrokerMetrics;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.broker.txn.verification.VerificationTransport;
import io.cairn.isr.client.SourceBroker;
import io.cairn.wire.message.AddPartitionsToTxnRequestData;
import io.cairn.wire.message.AddPartitionsToTxnResponseData;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogManager;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopic;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopicConfig;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.ProduceRequestData.PartitionProduceData;
import io.cairn.wire.message.ProduceRequestData.TopicProduceData;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceResponseData.BatchIndexAndErrorMessage;
import io.cairn.wire.message.ProduceResponseData.PartitionProduceResponse;
import io.cairn.wire.message.ProduceResponseData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Produce against a real metadata node and a real {@link ReplicaManager} over logs in a temporary directory. */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProduceHandlerTest {

    private static final BrokerTopicMetrics TOPIC_METRICS = BrokerMetrics.withClock(Clock.SYSTEM).topics();

    @TempDir
    static Path dir;
    private static PartitionsFixture partitions;
    private static MetadataFixture fixture;
    private static LogManager logs;
    private static ReplicaManager replicas;
    private static ProduceHandler handler;
    private static PartitionPurgatory purgatory;
    private static TransactionVerifier verifier;
    private static ExecutorService continuations;
    /** The AddPartitionsToTxn requests the fake coordinator received. */
    private static final Queue<AddPartitionsToTxnRequestData> VERIFICATIONS = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void start() throws Exception {
        partitions = PartitionsFixture.start(dir);
        fixture = partitions.metadata();
        logs = partitions.logs();
        replicas = partitions.replicaManager();
        purgatory = new PartitionPurgatory(replicas);
        verifier = new TransactionVerifier(fixture.node()::currentImage, MetadataFixture.LISTENER,
                new FakeCoordinator());
        verifier.start();
        continuations = Executors.newSingleThreadExecutor();
        handler = new ProduceHandler(new ProduceService(replicas, fixture.node(), purgatory, TOPIC_METRICS, verifier, continuations));
    }

    /**
     * A transaction coordinator answering every partition by its transactional id: "verified" is in its transaction,
     * "tx" finds the coordinator not available, "busy" still completing its last transaction
     * (CONCURRENT_TRANSACTIONS), any other is not in a transaction (INVALID_TXN_STATE).
     */
    private static final class FakeCoordinator implements VerificationTransport {
        @Override
        public AddPartitionsToTxnResponseData send(SourceBroker coordinator, AddPartitionsToTxnRequestData request) {
            VERIFICATIONS.add(request);
            AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData();
            for (AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction txn : request.transactions()) {
                Errors error = "verified".equals(txn.transactionalId()) ? Errors.NONE
                        : "tx".equals(txn.transactionalId()) ? Errors.COORDINATOR_NOT_AVAILABLE
                        : "busy".equals(txn.transactionalId()) ? Errors.CONCURRENT_TRANSACTIONS
                        : Errors.INVALID_TXN_STATE;
                AddPartitionsToTxnResult result = new AddPartitionsToTxnResult()
                        .setTransactionalId(txn.transactionalId());
                txn.topics().forEach(t -> {
                    AddPartitionsToTxnTopicResult topic = new AddPartitionsToTxnTopicResult().setName(t.name());
                    t.partitions().forEach(p -> topic.resultsByPartition().add(
                            new AddPartitionsToTxnPartitionResult().setPartitionIndex(p)
                                    .setPartitionErrorCode(error.code())));
                    result.topicResults().add(topic);
                });
                response.resultsByTransaction().add(result);
            }
            return response;
        }

        @Override
        public void close() {
        }
    }

    @AfterAll
    static void stop() {
        verifier.close();
        continuations.shutdown();
        purgatory.close();
        partitions.close();
    }

    private static Uuid createTopic(String name, int partitions, Map<String, String> configs) throws Exception {
        CreatableTopic topic = new CreatableTopic().setName(name).setNumPartitions(partitions)
                .setReplicationFactor((short) 1);
        configs.forEach((k, v) -> topic.configs().add(new CreatableTopicConfig().setName(k).setValue(v)));
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(topic);
        CreateTopicsResponseData response = fixture.node().createTopics(request).get(30, TimeUnit.SECONDS);
        assertThat(response.topics().get(0).errorCode()).as("%s", response).isZero();
        // Only the replica manager's applier hosts partitions: produce once it has applied the topic.
        Uuid topicId = response.topics().get(0).topicId();
        await().atMost(Duration.ofSeconds(10)).until(() -> IntStream.range(0, partitions)
                .allMatch(i -> replicas.partition(new TopicPartition(name, i))
                        .filter(p -> p.topicId().equals(topicId)).isPresent()));
        return topicId;
    }

    private static ByteBuf batch(int records) {
        return batch(CompressionType.NONE, records, -1L, (short) -1, -1);
    }

    private static ByteBuf batch(CompressionType compression, int records, long producerId, short epoch,
                                 int sequence) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, compression)
                .producer(producerId, epoch, sequence);
        long now = System.currentTimeMillis();
        for (int i = 0; i < records; i++) {
            builder.append(now, ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        return builder.build();
    }

    private static ProduceRequestData request(short acks, String topic, int partition, ByteBuf records) {
        ProduceRequestData request = new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000);
        return add(request, topic, partition, records);
    }

    private static ProduceRequestData add(ProduceRequestData request, String topic, int partition, ByteBuf records) {
        TopicProduceData data = request.topicData().stream().filter(t -> topic.equals(t.name())).findFirst()
                .orElseGet(() -> {
                    TopicProduceData created = new TopicProduceData().setName(topic);
                    request.topicData().add(created);
                    return created;
                });
        data.partitionData().add(new PartitionProduceData().setIndex(partition).setRecords(records));
        return request;
    }

    private static ProduceResponseData produce(int version, ProduceRequestData request) throws Exception {
        return produce(version, request, "test");
    }

    private static ProduceResponseData produce(int version, ProduceRequestData request, String clientId)
            throws Exception {
        TwoPhaseApiHandler.Stages<ProduceResponseData> stages = handler.dispatch(context(version, clientId),
                request);
        stages.dispatched().toCompletableFuture().get(10, TimeUnit.SECONDS);
        ProduceResponseData response = stages.response().toCompletableFuture().get(10, TimeUnit.SECONDS);
        return (ProduceResponseData) MetadataFixture.roundTrip(response, ApiKey.PRODUCE, version, true);
    }

    private static RequestContext context(int version, String clientId) {
        RequestContext base = MetadataFixture.context(ApiKey.PRODUCE, version);
        return new RequestContext(new RequestHeaderData().setRequestApiKey(ApiKey.PRODUCE.id())
                .setRequestApiVersion((short) version).setCorrelationId(1).setClientId(clientId), ApiKey.PRODUCE,
                base.connection());
    }

    private static PartitionProduceResponse only(ProduceResponseData response) {
        assertThat(response.responses()).hasSize(1);
        assertThat(response.responses().get(0).partitionResponses()).hasSize(1);
        return response.responses().get(0).partitionResponses().get(0);
    }

    private static Partition partition(String topic, int index) {
        return replicas.partition(new TopicPartition(topic, index)).orElseThrow();
    }

    /** The batches of the partition's log, read back from its segment files. */
    private static List<RecordBatch> logBatches(String topic, int index) {
        Partition partition = partition(topic, index);
        FetchDataInfo info = partition.log().read(partition.logStartOffset(), Integer.MAX_VALUE, Long.MAX_VALUE,
                true);
        try {
            ByteBuffer bytes = info.records().readBytes();
            ByteBuf buf = Unpooled.wrappedBuffer(bytes);
            List<RecordBatch> batches = new ArrayList<>();
            int at = 0;
            while (at < bytes.remaining()) {
                int size = buf.getInt(at + RecordBatch.LENGTH_OFFSET) + RecordBatch.LOG_OVERHEAD;
                batches.add(RecordBatch.wrap(buf.slice(at, size)));
                at += size;
            }
            return batches;
        } finally {
            info.close();
        }
    }

    @Test
    void acksOneAppendsEveryPartitionAndAnswersItsBaseOffset() throws Exception {
        // Given
        createTopic("acks-one", 2, Map.of());
        ByteBuf first = batch(3);
        ByteBuf second = batch(2);
        ByteBuf third = batch(1);

        // When
        ProduceResponseData response = produce(9, add(add(request((short) 1, "acks-one", 0, first), "acks-one", 1,
                second), "acks-one", 0, Unpooled.EMPTY_BUFFER.retainedDuplicate()));
        ProduceResponseData next = produce(9, request((short) 1, "acks-one", 0, third));

        // Then
        assertThat(first.refCnt()).isZero();
        assertThat(second.refCnt()).isZero();
        assertThat(third.refCnt()).isZero();
        assertThat(response.responses()).singleElement().satisfies(topic -> {
            assertThat(topic.name()).isEqualTo("acks-one");
            assertThat(topic.partitionResponses()).extracting(PartitionProduceResponse::index,
                    PartitionProduceResponse::errorCode).containsExactly(
                    tuple(0, Errors.INVALID_RECORD.code()),
                    tuple(1, Errors.NONE.code()));
        });
        assertThat(only(next).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(only(next).baseOffset()).isZero();
        assertThat(only(next).logAppendTimeMs()).isEqualTo(-1L);
        assertThat(only(next).logStartOffset()).isZero();
        assertThat(partition("acks-one", 1).logEndOffset()).isEqualTo(2);
        assertThat(partition("acks-one", 0).logEndOffset()).isEqualTo(1);
    }

    @Test
    void batchesGetConsecutiveOffsetsAndTheLeaderEpochInTheLog() throws Exception {
        // Given
        createTopic("offsets", 1, Map.of());

        // When
        ProduceResponseData a = produce(11, request((short) 1, "offsets", 0, batch(3)));
        ProduceResponseData b = produce(11, request((short) -1, "offsets", 0, batch(CompressionType.GZIP, 4, -1L,
                (short) -1, -1)));

        // Then
        assertThat(only(a).baseOffset()).isZero();
        assertThat(only(b).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(only(b).baseOffset()).isEqualTo(3);
        assertThat(partition("offsets", 0).highWatermark()).isEqualTo(7);
        assertThat(logBatches("offsets", 0)).extracting(RecordBatch::baseOffset, RecordBatch::lastOffset)
                .containsExactly(tuple(0L, 2L),
                        tuple(3L, 6L));
        assertThat(logBatches("offsets", 0)).allSatisfy(batch -> {
            assertThat(batch.partitionLeaderEpoch()).isEqualTo(partition("offsets", 0).leaderEpoch());
            assertThat(batch.isValid()).isTrue();
        });
    }

    @ParameterizedTest(name = "v{0}")
    @ValueSource(shorts = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
    void everyVersionAppendsAndAnswers(short version) throws Exception {
        // Given
        String topic = "versions-" + version;
        Uuid id = createTopic(topic, 1, Map.of());
        ProduceRequestData request = request((short) -1, topic, 0, batch(2));
        if (version >= 13) {
            request.topicData().get(0).setName("").setTopicId(id);
        }

        // When
        ProduceResponseData response = produce(version, request);

        // Then
        assertThat(response.responses()).singleElement().satisfies(t -> {
            if (version >= 13) {
                assertThat(t.topicId()).isEqualTo(id);
            } else {
                assertThat(t.name()).isEqualTo(topic);
            }
        });
        PartitionProduceResponse partition = only(response);
        assertThat(partition.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(partition.baseOffset()).isZero();
        assertThat(partition.logStartOffset()).isEqualTo(version >= 5 ? 0L : -1L);
        assertThat(partition(topic, 0).logEndOffset()).isEqualTo(2);
    }

    @Test
    void unknownTopicsPartitionsAndTopicIdsFailOnlyTheirPartition() throws Exception {
        // Given
        createTopic("known", 1, Map.of());
        ByteBuf unknownTopic = batch(1);
        ByteBuf unknownPartition = batch(1);
        ByteBuf unknownId = batch(1);
        ProduceRequestData request = add(add(request((short) 1, "no-such-topic", 0, unknownTopic), "known", 7,
                unknownPartition), "known", 0, batch(1));
        ProduceRequestData byId = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(1000);
        byId.topicData().add(new TopicProduceData().setTopicId(new Uuid(1, 2)).setPartitionData(new ArrayList<>(
                List.of(new PartitionProduceData().setIndex(0).setRecords(unknownId)))));

        // When
        ProduceResponseData response = produce(12, request);
        ProduceResponseData responseById = produce(13, byId);

        // Then
        assertThat(response.responses()).hasSize(2);
        assertThat(response.responses().get(0).partitionResponses()).singleElement().satisfies(p -> {
            assertThat(p.errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            assertThat(p.baseOffset()).isEqualTo(-1L);
            assertThat(p.logStartOffset()).isEqualTo(-1L);
        });
        assertThat(response.responses().get(1).partitionResponses()).extracting(PartitionProduceResponse::errorCode)
                .containsExactly(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), Errors.NONE.code());
        assertThat(only(responseById).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
        assertThat(responseById.responses().get(0).topicId()).isEqualTo(new Uuid(1, 2));
        assertThat(List.of(unknownTopic, unknownPartition, unknownId)).allSatisfy(b -> assertThat(b.refCnt())
                .isZero());
    }

    @Test
    void anInvalidAcksValueFailsEveryKnownPartitionWithInvalidRequiredAcks() throws Exception {
        // Given
        createTopic("bad-acks", 1, Map.of());

        // When
        ProduceResponseData response = produce(9, add(request((short) 2, "bad-acks", 0, batch(1)), "nope", 0,
                batch(1)));

        // Then
        assertThat(response.responses().get(0).partitionResponses().get(0).errorCode())
                .isEqualTo(Errors.INVALID_REQUIRED_ACKS.code());
        assertThat(response.responses().get(1).partitionResponses().get(0).errorCode())
                .isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(partition("bad-acks", 0).logEndOffset()).isZero();
    }

    @Test
    void aCorruptCrcIsCorruptMessageAndNothingIsAppended() throws Exception {
        // Given
        createTopic("corrupt", 1, Map.of());
        ByteBuf records = batch(2);
        records.setByte(records.writerIndex() - 1, records.getByte(records.writerIndex() - 1) ^ 0x55);

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "corrupt", 0, records)));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE.code());
        assertThat(response.baseOffset()).isEqualTo(-1L);
        assertThat(response.logStartOffset()).isEqualTo(-1L);
        assertThat(response.errorMessage()).isNull();
        assertThat(partition("corrupt", 0).logEndOffset()).isZero();
    }

    @Test
    void aWrongRecordCountIsInvalidRecordWithoutRecordErrors() throws Exception {
        // Given
        createTopic("count", 1, Map.of());
        ByteBuf records = batch(3);
        records.setInt(RecordBatch.RECORDS_COUNT_OFFSET, 2);
        records.setInt(RecordBatch.CRC_OFFSET, (int) RecordBatch.wrap(records).computeChecksum());

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "count", 0, records)));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_RECORD.code());
        assertThat(response.recordErrors()).isEmpty();
        assertThat(response.errorMessage()).isNull();
        assertThat(response.logStartOffset()).isZero();
        assertThat(partition("count", 0).logEndOffset()).isZero();
    }

    @Test
    void aBatchOverMaxMessageBytesIsMessageTooLarge() throws Exception {
        // Given
        createTopic("small", 1, Map.of("max.message.bytes", "200"));
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        builder.append(System.currentTimeMillis(), new byte[] {1}, new byte[500]);

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "small", 0, builder.build())));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.MESSAGE_TOO_LARGE.code());
        assertThat(response.logStartOffset()).isEqualTo(-1L);
    }

    @Test
    void keylessRecordsOnACompactedTopicAreNamedInRecordErrors() throws Exception {
        // Given
        createTopic("compacted", 1, Map.of("cleanup.policy", "compact"));
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.LZ4);
        long now = System.currentTimeMillis();
        builder.append(now, new byte[] {1}, new byte[] {1});
        builder.append(now, null, new byte[] {2});
        builder.append(now, new byte[] {3}, new byte[] {3});
        builder.append(now, null, new byte[] {4});

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "compacted", 0, builder.build())));

        // Then
        String message = "Compacted topic cannot accept message without key in topic partition compacted-0";
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_RECORD.code());
        assertThat(response.recordErrors()).extracting(BatchIndexAndErrorMessage::batchIndex,
                BatchIndexAndErrorMessage::batchIndexErrorMessage).containsExactly(
                tuple(1, message), tuple(3, message));
        assertThat(response.errorMessage()).isEqualTo("One or more records have been rejected due to 2 record errors"
                + " in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='"
                + message + "'), RecordError(batchIndex=3, message='" + message + "')]");
        assertThat(response.logStartOffset()).isZero();
        assertThat(partition("compacted", 0).logEndOffset()).isZero();
    }

    @Test
    void aTimestampTooFarAheadIsInvalidTimestampWithRecordErrors() throws Exception {
        // Given
        createTopic("future", 1, Map.of("message.timestamp.after.max.ms", "60000"));
        long future = System.currentTimeMillis() + 3_600_000L;
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        builder.append(System.currentTimeMillis(), new byte[] {1}, new byte[] {1});
        builder.append(future, new byte[] {2}, new byte[] {2});

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "future", 0, builder.build())));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_TIMESTAMP.code());
        assertThat(response.errorMessage()).isEqualTo("One or more records have been rejected due to invalid timestamp");
        assertThat(response.recordErrors()).singleElement().satisfies(e -> {
            assertThat(e.batchIndex()).isEqualTo(1);
            assertThat(e.batchIndexErrorMessage()).startsWith("Timestamp " + future + " of message with offset 1 is "
                    + "out of range. The timestamp should be within [");
        });
    }

    @Test
    void anExactRetryOfAnIdempotentBatchIsAnsweredWithTheOriginalOffset() throws Exception {
        // Given
        createTopic("idempotent", 1, Map.of());
        produce(9, request((short) -1, "idempotent", 0, batch(2)));
        produce(9, request((short) -1, "idempotent", 0, batch(CompressionType.NONE, 3, 42L, (short) 0, 0)));
        ByteBuf retry = batch(CompressionType.NONE, 3, 42L, (short) 0, 0);
        long retryTimestamp = RecordBatch.wrap(retry).maxTimestamp();

        // When
        PartitionProduceResponse response = only(produce(9, request((short) -1, "idempotent", 0, retry)));
        PartitionProduceResponse next = only(produce(9, request((short) -1, "idempotent", 0,
                batch(CompressionType.NONE, 1, 42L, (short) 0, 3))));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.baseOffset()).isEqualTo(2);
        assertThat(response.logAppendTimeMs()).isLessThanOrEqualTo(retryTimestamp).isPositive();
        assertThat(next.baseOffset()).isEqualTo(5);
        assertThat(partition("idempotent", 0).logEndOffset()).isEqualTo(6);
    }

    @Test
    void aSequenceGapAndAnOldEpochAreRefused() throws Exception {
        // Given
        createTopic("sequences", 1, Map.of());
        produce(9, request((short) 1, "sequences", 0, batch(CompressionType.NONE, 2, 7L, (short) 3, 0)));

        // When
        PartitionProduceResponse gap = only(produce(9, request((short) 1, "sequences", 0,
                batch(CompressionType.NONE, 1, 7L, (short) 3, 5))));
        PartitionProduceResponse fenced = only(produce(9, request((short) 1, "sequences", 0,
                batch(CompressionType.NONE, 1, 7L, (short) 2, 0))));
        PartitionProduceResponse noSequence = only(produce(9, request((short) 1, "sequences", 0,
                batch(CompressionType.NONE, 1, 8L, (short) 0, -1))));

        // Then
        assertThat(gap.errorCode()).isEqualTo(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER.code());
        assertThat(gap.logStartOffset()).isZero();
        assertThat(fenced.errorCode()).isEqualTo(Errors.INVALID_PRODUCER_EPOCH.code());
        assertThat(noSequence.errorCode()).isEqualTo(Errors.INVALID_RECORD.code());
        assertThat(partition("sequences", 0).logEndOffset()).isEqualTo(2);
    }

    @Test
    void aTransactionalBatchNeedsATransactionalIdAndACoordinator() throws Exception {
        // Given
        createTopic("txn", 1, Map.of());
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE)
                .producer(9L, (short) 0, 0).transactional(true).append(1L, new byte[] {1}, new byte[] {1});
        ByteBuf plain = batch(1);
        ByteBuf transactional = builder.build();
        ByteBuf again = transactional.copy();

        // When
        ProduceResponseData noId = produce(11, add(request((short) 1, "txn", 0, transactional), "other", 0,
                plain));
        PartitionProduceResponse withId = only(produce(11, request((short) 1, "txn", 0, again)
                .setTransactionalId("tx")));

        // Then
        assertThat(noId.responses()).flatMap(ProduceResponseData.TopicProduceResponse::partitionResponses)
                .allSatisfy(p -> {
                    assertThat(p.errorCode()).isEqualTo(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code());
                    assertThat(p.errorMessage()).isEqualTo(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.message());
                });
        assertThat(withId.errorCode()).isEqualTo(Errors.NOT_ENOUGH_REPLICAS.code());
        assertThat(withId.errorMessage()).isEqualTo("Unable to verify the partition has been added to the "
                + "transaction. Underlying error: COORDINATOR_NOT_AVAILABLE");
        assertThat(partition("txn", 0).logEndOffset()).isZero();
        assertThat(List.of(plain, transactional, again)).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    /** Creates {@code __transaction_state} (one partition, led here) unless another test did. */
    private static synchronized void transactionStateTopic() throws Exception {
        if (fixture.node().currentImage().topic("__transaction_state").isEmpty()) {
            createTopic("__transaction_state", 1, Map.of());
        }
    }

    private static ByteBuf transactional(long producerId, int sequence) {
        return new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE)
                .producer(producerId, (short) 0, sequence).transactional(true)
                .append(1L, new byte[] {1}, new byte[] {1}).build();
    }

    @Test
    void aVerifiedTransactionalBatchIsAppendedAndTheRestOfItsTransactionNeedsNoVerification() throws Exception {
        // Given
        transactionStateTopic();
        createTopic("verified", 1, Map.of());
        VERIFICATIONS.clear();

        // When
        PartitionProduceResponse first = only(produce(11, request((short) -1, "verified", 0, transactional(21L, 0))
                .setTransactionalId("verified")));
        PartitionProduceResponse second = only(produce(11, request((short) -1, "verified", 0,
                transactional(21L, 1)).setTransactionalId("verified")));

        // Then
        assertThat(first.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(second.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(second.baseOffset()).isEqualTo(1);
        assertThat(VERIFICATIONS).singleElement().satisfies(r -> assertThat(r.transactions()).singleElement()
                .satisfies(t -> {
                    assertThat(t.verifyOnly()).isTrue();
                    assertThat(t.producerId()).isEqualTo(21L);
                    assertThat(t.topics()).extracting(AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic::name)
                            .containsExactly("verified");
                }));
        assertThat(partition("verified", 0).log().firstUnstableOffset()).isZero();
    }

    @Test
    void produceV12HasTheLeaderAddThePartitionToTheTransaction() throws Exception {
        // Given: a transaction.version 2 producer, which sends no AddPartitionsToTxn
        transactionStateTopic();
        createTopic("added", 1, Map.of());
        VERIFICATIONS.clear();

        // When
        PartitionProduceResponse response = only(produce(12, request((short) -1, "added", 0,
                transactional(23L, 0)).setTransactionalId("verified")));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(VERIFICATIONS).singleElement().satisfies(r -> assertThat(r.transactions()).singleElement()
                .satisfies(t -> assertThat(t.verifyOnly()).isFalse()));
        assertThat(partition("added", 0).log().firstUnstableOffset()).isZero();
    }

    @Test
    void anAddThatMeetsConcurrentTransactionsIsRetriedThenAnsweredAsSuch() throws Exception {
        // Given: the producer's previous transaction still writes its markers
        transactionStateTopic();
        createTopic("busy", 1, Map.of());
        VERIFICATIONS.clear();

        // When
        PartitionProduceResponse response = only(produce(12, request((short) -1, "busy", 0, transactional(24L, 0))
                .setTransactionalId("busy")));

        // Then: Kafka 4.1's five retries, then CONCURRENT_TRANSACTIONS for the producer to retry
        assertThat(response.errorCode()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS.code());
        assertThat(VERIFICATIONS).hasSize(1 + ProduceVerification.ADD_RETRIES);
        assertThat(partition("busy", 0).logEndOffset()).isZero();
    }

    @Test
    void aPartitionOutsideTheProducersTransactionIsInvalidTxnStateAndNotAppended() throws Exception {
        // Given
        transactionStateTopic();
        createTopic("outside", 1, Map.of());

        // When
        PartitionProduceResponse response = only(produce(11, request((short) 1, "outside", 0, transactional(22L, 0))
                .setTransactionalId("stranger")));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_TXN_STATE.code());
        assertThat(response.errorMessage()).isEqualTo("Partition was not added to the transaction");
        assertThat(response.logStartOffset()).isEqualTo(-1L);
        assertThat(partition("outside", 0).logEndOffset()).isZero();
    }

    @Test
    void twoBatchesInOnePartitionAreInvalidRecordAndZstdNeedsV7() throws Exception {
        // Given
        createTopic("shape", 1, Map.of());
        ByteBuf two = Unpooled.wrappedBuffer(batch(1), batch(1));

        // When
        PartitionProduceResponse twoBatches = only(produce(9, request((short) 1, "shape", 0, two)));
        PartitionProduceResponse zstdV6 = only(produce(6, request((short) 1, "shape", 0,
                batch(CompressionType.ZSTD, 2, -1L, (short) -1, -1))));
        PartitionProduceResponse zstdV7 = only(produce(7, request((short) 1, "shape", 0,
                batch(CompressionType.ZSTD, 2, -1L, (short) -1, -1))));

        // Then
        assertThat(twoBatches.errorCode()).isEqualTo(Errors.INVALID_RECORD.code());
        assertThat(zstdV6.errorCode()).isEqualTo(Errors.UNSUPPORTED_COMPRESSION_TYPE.code());
        assertThat(zstdV7.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(two.refCnt()).isZero();
    }

    @Test
    void aBatchSizeBelowKafkasMinimumFailsTheWholeRequestAsKafkasIteratorDoes() throws Exception {
        // Given
        createTopic("tiny-size", 1, Map.of());
        ByteBuf good = batch(1);
        ByteBuf tiny = Unpooled.buffer(20).writeLong(0).writeInt(5).writeZero(8);
        ProduceRequestData request = add(request((short) 1, "tiny-size", 0, good), "other-topic", 0, tiny);

        // When
        ProduceResponseData response = produce(9, request);

        // Then
        assertThat(response.responses()).flatMap(ProduceResponseData.TopicProduceResponse::partitionResponses)
                .allSatisfy(p -> {
                    assertThat(p.errorCode()).isEqualTo(Errors.CORRUPT_MESSAGE.code());
                    assertThat(p.errorMessage()).isEqualTo("Record size 5 is less than the minimum record overhead "
                            + "(14)");
                });
        assertThat(partition("tiny-size", 0).logEndOffset()).isZero();
        assertThat(List.of(good, tiny)).allSatisfy(b -> assertThat(b.refCnt()).isZero());
    }

    @Test
    void nullRecordsAreInvalidRecord() throws Exception {
        // Given
        createTopic("null-records", 1, Map.of());

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "null-records", 0, null)));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_RECORD.code());
    }

    @Test
    void trailingBytesAfterTheBatchAreDroppedAsKafkaDoes() throws Exception {
        // Given
        createTopic("trailing", 1, Map.of());
        ByteBuf records = Unpooled.wrappedBuffer(batch(2), Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 0, 0}));

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "trailing", 0, records)));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(partition("trailing", 0).logEndOffset()).isEqualTo(2);
    }

    @Test
    void internalTopicsAreOnlyForTheAdminClient() throws Exception {
        // Given
        createTopic("__consumer_offsets", 1, Map.of("cleanup.policy", "compact"));

        // When
        PartitionProduceResponse user = only(produce(9, request((short) 1, "__consumer_offsets", 0, batch(1))));
        PartitionProduceResponse admin = only(produce(9, request((short) 1, "__consumer_offsets", 0, batch(1)),
                "__admin_client"));

        // Then
        assertThat(user.errorCode()).isEqualTo(Errors.INVALID_TOPIC_EXCEPTION.code());
        assertThat(admin.errorCode()).isEqualTo(Errors.NONE.code());
    }

    @Test
    void acksZeroFailsTheResponseStageSoTheConnectionCloses() throws Exception {
        // Given
        createTopic("acks-zero", 1, Map.of());
        ProduceRequestData good = request((short) 0, "acks-zero", 0, batch(1));
        ProduceRequestData bad = request((short) 0, "unknown-acks-zero", 0, batch(1));

        // When
        TwoPhaseApiHandler.Stages<ProduceResponseData> ok = handler.dispatch(context(9, "test"), good);
        TwoPhaseApiHandler.Stages<ProduceResponseData> failed = handler.dispatch(context(9, "test"), bad);

        // Then
        assertThat(handler.expectsResponse(good)).isFalse();
        assertThat(ok.response().toCompletableFuture().get(10, TimeUnit.SECONDS)).isNotNull();
        CompletableFuture<ProduceResponseData> failure = failed.response().toCompletableFuture();
        assertThatThrownBy(() -> failure.get(10, TimeUnit.SECONDS)).hasMessageContaining("UNKNOWN_TOPIC_OR_PARTITION");
        assertThat(partition("acks-zero", 0).logEndOffset()).isEqualTo(1);
    }

    @Test
    void aBrokerThatDoesNotLeadAnswersNotLeaderWithTheLeaderAndItsEndpoint() throws Exception {
        // Given
        createTopic("elsewhere", 1, Map.of());
        ReplicaManager notHosting = new ReplicaManager(2, List.of(logs), TopicConfigDefaults.defaults());
        notHosting.start(fixture.node());
        ProduceHandler other = new ProduceHandler(new ProduceService(notHosting, fixture.node(), purgatory, TOPIC_METRICS, null,
                Runnable::run));
        try {
            // When
            TwoPhaseApiHandler.Stages<ProduceResponseData> stages = other.dispatch(context(10, "test"),
                    request((short) 1, "elsewhere", 0, batch(1)));
            ProduceResponseData response = (ProduceResponseData) MetadataFixture.roundTrip(
                    stages.response().toCompletableFuture().get(10, TimeUnit.SECONDS), ApiKey.PRODUCE, 10, true);

            // Then
            assertThat(only(response).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
            assertThat(only(response).currentLeader().leaderId()).isEqualTo(1);
            assertThat(only(response).currentLeader().leaderEpoch()).isEqualTo(partition("elsewhere", 0)
                    .leaderEpoch());
            assertThat(response.nodeEndpoints()).singleElement().satisfies(node -> {
                assertThat(node.nodeId()).isEqualTo(1);
                assertThat(node.host()).isEqualTo("localhost");
                assertThat(node.port()).isEqualTo(9092);
                assertThat(node.rack()).isEqualTo("rack-a");
            });
        } finally {
            notHosting.close();
        }
    }

    @Test
    void aLogAppendTimeTopicAnswersTheAppendTime() throws Exception {
        // Given
        createTopic("append-time", 1, Map.of("message.timestamp.type", "LogAppendTime"));
        long before = System.currentTimeMillis();

        // When
        PartitionProduceResponse response = only(produce(9, request((short) 1, "append-time", 0, batch(2))));

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.logAppendTimeMs()).isBetween(before, System.currentTimeMillis());
    }

    @Test
    void aWholeRequestErrorResponseNamesEveryPartition() {
        // Given
        ProduceRequestData request = add(request((short) 1, "a", 0, batch(1)), "b", 3, batch(1));

        // When
        ProduceResponseData response = handler.errorResponse(context(9, "test"), request,
                Errors.UNKNOWN_SERVER_ERROR);

        // Then
        assertThat(response.responses()).flatMap(ProduceResponseData.TopicProduceResponse::partitionResponses)
                .extracting(PartitionProduceResponse::errorCode).containsExactly(
                        Errors.UNKNOWN_SERVER_ERROR.code(), Errors.UNKNOWN_SERVER_ERROR.code());
        assertThat(request.topicData()).flatMap(TopicProduceData::partitionData)
                .allSatisfy(p -> assertThat(p.records()).isNull());
    }
}
