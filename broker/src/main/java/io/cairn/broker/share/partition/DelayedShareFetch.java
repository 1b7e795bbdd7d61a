package io.cairn.broker.share.partition;

import io.cairn.broker.fetch.FetchParams;
import io.cairn.broker.fetch.PartitionFetch;
import io.cairn.broker.fetch.PartitionRead;
import io.cairn.broker.fetch.PartitionReader;
import io.cairn.broker.fetch.TopicIdPartition;
import io.cairn.broker.purgatory.DelayedOperation;
import io.cairn.broker.share.partition.ShareRecordTypes.Acquisition;
import io.cairn.broker.share.partition.ShareRecordTypes.LogBatch;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.LogReadResult;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.wire.error.Errors;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A share fetch waiting in the purgatory (Kafka's {@code DelayedShareFetch}) until one of its share-partitions has
 * records to acquire ({@code min_bytes} of them below the high watermark), or a partition moved on (leadership,
 * fencing), or {@code max_wait_ms} passed. On completion it reads each partition from its next fetch offset with
 * the {@link PartitionReader}, at most {@code max_bytes} in all, and acquires what the read returned, at most
 * {@code max_records} per partition (whole batches for new records); the records are cut after the last batch that
 * holds an acquired record.
 *
 * <p>Thread-safety: {@link #tryComplete()} runs under the operation's lock; the share-partitions are thread-safe.
 */
final class DelayedShareFetch extends DelayedOperation {

    private static final Logger LOGGER = LogManager.getLogger(DelayedShareFetch.class);
    private static final short FETCH_VERSION = 17;

    private final String memberId;
    private final Map<TopicIdPartition, SharePartition> partitions;
    private final SharePartitionManager.FetchLimits limits;
    private final ReplicaManager replicas;
    private final PartitionReader reader;
    private final Consumer<Map<TopicIdPartition, ShareFetchResult>> respond;

    DelayedShareFetch(String memberId, Map<TopicIdPartition, SharePartition> partitions,
                      SharePartitionManager.FetchLimits limits, ReplicaManager replicas, PartitionReader reader,
                      Consumer<Map<TopicIdPartition, ShareFetchResult>> respond) {
        super(limits.maxWaitMs());
        this.memberId = memberId;
        this.partitions = partitions;
        this.limits = limits;
        this.replicas = replicas;
        this.reader = reader;
        this.respond = respond;
    }

    @Override
    protected boolean tryComplete() {
        long bytes = 0;
        for (Map.Entry<TopicIdPartition, SharePartition> e : partitions.entrySet()) {
            SharePartition sp = e.getValue();
            Partition partition = replicas.partition(e.getKey().topicPartition()).orElse(null);
            if (partition == null || !partition.isLeader() || partition.leaderEpoch() != sp.leaderEpoch()
                    || sp.isFenced()) {
                return forceComplete();
            }
            long highWatermark = partition.highWatermark();
            if (!sp.canAcquire(highWatermark)) {
                continue;
            }
            if (limits.minBytes() <= 1) {
                return forceComplete();
            }
            try (LogReadResult read = partition.read(sp.nextFetchOffset(), sp.leaderEpoch(), limits.maxBytes(),
                    FetchIsolation.HIGH_WATERMARK, true, true)) {
                bytes += read.info().records().length();
            } catch (RuntimeException ex) {
                return forceComplete();
            }
            if (bytes >= limits.minBytes()) {
                return forceComplete();
            }
        }
        return false;
    }

    @Override
    protected void onComplete() {
        Map<TopicIdPartition, ShareFetchResult> results = new LinkedHashMap<>();
        int bytesLeft = Math.max(0, limits.maxBytes());
        for (Map.Entry<TopicIdPartition, SharePartition> e : partitions.entrySet()) {
            ShareFetchResult result;
            try {
                result = bytesLeft == 0 && !results.isEmpty() ? ShareFetchResult.EMPTY
                    : readAndAcquire(e.getKey(), e.getValue(), bytesLeft);
            } catch (RuntimeException ex) {
                LOGGER.error("Share fetch of {} failed", e.getKey(), ex);
                result = ShareFetchResult.error(Errors.forException(ex));
            }
            bytesLeft = Math.max(0, bytesLeft - result.records().readableBytes());
            results.put(e.getKey(), result);
        }
        respond.accept(results);
    }

    private ShareFetchResult readAndAcquire(TopicIdPartition tp, SharePartition sp, int maxBytes) {
        for (int attempt = 0; attempt < 2; attempt++) {
            long offset = sp.nextFetchOffset();
            if (offset < 0) {
                return sp.isFenced() ? ShareFetchResult.error(Errors.NOT_LEADER_OR_FOLLOWER) : ShareFetchResult.EMPTY;
            }
            FetchParams params = new FetchParams(FETCH_VERSION, -1, 0, 1, maxBytes, FetchIsolation.HIGH_WATERMARK,
                -1L, null);
            PartitionRead read = reader.read(params, List.of(Map.entry(tp,
                new PartitionFetch(offset, sp.leaderEpoch(), -1, -1L, maxBytes))), false).get(0);
            if (read.error() == Errors.OFFSET_OUT_OF_RANGE) {
                Partition partition = replicas.partition(tp.topicPartition()).orElse(null);
                if (partition != null && partition.logStartOffset() > offset) {
                    sp.moveStartTo(partition.logStartOffset());
                    continue;
                }
                return ShareFetchResult.EMPTY;
            }
            if (read.error() != Errors.NONE) {
                if (read.error() == Errors.NOT_LEADER_OR_FOLLOWER || read.error() == Errors.FENCED_LEADER_EPOCH) {
                    sp.fence();
                }
                read.release();
                return ShareFetchResult.error(read.error());
            }
            return acquire(sp, read);
        }
        return ShareFetchResult.EMPTY;
    }

    private ShareFetchResult acquire(SharePartition sp, PartitionRead read) {
        ByteBuf records = read.records();
        List<LogBatch> batches = new ArrayList<>();
        int position = 0;
        for (RecordBatch batch : RecordBatches.of(records.slice())) {
            position += batch.sizeInBytes();
            batches.add(new LogBatch(batch.baseOffset(), batch.lastOffset(), position));
        }
        Acquisition acquisition = sp.acquire(memberId, Math.max(1, limits.maxRecords()), batches);
        if (acquisition.isEmpty()) {
            read.release();
            return ShareFetchResult.EMPTY;
        }
        ByteBuf kept = records;
        if (acquisition.bytes() < records.readableBytes()) {
            kept = records.retainedSlice(records.readerIndex(), acquisition.bytes());
            read.release();
        }
        return new ShareFetchResult(Errors.NONE, kept, acquisition.ranges());
    }

    @Override
    protected void onExpiration() {
        // onComplete answered with what there is.
    }
}
