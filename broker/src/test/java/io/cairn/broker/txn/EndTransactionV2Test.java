package io.cairn.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.txn.TransactionManager.EndResult;
import io.cairn.broker.txn.TransactionManager.InitResult;
import io.cairn.broker.txn.record.TransactionLogValue;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The transaction.version 2 rules of {@link TransactionManager} and {@link EndTransactionV2} (Kafka 4.1's
 * {@code TransactionCoordinatorTest} cases with TV_2): an epoch bump per transaction, markers with the bumped epoch,
 * retries, producer id rotation, aborts without partitions, the coordinator's own aborts, and the log value version 1.
 */
class EndTransactionV2Test {

    private static final long START = 1_764_600_000_000L;
    private static final int TIMEOUT_MS = 60_000;
    private static final short TV_2 = TransactionMetadata.TV_2;
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);

    private final TestShardContext ctx = new TestShardContext(START, null);
    private final TestMarkerSender markers = new TestMarkerSender();
    private final AtomicLong nextProducerId = new AtomicLong(1000);
    private final TransactionConfig config = TransactionConfig.defaults();
    private final TransactionManager manager = new TransactionManager(ctx, 4, config, markers,
            () -> CompletableFuture.completedFuture(nextProducerId.getAndIncrement()), Runnable::run, () -> TV_2);

    private InitResult ongoing(String id) {
        InitResult producer = manager.initProducerId(id, TIMEOUT_MS, Optional.empty()).join();
        assertThat(manager.addPartitions(id, producer.producerId(), producer.producerEpoch(), Set.of(ORDERS_0), TV_2)
                .join()).isEqualTo(Errors.NONE);
        return producer;
    }

    private EndResult end(String id, long producerId, short epoch, boolean commit) {
        return manager.endTransaction(id, producerId, epoch, commit, TV_2).join();
    }

    private TransactionMetadata state(String id) {
        return manager.transaction(id).orElseThrow();
    }

    @Test
    void aCommitBumpsTheEpochAndWritesTheMarkersWithIt() {
        // Given
        InitResult producer = ongoing("t");

        // When
        EndResult result = end("t", producer.producerId(), producer.producerEpoch(), true);

        // Then: the answer names the next epoch; the markers carry it, so writes of the old epoch are fenced
        short bumped = (short) (producer.producerEpoch() + 1);
        assertThat(result).isEqualTo(new EndResult(Errors.NONE, producer.producerId(), bumped));
        assertThat(markers.last().producerEpoch()).isEqualTo(bumped);
        assertThat(markers.last().commit()).isTrue();
        assertThat(state("t").state()).isEqualTo(TransactionState.PREPARE_COMMIT);
        assertThat(state("t").clientTransactionVersion()).isEqualTo(TV_2);
        TransactionLogValue written = (TransactionLogValue) ctx.lastWritten().value();
        assertThat(ctx.lastWritten().valueVersion()).isEqualTo((short) 1);
        assertThat(written.clientTransactionVersion()).isEqualTo(TV_2);
        markers.last().future().complete(null);
        assertThat(state("t").state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(state("t").producerEpoch()).isEqualTo(bumped);
    }

    @Test
    void aRetryOfTheOldEpochGetsConcurrentTransactionsThenNone() {
        // Given
        InitResult producer = ongoing("t");
        end("t", producer.producerId(), producer.producerEpoch(), true);

        // When / Then: while the markers are written, then once complete
        assertThat(end("t", producer.producerId(), producer.producerEpoch(), true).error())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        markers.last().future().complete(null);
        assertThat(end("t", producer.producerId(), producer.producerEpoch(), true))
                .isEqualTo(new EndResult(Errors.NONE, producer.producerId(), (short) (producer.producerEpoch() + 1)));
        assertThat(end("t", producer.producerId(), producer.producerEpoch(), false).error())
                .isEqualTo(Errors.INVALID_TXN_STATE);
        assertThat(end("t", producer.producerId(), (short) (producer.producerEpoch() - 1), true).error())
                .isEqualTo(Errors.PRODUCER_FENCED);
    }

    @Test
    void theNextTransactionUsesTheBumpedEpochAndTheOldOneIsFenced() {
        // Given
        InitResult producer = ongoing("t");
        short next = end("t", producer.producerId(), producer.producerEpoch(), true).producerEpoch();
        markers.last().future().complete(null);

        // When
        Errors stale = manager.addPartitions("t", producer.producerId(), producer.producerEpoch(), Set.of(ORDERS_0),
                TV_2).join();
        Errors added = manager.addPartitions("t", producer.producerId(), next, Set.of(ORDERS_0), TV_2).join();

        // Then: a delayed write of the finished transaction cannot join the next one
        assertThat(stale).isEqualTo(Errors.PRODUCER_FENCED);
        assertThat(added).isEqualTo(Errors.NONE);
        assertThat(state("t").state()).isEqualTo(TransactionState.ONGOING);
    }

    @Test
    void anAbortWithoutPartitionsStillBumpsTheEpoch() {
        // Given: Empty, no partition added
        InitResult producer = manager.initProducerId("t", TIMEOUT_MS, Optional.empty()).join();

        // When
        EndResult aborted = end("t", producer.producerId(), producer.producerEpoch(), false);

        // Then
        assertThat(aborted).isEqualTo(new EndResult(Errors.NONE, producer.producerId(),
                (short) (producer.producerEpoch() + 1)));
        assertThat(state("t").state()).isEqualTo(TransactionState.PREPARE_ABORT);
        assertThat(end("t", producer.producerId(), aborted.producerEpoch(), true).error())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
    }

    @Test
    void anExhaustedEpochCompletesWithANewProducerId() {
        // Given: an ongoing transaction at epoch 32766
        manager.replay(new TransactionLog.Entry("t", new TxnTransitMetadata(500L, -1L, -1L, (short) 32766, (short) -1,
                TIMEOUT_MS, TransactionState.ONGOING, Set.of(ORDERS_0), START, START, TV_2)));

        // When
        EndResult result = end("t", 500L, (short) 32766, true);

        // Then: the markers use the old id at the last epoch; the producer continues with the new id at 0
        assertThat(result).isEqualTo(new EndResult(Errors.NONE, 1000L, (short) 0));
        assertThat(markers.last().producerId()).isEqualTo(500L);
        assertThat(markers.last().producerEpoch()).isEqualTo(Short.MAX_VALUE);
        markers.last().future().complete(null);
        assertThat(state("t").producerId()).isEqualTo(1000L);
        assertThat(state("t").prevProducerId()).isEqualTo(500L);
        assertThat(end("t", 500L, (short) 32766, true)).isEqualTo(new EndResult(Errors.NONE, 1000L, (short) 0));
    }

    @Test
    void aTimedOutTransactionIsAbortedWithOneBumpAndTheProducerGetsInvalidTxnState() {
        // Given
        InitResult producer = ongoing("t");
        manager.onLoaded();

        // When: past the timeout and the next abort check
        ctx.advance(TIMEOUT_MS + config.abortTimedOutIntervalMs());

        // Then: as Kafka 4.1 with transaction.version 2, the commit of the old epoch is a retry of a finished abort
        short bumped = (short) (producer.producerEpoch() + 1);
        assertThat(state("t").state()).isEqualTo(TransactionState.PREPARE_ABORT);
        assertThat(state("t").producerEpoch()).isEqualTo(bumped);
        assertThat(markers.last().producerEpoch()).isEqualTo(bumped);
        markers.last().future().complete(null);
        assertThat(end("t", producer.producerId(), producer.producerEpoch(), true).error())
                .isEqualTo(Errors.INVALID_TXN_STATE);
    }

    @Test
    void endTxnBelowV5KeepsTheEpoch() {
        // Given
        InitResult producer = ongoing("t");

        // When
        EndResult result = manager.endTransaction("t", producer.producerId(), producer.producerEpoch(), true,
                (short) 0).join();

        // Then
        assertThat(result.error()).isEqualTo(Errors.NONE);
        assertThat(markers.last().producerEpoch()).isEqualTo(producer.producerEpoch());
    }
}
