package io.cairn.broker.share.partition;

import io.cairn.broker.fetch.FetchParams;
import io.cairn.broker.fetch.PartitionFetch;
import io.cairn.broker.fetch.PartitionRead;
import io.cairn.broker.fetch.PartitionReader;
import io.cairn.broker.fetch.TopicIdPartition;
import io.cairn.broker.purgatory.DelayedOperation;
import io.cairn.broker.share.partition.ShareRecordTypes.AckBatch;
import io.cairn.broker.share.partition.ShareRecordTypes.AcquiredRange;
import io.cairn.broker.share.partition.ShareRecordTypes.Acquisition;
import io.cairn.broker.share.partition.ShareRecordTypes.LogBatch;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.LogReadResult;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.index.AbortedTxn;
import io.cairn.wire.error.Errors;
import io.cairn.wire.record.ControlRecordType;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A share fetch waiting in the purgatory (Kafka's {@code DelayedShareFetch}) until one of its share-partitions has
 * records to acquire ({@code min_bytes} of them below the high watermark), or a partition moved on (leadership,
 * fencing), or {@code max_wait_ms} passed. On completion it reads each partition from its next fetch offset with
 * the {@link PartitionReader}, at most {@code max_bytes} in all, and acquires what the read returned, at most
 * {@code max_records} in all (Kafka's {@code ShareFetchUtils.processFetchResponse}: each partition in turn gets what
 * the ones before it left, whole batches for new records, so the last may take it past the limit; a partition that
 * finds nothing left acquires nothing); the records are cut after the last batch that holds an acquired record. The
 * partitions come in the order of the share session's fetch, which turns them round from one fetch to the next
 * ({@code ShareFetchService}), so the limit does not always go to the same ones.
 *
 * <p>Thread-safety: {@link #tryComplete()} runs under the operation's lock; the share-partitions are thread-safe.
 */
final class DelayedShareFetch extends DelayedOperation {

    private static final Logger LOGGER = LogManager.getLogger(DelayedShareFetch.class);
    private static final short FETCH_VERSION = 17;
    /** Kafka's AcknowledgeType.REJECT. */
    private static final byte REJECT = 3;

    private final String memberId;
    private final Map<TopicIdPartition, SharePartition> partitions;
    private final SharePartitionManager.FetchLimits limits;
    private final ReplicaManager replicas;
    private final PartitionReader reader;
    private final Consumer<Map<TopicIdPartition, ShareFetchResult>> respond;
    private final FetchIsolation isolation;

    DelayedShareFetch(String memberId, Map<TopicIdPartition, SharePartition> partitions,
                      SharePartitionManager.FetchLimits limits, ReplicaManager replicas, PartitionReader reader,
                      Consumer<Map<TopicIdPartition, ShareFetchResult>> respond) {
        this(memberId, partitions, limits, replicas, reader, FetchIsolation.HIGH_WATERMARK, respond);
    }

    /**
     * @param isolation the share group's {@code share.isolation.level}: HIGH_WATERMARK (read_uncommitted) or
     *                  TXN_COMMITTED (read_committed: reads end at the last stable offset, and the records of
     *                  aborted transactions are archived instead of delivered)
     */
    DelayedShareFetch(String memberId, Map<TopicIdPartition, SharePartition> partitions,
                      SharePartitionManager.FetchLimits limits, ReplicaManager replicas, PartitionReader reader,
                      FetchIsolation isolation, Consumer<Map<TopicIdPartition, ShareFetchResult>> respond) {
        super(limits.maxWaitMs());
        this.isolation = isolation;
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
            long fetchableEnd = partition.fetchableEnd(isolation);
            if (!sp.canAcquire(fetchableEnd)) {
                continue;
            }
            if (limits.minBytes() <= 1) {
                return forceComplete();
            }
            try (LogReadResult read = partition.read(sp.nextFetchOffset(), sp.leaderEpoch(), limits.maxBytes(),
                    isolation, true, true)) {
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
        long recordsLeft = limits.maxRecords();
        for (Map.Entry<TopicIdPartition, SharePartition> e : partitions.entrySet()) {
            ShareFetchResult result;
            try {
                result = (bytesLeft == 0 && !results.isEmpty()) || recordsLeft <= 0 ? ShareFetchResult.EMPTY
                    : readAndAcquire(e.getKey(), e.getValue(), bytesLeft, (int) recordsLeft);
            } catch (RuntimeException ex) {
                LOGGER.error("Share fetch of {} failed", e.getKey(), ex);
                result = ShareFetchResult.error(Errors.forException(ex));
            }
            bytesLeft = Math.max(0, bytesLeft - result.records().readableBytes());
            recordsLeft -= acquiredCount(result);
            results.put(e.getKey(), result);
        }
        respond.accept(results);
    }

    /** The offsets {@code result} acquired (each range's, gaps of a compacted log included, as Kafka counts them). */
    private static long acquiredCount(ShareFetchResult result) {
        long count = 0;
        for (AcquiredRange range : result.acquired()) {
            count += range.lastOffset() - range.firstOffset() + 1;
        }
        return count;
    }

    private ShareFetchResult readAndAcquire(TopicIdPartition tp, SharePartition sp, int maxBytes, int maxRecords) {
        for (int attempt = 0; attempt < 2; attempt++) {
            long offset = sp.nextFetchOffset();
            if (offset < 0) {
                return sp.isFenced() ? ShareFetchResult.error(Errors.NOT_LEADER_OR_FOLLOWER) : ShareFetchResult.EMPTY;
            }
            FetchParams params = new FetchParams(FETCH_VERSION, -1, 0, 1, maxBytes, isolation, -1L, null);
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
            return acquire(sp, read, maxRecords);
        }
        return ShareFetchResult.EMPTY;
    }

    private ShareFetchResult acquire(SharePartition sp, PartitionRead read, int maxRecords) {
        ByteBuf records = read.records();
        List<LogBatch> batches = new ArrayList<>();
        int position = 0;
        for (RecordBatch batch : RecordBatches.of(records.slice())) {
            position += batch.sizeInBytes();
            batches.add(new LogBatch(batch.baseOffset(), batch.lastOffset(), position));
        }
        Acquisition acquisition = sp.acquire(memberId, maxRecords, batches);
        if (acquisition.isEmpty()) {
            read.release();
            return ShareFetchResult.EMPTY;
        }
        if (read.abortedTransactions() != null && !read.abortedTransactions().isEmpty()) {
            List<AcquiredRange> delivered = archiveAborted(sp, records, read.abortedTransactions(),
                acquisition.ranges());
            acquisition = new Acquisition(delivered, acquisition.bytes());
        }
        ByteBuf kept = records;
        if (acquisition.bytes() < records.readableBytes()) {
            kept = records.retainedSlice(records.readerIndex(), acquisition.bytes());
            read.release();
        }
        return new ShareFetchResult(Errors.NONE, kept, acquisition.ranges());
    }

    /**
     * Kafka's {@code SharePartition.filterAbortedTransactionalAcquiredRecords} for read_committed: the batches of
     * transactions aborted in the read (a producer is aborted from its aborted transaction's first offset until its
     * abort marker) are archived (rejected for the member, so written as ARCHIVED and never delivered); the
     * acquired ranges left are what the member gets.
     */
    private List<AcquiredRange> archiveAborted(SharePartition sp, ByteBuf records, List<AbortedTxn> abortedTxns,
                                               List<AcquiredRange> acquired) {
        PriorityQueue<AbortedTxn> pending = new PriorityQueue<>(Comparator.comparingLong(AbortedTxn::firstOffset));
        pending.addAll(abortedTxns);
        Set<Long> abortedProducers = new HashSet<>();
        List<long[]> aborted = new ArrayList<>();
        for (RecordBatch batch : RecordBatches.of(records.slice())) {
            if (!batch.hasProducerId()) {
                continue;
            }
            while (!pending.isEmpty() && pending.peek().firstOffset() <= batch.lastOffset()) {
                abortedProducers.add(pending.poll().producerId());
            }
            if (batch.isControlBatch()) {
                if (isAbortMarker(batch)) {
                    abortedProducers.remove(batch.producerId());
                }
            } else if (batch.isTransactional() && abortedProducers.contains(batch.producerId())) {
                aborted.add(new long[] {batch.baseOffset(), batch.lastOffset()});
            }
        }
        if (aborted.isEmpty()) {
            return acquired;
        }
        List<AcquiredRange> kept = new ArrayList<>();
        List<AckBatch> rejects = new ArrayList<>();
        for (AcquiredRange range : acquired) {
            long next = range.firstOffset();
            for (long[] batch : aborted) {
                long first = Math.max(batch[0], range.firstOffset());
                long last = Math.min(batch[1], range.lastOffset());
                if (first > last) {
                    continue;
                }
                if (first > next) {
                    kept.add(new AcquiredRange(next, first - 1, range.deliveryCount()));
                }
                rejects.add(new AckBatch(first, last, new byte[] {REJECT}));
                next = last + 1;
            }
            if (next <= range.lastOffset()) {
                kept.add(new AcquiredRange(next, range.lastOffset(), range.deliveryCount()));
            }
        }
        if (!rejects.isEmpty()) {
            sp.acknowledge(memberId, rejects).whenComplete((error, failure) -> {
                if (failure != null || error != Errors.NONE) {
                    LOGGER.warn("Archiving the aborted records {} of {} failed: {}", rejects, sp.key(),
                        failure != null ? failure : error);
                }
            });
        }
        return kept;
    }

    private static boolean isAbortMarker(RecordBatch batch) {
        List<Record> control = batch.records();
        return !control.isEmpty() && ControlRecordType.parse(control.get(0).key()) == ControlRecordType.ABORT;
    }

    @Override
    protected void onExpiration() {
        // onComplete answered with what there is.
    }
}
