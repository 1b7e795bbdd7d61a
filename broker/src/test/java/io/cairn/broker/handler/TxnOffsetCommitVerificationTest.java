package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.group.GroupConfig;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.broker.txn.verification.VerificationTransport;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.Time;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddPartitionsToTxnRequestData;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import io.cairn.wire.message.AddPartitionsToTxnResponseData;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult;
import io.cairn.wire.message.OffsetFetchRequestData;
import io.cairn.wire.message.OffsetFetchRequestData.OffsetFetchRequestGroup;
import io.cairn.wire.message.OffsetFetchRequestData.OffsetFetchRequestTopics;
import io.cairn.wire.message.OffsetFetchResponseData;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TxnOffsetCommit verified before its write (KIP-890), on a real group coordinator and {@code __consumer_offsets}
 * log, with a transaction coordinator answering AddPartitionsToTxn from memory: a verified commit is written, a
 * refused one is not, a guard a marker made stale is refused by the log, v5 adds, and without
 * transaction.partition.verification.enable v0-v4 are written unverified.
 */
@Timeout(120)
class TxnOffsetCommitVerificationTest {

    private static final String GROUP = "g";
    private static final long PRODUCER = 7L;

    @TempDir
    Path dir;

    private PartitionsFixture fixture;
    private PartitionPurgatory purgatory;
    private GroupCoordinator coordinator;
    private TransactionVerifier verifier;
    private final BlockingQueue<AddPartitionsToTxnRequestData> requests = new LinkedBlockingQueue<>();
    /** The coordinator's answer for every partition. */
    private volatile Errors answer = Errors.NONE;
    /** Run by the fake coordinator before it answers. */
    private volatile Runnable beforeAnswer = () -> { };

    private final VerificationTransport transport = new VerificationTransport() {
        @Override
        public AddPartitionsToTxnResponseData send(SourceBroker to, AddPartitionsToTxnRequestData request) {
            requests.add(request);
            beforeAnswer.run();
            AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData();
            for (AddPartitionsToTxnTransaction txn : request.transactions()) {
                AddPartitionsToTxnResult result = new AddPartitionsToTxnResult()
                    .setTransactionalId(txn.transactionalId());
                txn.topics().forEach(topic -> {
                    AddPartitionsToTxnTopicResult topicResult = new AddPartitionsToTxnTopicResult()
                        .setName(topic.name());
                    topic.partitions().forEach(p -> topicResult.resultsByPartition()
                        .add(new AddPartitionsToTxnPartitionResult().setPartitionIndex(p)
                            .setPartitionErrorCode(answer.code())));
                    result.topicResults().add(topicResult);
                });
                response.resultsByTransaction().add(result);
            }
            return response;
        }

        @Override
        public void close() {
        }
    };

    @BeforeEach
    void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        purgatory = new PartitionPurgatory(fixture.replicaManager());
        coordinator = new GroupCoordinator(fixture.replicaManager(), fixture.metadata().node(),
            new GroupConfig(6_000, 300_000, 0, 10, 7L * 24 * 3_600_000, 600_000, 64),
            new CoordinatorRuntimeSettings(2, 5, 5_000L), 1, Time.SYSTEM, purgatory);
        coordinator.start();
        fixture.createTopic("orders", 1);
        fixture.createTopic("__transaction_state", 1);
        fixture.createTopic(GroupCoordinator.TOPIC, 1);
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
            OffsetFetchResponseData offsets = call(new OffsetFetchHandler(coordinator),
                new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestGroup().setGroupId(GROUP))), 9);
            return offsets.groups().get(0).errorCode() == Errors.NONE.code();
        });
    }

    @AfterEach
    void stop() {
        if (verifier != null) {
            verifier.close();
        }
        coordinator.close();
        purgatory.close();
        fixture.close();
    }

    private static <S> S call(ApiHandler<?, ?> handler, ApiMessage request, int version) throws Exception {
        @SuppressWarnings("unchecked")
        ApiHandler<ApiMessage, ApiMessage> h = (ApiHandler<ApiMessage, ApiMessage>) handler;
        @SuppressWarnings("unchecked")
        S response = (S) h.handle(MetadataFixture.context(h.apiKey(), version), request).toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
        return response;
    }

    private void useVerifier(boolean verificationEnabled) {
        verifier = new TransactionVerifier(() -> fixture.metadata().node().currentImage(), MetadataFixture.LISTENER,
            verificationEnabled, transport);
        verifier.start();
    }

    private Errors commit(int version, short epoch, long offset) throws Exception {
        TxnOffsetCommitRequestData request = new TxnOffsetCommitRequestData().setTransactionalId("tx")
            .setGroupId(GROUP).setProducerId(PRODUCER).setProducerEpoch(epoch).setTopics(List.of(
                new TxnOffsetCommitRequestTopic().setName("orders").setPartitions(List.of(
                    new TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(offset)))));
        TxnOffsetCommitResponseData response = call(GroupHandlers.txnOffsetCommit(coordinator,
            fixture.metadata().node(), verifier), request, version);
        return Errors.forCode(response.topics().get(0).partitions().get(0).errorCode());
    }

    private long offsetsLogEnd() {
        return fixture.partition(GroupCoordinator.TOPIC, 0).logEndOffset();
    }

    private Errors stableOffsetError() throws Exception {
        OffsetFetchRequestData request = new OffsetFetchRequestData().setRequireStable(true).setGroups(List.of(
            new OffsetFetchRequestGroup().setGroupId(GROUP).setTopics(List.of(new OffsetFetchRequestTopics()
                .setName("orders").setPartitionIndexes(List.of(0))))));
        OffsetFetchResponseData response = call(new OffsetFetchHandler(coordinator), request, 9);
        return Errors.forCode(response.groups().get(0).topics().get(0).partitions().get(0).errorCode());
    }

    @Test
    void aVerifiedCommitIsWrittenAndTheNextOneOfTheTransactionNeedsNoVerification() throws Exception {
        // Given
        useVerifier(true);

        // When
        Errors first = commit(4, (short) 0, 17L);
        Errors second = commit(4, (short) 0, 18L);

        // Then: one verify_only request, for the offsets partition; the second commit found the transaction ongoing
        assertThat(first).isEqualTo(Errors.NONE);
        assertThat(second).isEqualTo(Errors.NONE);
        assertThat(requests).hasSize(1);
        AddPartitionsToTxnTransaction asked = requests.peek().transactions().get(0);
        assertThat(asked.verifyOnly()).isTrue();
        assertThat(asked.producerId()).isEqualTo(PRODUCER);
        assertThat(asked.topics().get(0).name()).isEqualTo(GroupCoordinator.TOPIC);
        assertThat(stableOffsetError()).isEqualTo(Errors.UNSTABLE_OFFSET_COMMIT);
    }

    @Test
    void aCommitTheCoordinatorDoesNotKnowInTheTransactionIsRefusedAndNotWritten() throws Exception {
        // Given
        useVerifier(true);
        answer = Errors.INVALID_TXN_STATE;
        long logEnd = offsetsLogEnd();

        // When
        Errors refused = commit(4, (short) 0, 17L);

        // Then
        assertThat(refused).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(offsetsLogEnd()).isEqualTo(logEnd);
        assertThat(stableOffsetError()).isEqualTo(Errors.NONE);
    }

    @Test
    void transactionAbortableIsItselfFromV4AndInvalidTxnStateBefore() throws Exception {
        // Given
        useVerifier(true);
        answer = Errors.TRANSACTION_ABORTABLE;

        // When / Then
        assertThat(commit(4, (short) 0, 17L)).isEqualTo(Errors.TRANSACTION_ABORTABLE);
        assertThat(commit(3, (short) 0, 17L)).isEqualTo(Errors.INVALID_TXN_STATE);
    }

    @Test
    void theCoordinatorsRetriableAnswerBecomesCoordinatorNotAvailable() throws Exception {
        // Given
        useVerifier(true);
        answer = Errors.CONCURRENT_TRANSACTIONS;

        // When / Then
        assertThat(commit(2, (short) 0, 17L)).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
    }

    @Test
    void aCommitWhoseTransactionEndedWhileItWasVerifiedIsRefusedByTheLog() throws Exception {
        // Given: the transaction is aborted (its marker written) while the coordinator answers
        useVerifier(true);
        int partition = coordinator.partitionFor(GROUP);
        beforeAnswer = () -> coordinator.completeTransaction(partition, PRODUCER, (short) 0, 0, false).join();

        // When
        Errors refused = commit(4, (short) 0, 17L);

        // Then: the write carried a guard the marker dropped
        assertThat(refused).isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(stableOffsetError()).isEqualTo(Errors.NONE);
    }

    @Test
    void withoutVerificationAV4CommitIsWrittenUnverified() throws Exception {
        // Given
        useVerifier(false);
        answer = Errors.INVALID_TXN_STATE;

        // When
        Errors written = commit(4, (short) 0, 17L);

        // Then
        assertThat(written).isEqualTo(Errors.NONE);
        assertThat(requests).isEmpty();
        assertThat(stableOffsetError()).isEqualTo(Errors.UNSTABLE_OFFSET_COMMIT);
    }

    @Test
    void aV5CommitAddsTheOffsetsPartitionEvenWithoutVerification() throws Exception {
        // Given
        useVerifier(false);

        // When
        Errors added = commit(5, (short) 1, 17L);

        // Then
        assertThat(added).isEqualTo(Errors.NONE);
        assertThat(requests.poll(0, TimeUnit.SECONDS).transactions().get(0).verifyOnly()).isFalse();
        assertThat(stableOffsetError()).isEqualTo(Errors.UNSTABLE_OFFSET_COMMIT);
    }

    @Test
    void aV5CommitTheCoordinatorRefusesIsNotWritten() throws Exception {
        // Given
        useVerifier(true);
        answer = Errors.INVALID_PRODUCER_EPOCH;
        long logEnd = offsetsLogEnd();

        // When / Then
        assertThat(commit(5, (short) 1, 17L)).isEqualTo(Errors.INVALID_PRODUCER_EPOCH);
        assertThat(offsetsLogEnd()).isEqualTo(logEnd);
    }
}
