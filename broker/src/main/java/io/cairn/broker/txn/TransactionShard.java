package io.cairn.broker.txn;

import io.cairn.broker.coordinator.CoordinatorShard;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.coordinator.CoordinatorRecord;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The transaction kind's shard of the coordinator runtime: one {@code __transaction_state} partition this broker
 * leads, in one leader epoch (the coordinator epoch of its markers), holding the {@link TransactionManager} of the
 * partition's transactional ids. The runtime feeds it the partition's records while loading; the partition never
 * holds transactional batches, so producers and markers are not expected.
 *
 * <p>Thread-safety: as {@link CoordinatorShard}: called by the runtime from one thread at a time.
 */
final class TransactionShard implements CoordinatorShard<CoordinatorRecord> {

    private final TransactionManager manager;

    TransactionShard(ShardContext<CoordinatorRecord> ctx, TransactionConfig config, TransactionMarkerSender markers,
                     Supplier<CompletableFuture<Long>> producerIds, Supplier<Short> transactionVersion) {
        this.manager = new TransactionManager(ctx, ctx.leaderEpoch(), config, markers, producerIds, ctx::execute,
                transactionVersion);
    }

    TransactionManager manager() {
        return manager;
    }

    @Override
    public void replay(long offset, long producerId, short producerEpoch, CoordinatorRecord record) {
        manager.replay(TransactionLog.entry(record));
    }

    @Override
    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        // __transaction_state has no transactional batches: the coordinator writes its own records only.
    }

    @Override
    public void onLoaded() {
        manager.onLoaded();
    }

    @Override
    public void onUnloaded() {
        manager.unload();
    }
}
