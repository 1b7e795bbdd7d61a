package io.cairn.isr;

/**
 * What one fetcher asks of one partition (Kafka's {@code FetchRequest.PartitionData} with the fetch's replica id
 * and broker epoch). Immutable.
 *
 * @param replicaId          the fetching follower's broker id, or a negative id for a consumer
 * @param fetchOffset        the first offset wanted
 * @param currentLeaderEpoch the fetcher's leader epoch, or {@link Partition#NO_EPOCH} to skip the check
 * @param lastFetchedEpoch   a follower's epoch of its last fetched batch, or -1
 * @param logStartOffset     a follower's log start offset, or -1
 * @param replicaEpoch       a follower's broker epoch (Fetch v15+ {@code ReplicaState.ReplicaEpoch}), or -1
 */
public record LogReadRequest(int replicaId, long fetchOffset, int currentLeaderEpoch, int lastFetchedEpoch,
                             long logStartOffset, long replicaEpoch) {

    /** A request without a broker epoch (consumers, and followers of fetch versions before 15). */
    public LogReadRequest(int replicaId, long fetchOffset, int currentLeaderEpoch, int lastFetchedEpoch,
                          long logStartOffset) {
        this(replicaId, fetchOffset, currentLeaderEpoch, lastFetchedEpoch, logStartOffset, -1L);
    }

    /** A follower's fetch: it reads to the log end and reports its position. */
    public boolean isFromFollower() {
        return replicaId >= 0;
    }
}
