package io.cairn.broker.fetch;

import io.cairn.broker.net.FileSliceByteBuf;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.LogReadRequest;
import io.cairn.isr.LogReadResult;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.isr.ReplicationQuota;
import io.cairn.log.FetchDataInfo;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchResponseData;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Reads the partitions of one fetch from the local logs (Kafka's {@code ReplicaManager.readFromLog}): in order,
 * under the response's byte budget, each partition under its own limit; until some partition returned records the
 * first batch is returned whole even above the limits (KIP-74), after that a batch that does not fit ends the
 * partition's read. A first batch cut by the limits is dropped, so a consumer never sees a partial one. Each
 * partition's read is {@link Partition#fetchRecords}, which owns the follower's side: the replica check, the
 * divergence check of its last fetched epoch (the diverging epoch then replaces records) and the record of its
 * position. A leader that finds a preferred read replica for a consumer (KIP-392,
 * {@link ReplicaManager#findPreferredReadReplica}) answers with it and the leader's offsets instead of records; a
 * consumer's v11+ fetch may be read from a follower replica.
 *
 * <p>Thread-safety: stateless apart from the shared, thread-safe {@link ReplicaManager}; never blocks on a lock.
 */
public final class PartitionReader {

    private static final Logger LOGGER = LogManager.getLogger(PartitionReader.class);

    private final ReplicaManager replicas;
    private final ReplicationQuota leaderQuota;

    public PartitionReader(ReplicaManager replicas) {
        this.replicas = replicas;
        this.leaderQuota = replicas.leaderQuota();
    }

    /**
     * Kafka's {@code shouldLeaderThrottle} (KIP-73): a follower out of the ISR fetching a throttled partition gets no
     * records while the leader's replication quota is exceeded.
     */
    boolean shouldThrottle(FetchParams params, Partition partition) {
        // the throttled set is a map read; the ISR list is looked at only for throttled partitions
        return params.isFromFollower() && leaderQuota.isThrottled(partition.topicPartition())
            && !partition.inSyncReplicaIds().contains(params.replicaId()) && leaderQuota.isQuotaExceeded();
    }

    /** Counts the records a follower's fetch returns for throttled partitions against the leader's quota. */
    void recordThrottled(FetchParams params, List<PartitionRead> reads) {
        if (!params.isFromFollower()) {
            return;
        }
        long bytes = 0;
        for (PartitionRead read : reads) {
            if (leaderQuota.isThrottled(read.tp().topicPartition())) {
                bytes += read.recordsSize();
            }
        }
        if (bytes > 0) {
            leaderQuota.record(bytes);
        }
    }

    /**
     * Reads {@code fetches} (partitions with a known topic). {@code fromPurgatory} marks the read that completes a
     * delayed fetch: a follower's position was already recorded by the first read.
     */
    public List<PartitionRead> read(FetchParams params, List<Map.Entry<TopicIdPartition, PartitionFetch>> fetches,
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
            Optional<Integer> preferred = params.clientMetadata() == null ? Optional.empty()
                : replicas.findPreferredReadReplica(partition, params.clientMetadata(), params.replicaId(),
                    fetch.fetchOffset());
            if (preferred.isPresent()) {
                partition.checkReadable(fetch.currentLeaderEpoch(), false);
                return PartitionRead.preferredReplica(tp, preferred.get(), partition.highWatermark(),
                    partition.lastStableOffset(), partition.logStartOffset(), fetch.fetchOffset());
            }
            LogReadRequest request = new LogReadRequest(params.replicaId(), fetch.fetchOffset(),
                fetch.currentLeaderEpoch(), fetch.lastFetchedEpoch(), fetch.logStartOffset(), params.replicaEpoch(),
                params.fetchOnlyLeader());
            try (LogReadResult result = partition.fetchRecords(request, params.isolation(), maxBytes, minOneMessage,
                    !fromPurgatory)) {
                return toRead(tp, params.isolation(), result, shouldThrottle(params, partition));
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

    /**
     * The read result; it takes over the slice (closed here when the first batch was cut, as Kafka drops it, or
     * when the follower is throttled: the read still recorded its position).
     */
    private static PartitionRead toRead(TopicIdPartition tp, FetchIsolation isolation, LogReadResult result,
                                        boolean throttled) {
        FetchDataInfo info = result.info();
        if (result.divergingEpoch() != null) {
            FetchResponseData.EpochEndOffset diverging = new FetchResponseData.EpochEndOffset()
                .setEpoch(result.divergingEpoch().leaderEpoch()).setEndOffset(result.divergingEpoch().endOffset());
            return new PartitionRead(tp, Errors.NONE, Unpooled.EMPTY_BUFFER, result.highWatermark(),
                result.lastStableOffset(), result.logStartOffset(), null, diverging, info.fetchOffsetMetadata(), -1);
        }
        ByteBuf records;
        if (info.firstEntryIncomplete() || throttled) {
            info.records().close();
            records = Unpooled.EMPTY_BUFFER;
        } else {
            records = FileSliceByteBuf.of(info.records());
        }
        return new PartitionRead(tp, Errors.NONE, records, result.highWatermark(), result.lastStableOffset(),
            result.logStartOffset(), isolation == FetchIsolation.TXN_COMMITTED ? info.abortedTransactions() : null,
            null, info.fetchOffsetMetadata(), -1);
    }
}
