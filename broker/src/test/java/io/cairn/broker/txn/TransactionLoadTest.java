package io.cairn.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorLoader;
import io.cairn.broker.txn.TransactionManager.InitResult;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A shard's transactional ids written to a real {@code __transaction_state} log and loaded back by
 * the coordinator runtime's {@link CoordinatorLoader} into a new {@link TransactionShard}, as a new coordinator does on election.
 */
class TransactionLoadTest {

    private static final long START = 1_764_600_000_000L;
    private static final TopicPartition ORDERS_0 = new TopicPartition("orders", 0);
    private static final TopicPartition AUDIT_3 = new TopicPartition("audit", 3);

    @TempDir
    Path tmp;

    private PartitionLog log;
    private final AtomicLong producerIds = new AtomicLong(1);
    private final TransactionConfig config = TransactionConfig.defaults();

    @BeforeEach
    void openLog() {
        log = PartitionLog.open(tmp.resolve("__transaction_state-0"),
                LogConfig.builder().cleanupPolicy("compact").build(), LogEnvironment.of(Time.SYSTEM), true);
    }

    @AfterEach
    void closeLog() {
        log.close();
    }

    private TransactionManager manager(TestShardContext ctx, TestMarkerSender markers, int coordinatorEpoch) {
        return new TransactionManager(ctx, coordinatorEpoch, config, markers,
                () -> CompletableFuture.completedFuture(producerIds.getAndIncrement()), Runnable::run);
    }

    /** A shard of leader epoch {@code coordinatorEpoch} loaded from the log, {@code chunkBytes} at a time. */
    private TransactionShard load(TestShardContext ctx, TestMarkerSender markers, int chunkBytes,
                                  CoordinatorLoader.LoadSummary[] summary) {
        TransactionShard shard = new TransactionShard(ctx, config, markers,
                () -> CompletableFuture.completedFuture(producerIds.getAndIncrement()), () -> (short) 0);
        summary[0] = CoordinatorLoader.load(log, log.logEndOffset(), TransactionLogSerde.INSTANCE, shard, chunkBytes);
        shard.onLoaded();
        return shard;
    }

    @Test
    void aNewCoordinatorLoadsEveryIdAndResumesThePreparedCommit() {
        // Given: ids in CompleteCommit, PrepareCommit (markers never written), Ongoing, and one expired
        TestMarkerSender oldMarkers = new TestMarkerSender();
        TransactionManager old = manager(new TestShardContext(START, log), oldMarkers, 1);
        InitResult done = begin(old, "done", ORDERS_0);
        old.endTransaction("done", done.producerId(), done.producerEpoch(), true).join();
        oldMarkers.last().future().complete(null);
        InitResult prepared = begin(old, "prepared", ORDERS_0, AUDIT_3);
        old.endTransaction("prepared", prepared.producerId(), prepared.producerEpoch(), true).join();
        InitResult ongoing = begin(old, "ongoing", AUDIT_3);
        TestShardContext expiring = new TestShardContext(START, log);
        TransactionManager other = manager(expiring, new TestMarkerSender(), 1);
        other.initProducerId("expired", 1_000, Optional.empty()).join();
        expiring.advance(config.transactionalIdExpirationMs() + 1);
        other.expireTransactionalIds();

        // When: loaded in small chunks by the coordinator of the next leader epoch
        TestMarkerSender markers = new TestMarkerSender();
        CoordinatorLoader.LoadSummary[] summary = new CoordinatorLoader.LoadSummary[1];
        TransactionManager loaded = load(new TestShardContext(START + 1_000, log, 2), markers, 64, summary).manager();

        // Then
        assertThat(summary[0].skipped()).isZero();
        assertThat(loaded.transaction("done").orElseThrow().state()).isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(loaded.transaction("ongoing").orElseThrow().state()).isEqualTo(TransactionState.ONGOING);
        assertThat(loaded.transaction("ongoing").orElseThrow().topicPartitions()).containsExactly(AUDIT_3);
        assertThat(loaded.transaction("ongoing").orElseThrow().producerEpoch()).isEqualTo(ongoing.producerEpoch());
        assertThat(loaded.transaction("expired")).isEmpty();
        assertThat(markers.requests()).singleElement().satisfies(request -> {
            assertThat(request.transactionalId()).isEqualTo("prepared");
            assertThat(request.commit()).isTrue();
            assertThat(request.coordinatorEpoch()).isEqualTo(2);
            assertThat(request.producerId()).isEqualTo(prepared.producerId());
            assertThat(request.partitions()).containsExactlyInAnyOrder(ORDERS_0, AUDIT_3);
        });

        // and the resumed commit completes once its markers are written
        markers.last().future().complete(null);
        assertThat(loaded.transaction("prepared").orElseThrow().state())
                .isEqualTo(TransactionState.COMPLETE_COMMIT);
        assertThat(loaded.endTransaction("prepared", prepared.producerId(), prepared.producerEpoch(), true).join())
                .isEqualTo(Errors.NONE);
    }

    @Test
    void aPreparedAbortIsResumedAsAnAbort() {
        // Given
        TransactionManager old = manager(new TestShardContext(START, log), new TestMarkerSender(), 3);
        InitResult producer = begin(old, "t", ORDERS_0);
        old.endTransaction("t", producer.producerId(), producer.producerEpoch(), false).join();

        // When
        TestMarkerSender markers = new TestMarkerSender();
        TransactionManager loaded = load(new TestShardContext(START, log, 4), markers, config.loadBufferSize(),
                new CoordinatorLoader.LoadSummary[1]).manager();

        // Then: while the markers are written, the id is busy
        assertThat(markers.last().commit()).isFalse();
        assertThat(loaded.initProducerId("t", 1_000, Optional.empty()).join().error())
                .isEqualTo(Errors.CONCURRENT_TRANSACTIONS);
        markers.last().future().complete(null);
        assertThat(loaded.transaction("t").orElseThrow().state()).isEqualTo(TransactionState.COMPLETE_ABORT);
    }

    private static InitResult begin(TransactionManager manager, String id, TopicPartition... partitions) {
        InitResult producer = manager.initProducerId(id, 60_000, Optional.empty()).join();
        assertThat(manager.addPartitions(id, producer.producerId(), producer.producerEpoch(), Set.of(partitions))
                .join()).isEqualTo(Errors.NONE);
        return producer;
    }
}
