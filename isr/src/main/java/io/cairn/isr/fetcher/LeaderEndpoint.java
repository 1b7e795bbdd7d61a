package io.cairn.isr.fetcher;

import io.cairn.isr.EpochEndOffset;
import io.cairn.isr.client.SourceBroker;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.Map;

/**
 * How a fetcher thread talks to the leader it fetches from (Kafka's {@code LeaderEndPoint}): Fetch,
 * OffsetForLeaderEpoch and ListOffsets (earliest and latest) as a replica. {@link RemoteLeaderEndpoint} sends them over
 * the network; tests implement it over a leader {@link io.cairn.isr.Partition} in memory.
 *
 * <p>Thread-safety: used by its one fetcher thread; {@link #initiateClose} may be called from any thread and makes a
 * blocked call fail soon.
 */
public interface LeaderEndpoint extends AutoCloseable {

    /** The broker this endpoint reaches. */
    SourceBroker sourceBroker();

    /**
     * One fetch of {@code partitions} (every partition ready to fetch, in order). Returns the partitions the response
     * carries: with an incremental fetch session only those the leader had news of. Records are complete batches
     * only (a partial batch at the end of a response is dropped). Throws when the fetch as a whole failed (network,
     * a session error); the caller backs off. The records of the answer are valid until the next call.
     */
    Map<TopicPartition, FetchedPartition> fetch(Map<TopicPartition, PartitionFetchRequest> partitions);

    /**
     * OffsetForLeaderEpoch as replica: for each partition the leader's largest epoch at most the one asked for and
     * its end offset. A failure of the request is reported as that error on every partition.
     */
    Map<TopicPartition, EpochEndOffsetResult> fetchEpochEndOffsets(Map<TopicPartition, EpochRequest> partitions);

    /** ListOffsets (earliest) as replica; throws the partition's error as an {@code ApiException}. */
    OffsetAndEpoch fetchEarliestOffset(TopicPartition tp, int currentLeaderEpoch);

    /** ListOffsets (latest: the leader's log end offset) as replica; throws the partition's error. */
    OffsetAndEpoch fetchLatestOffset(TopicPartition tp, int currentLeaderEpoch);

    /** Makes a blocked or later call fail soon (the thread is stopping). */
    void initiateClose();

    @Override
    void close();

    /**
     * One partition of a fetch request (Kafka's {@code FetchRequest.PartitionData}). Immutable.
     *
     * @param topicId            the topic id
     * @param fetchOffset        the first offset wanted
     * @param logStartOffset     the follower's log start offset
     * @param maxBytes           {@code replica.fetch.max.bytes}
     * @param currentLeaderEpoch the leader epoch of the fetch
     * @param lastFetchedEpoch   the epoch of the follower's last batch, or -1
     */
    record PartitionFetchRequest(Uuid topicId, long fetchOffset, long logStartOffset, int maxBytes,
                                 int currentLeaderEpoch, int lastFetchedEpoch) {
    }

    /**
     * One partition of a fetch response. Immutable; the records buffer is a read-only view that stays valid until the
     * next {@link #fetch} of the endpoint (a remote leader reads every response into one reused buffer), so the
     * caller appends the records before it fetches again and keeps no reference to them.
     *
     * @param error          the partition's error
     * @param highWatermark  the leader's high watermark
     * @param logStartOffset the leader's log start offset
     * @param records        complete batches, possibly none
     * @param divergingEpoch when the follower's log diverged: the epoch and end offset to truncate to; else null
     */
    record FetchedPartition(Errors error, long highWatermark, long logStartOffset, ByteBuffer records,
                            EpochEndOffset divergingEpoch) {
    }

    /**
     * One partition of an OffsetForLeaderEpoch request. Immutable.
     *
     * @param currentLeaderEpoch the follower's current leader epoch (fenced when the leader's differs)
     * @param leaderEpoch        the epoch whose end offset is wanted
     */
    record EpochRequest(int currentLeaderEpoch, int leaderEpoch) {
    }

    /**
     * One partition of an OffsetForLeaderEpoch response. Immutable.
     *
     * @param error       the partition's error
     * @param leaderEpoch the leader's largest epoch at most the one asked for, or -1
     * @param endOffset   its end offset, or -1
     */
    record EpochEndOffsetResult(Errors error, int leaderEpoch, long endOffset) {
    }

    /**
     * A ListOffsets answer. Immutable.
     *
     * @param offset      the offset
     * @param leaderEpoch its leader epoch, or -1
     */
    record OffsetAndEpoch(long offset, int leaderEpoch) {
    }
}
