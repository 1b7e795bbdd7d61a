package io.cairn.broker.share;

import java.util.List;

/**
 * The persisted state of one share-partition as the share coordinator holds it (Kafka's {@code ShareGroupOffset}):
 * the state and leader epochs, the start offset and the state batches beyond it, with the epoch of the snapshot it
 * descends from and the times its snapshot was created and written. Immutable.
 *
 * @param snapshotEpoch   the epoch of the last snapshot (0 for the first, one more for each snapshot after it)
 * @param stateEpoch      the state epoch: the group coordinator raises it when it (re)initializes the state
 * @param leaderEpoch     the leader epoch of the share-partition's last writer
 * @param startOffset     the share-partition start offset
 * @param stateBatches    the states of the offsets from the start offset on, non-overlapping and in offset order
 * @param createTimestamp when the snapshot was created
 * @param writeTimestamp  when the snapshot was written
 */
public record ShareState(int snapshotEpoch, int stateEpoch, int leaderEpoch, long startOffset,
                         List<StateBatch> stateBatches, long createTimestamp, long writeTimestamp) {

    public ShareState {
        stateBatches = List.copyOf(stateBatches);
    }
}
