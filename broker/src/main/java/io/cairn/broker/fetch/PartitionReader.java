package io.cairn.broker.fetch;

import io.cairn.broker.net.FileSliceByteBuf;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.LogReadRequest;
import io.cairn.isr.LogReadResult;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.FetchDataInfo;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
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
 * partition's read. A first batch cut by the limits is dropped, so a consumer never sees a partial one. Each
 * partition's read is {@link Partition#fetchRecords}, which owns the follower's side: the replica check, the
 * divergence check of its last fetched epoch (the diverging epoch then replaces records) and the record of its
 * position.
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
            LogReadRequest request = new LogReadRequest(params.replicaId(), fetch.fetchOffset(),
                fetch.currentLeaderEpoch(), fetch.lastFetchedEpoch(), fetch.logStartOffset(), params.replicaEpoch());
            try (LogReadResult result = partition.fetchRecords(request, params.isolation(), maxBytes, minOneMessage,
                    !fromPurgatory)) {
                return toRead(tp, params.isolation(), result);
            }
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
        if (result.divergingEpoch() != null) {
            FetchResponseData.EpochEndOffset diverging = new FetchResponseData.EpochEndOffset()
                .setEpoch(result.divergingEpoch().leaderEpoch()).setEndOffset(result.divergingEpoch().endOffset());
            return new PartitionRead(tp, Errors.NONE, Unpooled.EMPTY_BUFFER, result.highWatermark(),
                result.lastStableOffset(), result.logStartOffset(), null, diverging, info.fetchOffsetMetadata());
        }
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
}
