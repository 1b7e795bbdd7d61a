package io.cairn.broker.fetch;

/**
 * What a fetch asks of one partition (Kafka's {@code FetchRequest.PartitionData}). Immutable.
 *
 * @param fetchOffset        the first offset wanted
 * @param currentLeaderEpoch the fetcher's leader epoch, or -1 to skip the check
 * @param lastFetchedEpoch   a follower's epoch of its last fetched batch, or -1
 * @param logStartOffset     a follower's log start offset, or -1
 * @param maxBytes           the partition's byte limit ({@code partition_max_bytes})
 */
public record PartitionFetch(long fetchOffset, int currentLeaderEpoch, int lastFetchedEpoch, long logStartOffset,
                             int maxBytes) {
}
