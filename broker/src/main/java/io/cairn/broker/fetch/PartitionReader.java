package io.cairn.broker.fetch;

import io.cairn.broker.net.FileSliceByteBuf;
import io.cairn.isr.EpochEndOffset;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.LogReadResult;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogOffsetMetadata;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.message.FetchResponseData;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Reads the partitions of one fetch from the local logs (Kafka's {@code ReplicaManager.readFromLog}): in order,
 * under the response's byte budget, each partition under its own limit; until some partition returned records the
 * first batch is returned whole even above the limits (KIP-74), after that a batch that does not fit ends the
 * partition's read. A first batch cut by the limits is dropped, so a consumer never sees a partial one. Followers
 * read to the log end and report their position; a follower whose last fetched epoch diverged from this log gets
 * the diverging epoch instead of records.
 *
 * <p>Thread-safety: stateless apart from the shared, thread-safe {@link ReplicaManager}; never blocks on a lock.
 */
final class PartitionReader {

    private static final Logger LOGGER = LogManager.getLogger(PartitionReader.class);

    private final ReplicaManager replicas;

    PartitionReader(ReplicaManager replicas) {
        this.replicas = replicas;
    }

    /**
     * Reads {@code fetches} (partitions with a known topic). {@code fromPurgatory} marks the read that completes a
     * delayed fetch: a follower's position was already recorded by the first read.
     */
    List<PartitionRead> read(FetchParams params, List<Map.Entry<TopicIdPartition, PartitionFetch>> fetches,
                             boolean fromPurgatory) {
        List<PartitionRead> results = new ArrayList<>(fetches.size());
        int limitBytes = params.maxBytes();
        boolean minOneMessage = true;
        for (Map.Entry<TopicIdPartition, PartitionFetch> e : fetches) {
            PartitionRead read = readOne(params, e.getKey(), e.getValue(), limitBytes, minOneMessage, fromPurgatory);
            int size = read.recordsSize();
            if (size > 0) {
                minOneMessage = false;
            }
            limitBytes = Math.max(0, limitBytes - size);
            results.add(read);
        }
        return results;
    }

    private PartitionRead readOne(FetchParams params, TopicIdPartition tp, PartitionFetch fetch, int limitBytes,
                                  boolean minOneMessage, boolean fromPurgatory) {
        int maxBytes = Math.max(0, Math.min(fetch.maxBytes(), limitBytes));
        try {
            Partition partition = partition(tp);
            if (tp.hasTopicId() && !tp.topicId().equals(partition.topicId())) {
                return PartitionRead.error(tp, Errors.INCONSISTENT_TOPIC_ID, fetch.fetchOffset());
            }
            partition.checkLeaderEpoch(fetch.currentLeaderEpoch(), true);
            if (params.isFromFollower() && !partition.registration().replicas().contains(params.replicaId())) {
                throw new NotLeaderOrFollowerException("Leader " + partition.leaderId() + " failed to record "
                    + "follower " + params.replicaId() + "'s position " + fetch.fetchOffset() + " since the replica "
                    + "is not recognized to be one of the assigned replicas of " + tp);
            }
            if (fetch.lastFetchedEpoch() >= 0) {
                PartitionRead diverged = divergence(partition, tp, fetch);
                if (diverged != null) {
                    return diverged;
                }
            }
            PartitionRead read;
            try (LogReadResult result = partition.read(fetch.fetchOffset(), fetch.currentLeaderEpoch(), maxBytes,
                    params.isolation(), minOneMessage)) {
                read = toRead(tp, params.isolation(), result);
            }
            if (params.isFromFollower() && !fromPurgatory) {
                partition.updateFollowerEndOffset(params.replicaId(), fetch.fetchOffset());
            }
            return read;
        } catch (ApiException e) {
            return PartitionRead.error(tp, Errors.forException(e), fetch.fetchOffset());
        } catch (RuntimeException e) {
            LOGGER.error("Error processing fetch with max size {} from {} on partition {}: {}", maxBytes,
                params.isFromFollower() ? "replica " + params.replicaId() : "consumer", tp, fetch, e);
            return PartitionRead.error(tp, Errors.forException(e), fetch.fetchOffset());
        }
    }

    private Partition partition(TopicIdPartition tp) {
        return replicas.partition(tp.topicPartition()).orElseGet(() -> replicas.leaderPartition(tp.topicPartition()));
    }

    /** The read result; it takes over the slice (closed here when the first batch was cut, as Kafka drops it). */
    private static PartitionRead toRead(TopicIdPartition tp, FetchIsolation isolation, LogReadResult result) {
        FetchDataInfo info = result.info();
        ByteBuf records;
        if (info.firstEntryIncomplete()) {
            info.records().close();
            records = Unpooled.EMPTY_BUFFER;
        } else {
            records = FileSliceByteBuf.of(info.records());
        }
        return new PartitionRead(tp, Errors.NONE, records, result.highWatermark(), result.lastStableOffset(),
            result.logStartOffset(), isolation == FetchIsolation.TXN_COMMITTED ? info.abortedTransactions() : null,
            null, info.fetchOffsetMetadata());
    }

    /**
     * Kafka's divergence check of a follower's {@code lastFetchedEpoch}: null when the follower's log agrees with
     * ours up to its fetch offset, else a read carrying the epoch and end offset it must truncate to.
     */
    private static PartitionRead divergence(Partition partition, TopicIdPartition tp, PartitionFetch fetch) {
        long hw = partition.highWatermark();
        long lso = partition.lastStableOffset();
        long logStart = partition.logStartOffset();
        EpochEndOffset end = partition.lastOffsetForLeaderEpoch(fetch.currentLeaderEpoch(),
            fetch.lastFetchedEpoch(), false);
        if (end.endOffset() == EpochEndOffset.UNDEFINED_EPOCH_OFFSET
                || end.leaderEpoch() == EpochEndOffset.UNDEFINED_EPOCH) {
            throw new OffsetOutOfRangeException("Could not determine the end offset of the last fetched epoch "
                + fetch.lastFetchedEpoch() + " from the request");
        }
        if (fetch.fetchOffset() < logStart) {
            throw new OffsetOutOfRangeException("Received request for offset " + fetch.fetchOffset() + " for "
                + "partition " + tp + ", but we only have log segments starting from offset: " + logStart);
        }
        if (end.leaderEpoch() < fetch.lastFetchedEpoch() || end.endOffset() < fetch.fetchOffset()) {
            FetchResponseData.EpochEndOffset diverging = new FetchResponseData.EpochEndOffset()
                .setEpoch(end.leaderEpoch()).setEndOffset(end.endOffset());
            return new PartitionRead(tp, Errors.NONE, Unpooled.EMPTY_BUFFER, hw, lso, logStart, null, diverging,
                LogOffsetMetadata.offsetOnly(fetch.fetchOffset()));
        }
        return null;
    }
}
