package io.cairn.broker.share.partition;

import io.cairn.broker.share.SharePartitionKey;
import io.cairn.broker.share.StateBatch;
import io.cairn.wire.error.Errors;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where a share-partition leader keeps the state of its share-partitions (Kafka's {@code Persister}): the share
 * coordinator, through ReadShareGroupState and WriteShareGroupState. The futures never fail: a failure is an error.
 */
public interface StatePersister extends AutoCloseable {

    /** The persisted state of a share-partition read by its leader at {@code leaderEpoch}. */
    CompletableFuture<PersistedState> read(SharePartitionKey key, int leaderEpoch);

    /** Writes the start offset and the changed state batches of a share-partition. */
    CompletableFuture<Errors> write(SharePartitionKey key, int stateEpoch, int leaderEpoch, long startOffset,
                                    List<StateBatch> batches);

    @Override
    default void close() {
    }

    /**
     * What a read gave. Immutable.
     *
     * @param error        NONE, or why there is no state
     * @param message      the error message, or null
     * @param stateEpoch   the state epoch
     * @param startOffset  the start offset, -1 when the group coordinator left it to {@code share.auto.offset.reset}
     * @param stateBatches the states of offsets from the start offset on
     */
    record PersistedState(Errors error, String message, int stateEpoch, long startOffset,
                          List<StateBatch> stateBatches) {

        public PersistedState {
            stateBatches = List.copyOf(stateBatches);
        }

        public static PersistedState failed(Errors error, String message) {
            return new PersistedState(error, message, -1, -1L, List.of());
        }
    }
}
