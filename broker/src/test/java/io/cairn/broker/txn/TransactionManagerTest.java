package io.cairn.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.txn.TransactionManager.InitResult;
import io.cairn.broker.txn.TransactionManager.ProducerIdAndEpoch;
import io.cairn.broker.txn.record.TransactionLogValue;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotEnoughReplicasException;
import io.cairn.wire.message.DescribeTransactionsResponseData;
import io.cairn.wire.message.ListTransactionsResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@link TransactionManager} (Kafka's {@code TransactionCoordinatorTest} cases at transaction.version
 * 1), driven on the test thread with a manual clock, writes that commit at once unless held, and an in-memory
 * marker sender.
 */
class TransactionManagerTest {

    private static final long START = 1_764_600_000_000L;
    private static final int TIMEOUT_MS = 60_000;
    private static final int COORDINATOR_EPOCH = 4;
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition ORDERS_1 = new TopicPartition("orders", 1);

    private final TestShardContext ctx = new TestShardContext(START, null);
    private final TestMarkerSender markers = new TestMarkerSender();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final TransactionConfig config = TransactionConfig.defaults();
    private final TransactionManager manager = new TransactionManager(ctx, COORDINATOR_EPOCH, config, markers,
            () -> CompletableFuture.completedFuture(nextProducerId.getAndIncrement()), Runnable::run);

    private InitResult init(String id) {
        return init(id, Optional.empty());
    }

    private InitResult init(String id, Optional<ProducerIdAndEpoch> expected) {
        return manager.initProducerId(id, TIMEOUT_MS, expected).join();
    }

    private TransactionMetadata state(String id) {
        return manager.transaction(id).orElseThrow();
    }

    private TransactionLogValue lastValue() {
        return (TransactionLogValue) ctx.lastWritten().value();
    }

    /** A producer with an ongoing transaction over orders-0 and orders-1. */
    private InitResult ongoing(String id) {
        InitResult producer = init(id);
        assertThat(manager.addPartitions(id, producer.producerId(), producer.producerEpoch(),
                Set.of(ORDERS_0, ORDERS_1)).join()).isEqualTo(Errors.NONE);
        return producer;
    }

    @Test
    void aNewTransactionalIdGetsANewProducerIdWithEpoch0WrittenAsEmpty() {
        // When
        InitResult result = init("t");

        // Then
        assertThat(result).isEqualTo(new InitResult(1000L, (short) 0, Errors.NONE));
        assertThat(lastValue().transactionStatus()).isEqualTo(TransactionState.EMPTY.id());
        assertThat(lastValue().producerId()).isEqualTo(1000L);
        assertThat(lastValue().transactionTimeoutMs()).isEqualTo(TIMEOUT_MS);
        assertThat(state("t").state()).isEqualTo(TransactionState.EMPTY);
    }

    @Test
    void initProducerIdAgainBumpsTheEpochOfTheSameProducerId() {
        // Given
        init("t");

        // When
        InitResult again = init("t");

        // Then
        assertThat(again).isEqualTo(new InitResult(1000L, (short) 1, Errors.NONE));
    }

    @Test
    void addPartitionsStartsATransactionAndWritesItsPartitions() {
        // Given
        InitResult producer = init("t");
        ctx.advance(5);

        // When
        Errors error = manager.addPartitions("t", producer.producerId(), producer.producerEpoch(),
                Set.of(ORDERS_0)).join();

        // Then
        assertThat(error).isEqualTo(Errors.NONE);
        assertThat(state("t").state()).isEqualTo(TransactionState.ONGOING);
        assertThat(state("t").topicPartitions()).containsExactly(ORDERS_0);
        assertThat(state("t").txnStartTimestamp()).isEqualTo(START + 5);
        assertThat(lastValue().transactionPartitions()).hasSize(1);
    }

    @Test
    void addPartitionsChecksTheProducerIdAndEpoch() {
        // Given
        InitResult producer = init("t");

        // When / Then
        assertThat(manager.addPartitions("unknown", producer.producerId(), producer.producerEpoch(),
                Set.of(ORDERS_0)).join()).isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
        assertThat(manager.addPartitions("t", producer.producerId() + 1, producer.producerEpoch(),
                Set.of(ORDERS_0)).join()).isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
        assertThat(manager.addPartitions("t", producer.producerId(), (short) (producer.producerEpoch() + 1),
                Set.of(ORDERS_0)).join()).isEqualTo(Errors.PRODUCER_FENCED);
    }

    @Test
    void addingPartitionsAlreadyInTheTransactionWritesNothing() {
        // Given
        InitResult producer = ongoing("t");
        int writes = ctx.written().size();

        // When
        Errors error = manager.addPartitions("t", producer.producerId(), producer.producerEpoch(),
                Set.of(ORDERS_1)).join();

        // Then
        assertThat(error).isEqualTo(Errors.NONE);
        assertThat(ctx.written()).hasSize(writes);
    }

    @Test
    void commitWritesPrepareCommitAnswersThenSendsMarkersThenWritesCompleteCommit() {
        // Given
        InitResult producer = ongoing("t");

        // When
        Errors error = manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), true).join();

        // Then: answered once PrepareCommit is written, markers on their way
        assertThat(error).isEqualTo(Errors.NONE);
        assertThat(lastValue().transactionStatus()).isEqualTo(TransactionState.PREPARE_COMMIT.id());
        assertThat(state("t").state()).isEqualTo(TransactionState.PREPARE_COMMIT);
        TestMarkerSender.Request request = markers.last();
        assertThat(request.commit()).isTrue();
        assertThat(request.coordinatorEpoch()).isEqualTo(COORDINATOR_EPOCH);
        assertThat(request.producerEpoch()).isEqualTo(producer.producerEpoch());
        assertThat(request.partitions()).containsExactlyInAnyOrder(ORDERS_0, ORDERS_1);

        // and once the markers are written
        request.future().complete(null);
        assertThat(state("t").state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(state("t").topicPartitions()).isEmpty();
        assertThat(lastValue().transactionStatus()).isEqualTo(TransactionState.COMPLETE_COMMIT.id());
        assertThat(lastValue().transactionPartitions()).isEmpty();
    }

    @Test
    void whileMarkersAreWrittenRequestsGetConcurrentTransactions() {
        // Given
        InitResult producer = ongoing("t");
        manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), true).join();

        // When / Then
        assertThat(manager.addPartitions("t", producer.producerId(), producer.producerEpoch(),
                Set.of(ORDERS_0)).join()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(init("t").error()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), true).join())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(manager.verifyPartitions("t", producer.producerId(), producer.producerEpoch(), Set.of(ORDERS_0)))
                .containsEntry(ORDERS_0, Errors.CONCURRENT_TRANSACTIONS);
    }

    @Test
    void endTxnAnswersAsKafkaInEveryCompleteOrEmptyState() {
        // Given
        InitResult producer = ongoing("t");
        manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), false).join();
        markers.last().future().complete(null);

        // When / Then: a retried abort succeeds, a commit of the aborted transaction is an invalid state
        assertThat(manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), false).join())
                .isEqualTo(Errors.NONE);
        assertThat(manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), true).join())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        InitResult next = init("t");
        assertThat(manager.endTransaction("t", next.producerId(), next.producerEpoch(), true).join())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(manager.endTransaction("t", next.producerId(), producer.producerEpoch(), true).join())
                .isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(manager.endTransaction("other", next.producerId(), next.producerEpoch(), true).join())
                .isEqualTo(Errors.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void initProducerIdOnAnOngoingTransactionFencesAndAbortsIt() {
        // Given
        InitResult old = ongoing("t");

        // When
        InitResult result = init("t");

        // Then: the client retries; the transaction is aborted with the fenced epoch
        assertThat(result.error()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(state("t").state()).isEqualTo(TransactionState.PREPARE_ABORT);
        assertThat(lastValue().producerEpoch()).isEqualTo((short) (old.producerEpoch() + 1));
        assertThat(markers.last().commit()).isFalse();
        assertThat(markers.last().producerEpoch()).isEqualTo((short) (old.producerEpoch() + 1));
        assertThat(manager.endTransaction("t", old.producerId(), old.producerEpoch(), true).join())
                .isEqualTo(Errors.PRODUCER_FENCED);

        // and the retry after the abort gets the epoch after the fenced one
        markers.last().future().complete(null);
        assertThat(init("t")).isEqualTo(new InitResult(old.producerId(), (short) (old.producerEpoch() + 2),
                Errors.NONE));
    }

    @Test
    void aFailedEpochFenceDoesNotBumpTheEpochTwice() {
        // Given
        InitResult old = ongoing("t");
        ctx.holdWrites();
        CompletableFuture<InitResult> first = manager.initProducerId("t", TIMEOUT_MS, Optional.empty());

        // When
        ctx.failNextWrite(new NotEnoughReplicasException("no ISR"));

        // Then
        assertThat(first.join().error()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(state("t").state()).isEqualTo(TransactionState.ONGOING);
        CompletableFuture<InitResult> retry = manager.initProducerId("t", TIMEOUT_MS, Optional.empty());
        ctx.completeNextWrite();
        assertThat(retry.join().error()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        assertThat(lastValue().producerEpoch()).isEqualTo((short) (old.producerEpoch() + 1));
    }

    @Test
    void kip360RecoveryBumpsTheNamedEpochAndRecognisesARetry() {
        // Given
        InitResult first = init("t");
        ProducerIdAndEpoch named = new ProducerIdAndEpoch(first.producerId(), first.producerEpoch());

        // When
        InitResult bumped = init("t", Optional.of(named));
        InitResult retried = init("t", Optional.of(named));

        // Then: the retry of a bump whose answer was lost gets the same epoch again
        assertThat(bumped).isEqualTo(new InitResult(first.producerId(), (short) 1, Errors.NONE));
        assertThat(retried).isEqualTo(bumped);
        assertThat(init("t", Optional.of(new ProducerIdAndEpoch(first.producerId(), (short) 7))).error())
                .isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(init("t", Optional.of(new ProducerIdAndEpoch(first.producerId() + 50, (short) 1))).error())
                .isEqualTo(Errors.PRODUCER_FENCED);
    }

    @Test
    void anExhaustedEpochRotatesToANewProducerId() {
        // Given: a transactional id at epoch 32766 (Short.MAX_VALUE - 1)
        manager.replay(new TransactionLog.Entry("t", new TxnTransitMetadata(500L, -1L, (short) 32766, (short) -1,
                TIMEOUT_MS, TransactionState.COMPLETE_COMMIT, Set.of(), START, START)));

        // When
        InitResult rotated = init("t", Optional.of(new ProducerIdAndEpoch(500L, (short) 32766)));

        // Then
        assertThat(rotated).isEqualTo(new InitResult(1000L, (short) 0, Errors.NONE));
        assertThat(state("t").prevProducerId()).isEqualTo(500L);
        // a retry naming the old id and its exhausted epoch is recognised, not fenced
        assertThat(init("t", Optional.of(new ProducerIdAndEpoch(500L, (short) 32766))).error())
                .isEqualTo(Errors.NONE);
    }

    @Test
    void theOldProducerIdIsFencedOnceTheRotatedOneMovedOn() {
        // Given: rotated to a new producer id, which then started a transaction
        manager.replay(new TransactionLog.Entry("t", new TxnTransitMetadata(500L, -1L, (short) 32766, (short) -1,
                TIMEOUT_MS, TransactionState.COMPLETE_ABORT, Set.of(), START, START)));
        InitResult rotated = init("t", Optional.of(new ProducerIdAndEpoch(500L, (short) 32766)));
        manager.addPartitions("t", rotated.producerId(), rotated.producerEpoch(), Set.of(ORDERS_0)).join();

        // When
        InitResult stale = init("t", Optional.of(new ProducerIdAndEpoch(500L, (short) 32766)));

        // Then
        assertThat(stale.error()).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(state("t").state()).isEqualTo(TransactionState.ONGOING);
    }

    @Test
    void initProducerIdWhileAWriteIsInFlightGetsConcurrentTransactions() {
        // Given
        init("t");
        ctx.holdWrites();
        CompletableFuture<InitResult> first = manager.initProducerId("t", TIMEOUT_MS, Optional.empty());

        // When
        InitResult second = init("t");

        // Then
        assertThat(second.error()).isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        ctx.completeNextWrite();
        assertThat(first.join()).isEqualTo(new InitResult(1000L, (short) 1, Errors.NONE));
    }

    @Test
    void aTimedOutTransactionIsFencedAndAborted() {
        // Given
        InitResult producer = ongoing("t");
        manager.onLoaded();

        // When: past the timeout and the next abort check
        ctx.advance(TIMEOUT_MS + config.abortTimedOutIntervalMs());

        // Then
        assertThat(state("t").state()).isEqualTo(TransactionState.PREPARE_ABORT);
        assertThat(state("t").producerEpoch()).isEqualTo((short) (producer.producerEpoch() + 1));
        assertThat(markers.last().commit()).isFalse();
        assertThat(manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), true).join())
                .isEqualTo(Errors.PRODUCER_FENCED);
        markers.last().future().complete(null);
        assertThat(state("t").state()).isEqualTo(TransactionState.COMPLETE_ABORT);
    }

    @Test
    void aTransactionWithinItsTimeoutIsNotAborted() {
        // Given
        ongoing("t");
        manager.onLoaded();

        // When
        ctx.advance(TIMEOUT_MS - 1);

        // Then
        assertThat(state("t").state()).isEqualTo(TransactionState.ONGOING);
        assertThat(markers.requests()).isEmpty();
    }

    @Test
    void anIdleTransactionalIdExpiresAsATombstone() {
        // Given
        init("t");
        ongoing("busy");
        manager.onLoaded();

        // When
        ctx.advance(config.transactionalIdExpirationMs() + config.removeExpiredIntervalMs());

        // Then: the id without a transaction is gone, the ongoing one (aborted on timeout meanwhile) is not expired
        assertThat(manager.transaction("t")).isEmpty();
        assertThat(ctx.written()).anySatisfy(r -> assertThat(r.value()).isNull());
        assertThat(manager.describe("t").errorCode()).isEqualTo(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
        assertThat(manager.transaction("busy")).isPresent();
    }

    @Test
    void verifyOnlyAnswersWhetherEachPartitionIsInTheTransaction() {
        // Given
        InitResult producer = init("t");
        manager.addPartitions("t", producer.producerId(), producer.producerEpoch(), Set.of(ORDERS_0)).join();

        // When / Then
        assertThat(manager.verifyPartitions("t", producer.producerId(), producer.producerEpoch(),
                Set.of(ORDERS_0, ORDERS_1))).containsEntry(ORDERS_0, Errors.NONE)
                .containsEntry(ORDERS_1, Errors.TRANSACTION_ABORTABLE);
        assertThat(manager.verifyPartitions("t", producer.producerId(), (short) 9, Set.of(ORDERS_0)))
                .containsEntry(ORDERS_0, Errors.PRODUCER_FENCED);
        assertThat(manager.verifyPartitions("x", producer.producerId(), producer.producerEpoch(), Set.of(ORDERS_0)))
                .containsEntry(ORDERS_0, Errors.INVALID_PRODUCER_ID_MAPPING);
    }

    @Test
    void aFailedWriteLeavesTheStateAndAnswersKafkasError() {
        // Given
        InitResult producer = init("t");
        ctx.holdWrites();
        CompletableFuture<Errors> add = manager.addPartitions("t", producer.producerId(), producer.producerEpoch(),
                Set.of(ORDERS_0));

        // When
        ctx.failNextWrite(new NotEnoughReplicasException("no ISR"));

        // Then
        assertThat(add.join()).isEqualTo(Errors.COORDINATOR_NOT_AVAILABLE);
        assertThat(state("t").state()).isEqualTo(TransactionState.EMPTY);
        assertThat(state("t").pendingTransitionInProgress()).isFalse();
    }

    @Test
    void describeReportsKafkasFields() {
        // Given
        InitResult producer = ongoing("t");

        // When
        DescribeTransactionsResponseData.TransactionState described = manager.describe("t");

        // Then
        assertThat(described.errorCode()).isZero();
        assertThat(described.transactionState()).isEqualTo("Ongoing");
        assertThat(described.producerId()).isEqualTo(producer.producerId());
        assertThat(described.transactionTimeoutMs()).isEqualTo(TIMEOUT_MS);
        assertThat(described.transactionStartTimeMs()).isEqualTo(START);
        assertThat(described.topics()).singleElement().satisfies(t -> {
            assertThat(t.topic()).isEqualTo("orders");
            assertThat(t.partitions()).containsExactly(0, 1);
        });
        assertThat(manager.describe("nope").errorCode()).isEqualTo(Errors.TRANSACTIONAL_ID_NOT_FOUND.code());
    }

    @Test
    void listFiltersByStateProducerIdDurationAndPattern() {
        // Given
        InitResult a = ongoing("app-a");
        ctx.advance(10_000);
        ongoing("app-b");
        init("other");
        ctx.advance(1_000);

        // When
        List<String> ongoingOnly = list(Set.of(TransactionState.ONGOING), Set.of(), -1, null);
        List<String> byProducer = list(Set.of(), Set.of(a.producerId()), -1, null);
        List<String> longRunning = list(Set.of(TransactionState.ONGOING), Set.of(), 5_000, null);
        List<String> byPattern = list(Set.of(), Set.of(), -1, Pattern.compile("app-.*"));

        // Then
        assertThat(ongoingOnly).containsExactlyInAnyOrder("app-a", "app-b");
        assertThat(byProducer).containsExactly("app-a");
        assertThat(longRunning).containsExactly("app-a");
        assertThat(byPattern).containsExactlyInAnyOrder("app-a", "app-b");
    }

    private List<String> list(Set<TransactionState> states, Set<Long> producerIds, long durationMs, Pattern pattern) {
        List<ListTransactionsResponseData.TransactionState> into = new ArrayList<>();
        manager.list(new TransactionManager.ListFilter(states, producerIds, durationMs, pattern), into);
        return into.stream().map(ListTransactionsResponseData.TransactionState::transactionalId).toList();
    }
}
