package io.cairn.broker.fetch;

import io.cairn.broker.purgatory.DelayedOperation;
import io.cairn.isr.LogReadResult;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.LogOffsetMetadata;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A fetch waiting in the purgatory for {@code min_bytes} or {@code max_wait_ms} (Kafka's {@code DelayedFetch}). It
 * completes early when a partition it reads moved on (the epoch changed, the partition went away, this broker stopped
 * leading it when only the leader may answer, the log was truncated below the fetch offset or rolled past it, a
 * follower's epoch diverged) or when the bytes available below each partition's visible end reach {@code min_bytes};
 * on completion it reads again and answers. A consumer's fetch served by a follower replica (KIP-392) waits for that
 * replica's high watermark, which moves as the leader's fetch responses teach it. An expired fetch reads on the
 * request-handler threads ({@link #expiryExecutor()}), not on the purgatory's timer thread.
 *
 * <p>Thread-safety: {@link #tryComplete()} runs under the operation's lock (see {@link DelayedOperation}); the
 * cached fetch positions are only touched there.
 */
final class DelayedFetch extends DelayedOperation {

    private static final Logger LOGGER = LogManager.getLogger(DelayedFetch.class);

    private final FetchParams params;
    private final List<Map.Entry<TopicIdPartition, PartitionFetch>> fetches;
    /** The position of each fetch offset as the first read found it (offset-only when unknown). */
    private final LogOffsetMetadata[] positions;
    private final ReplicaManager replicas;
    private final PartitionReader reader;
    private final BiConsumer<List<PartitionRead>, Throwable> respond;
    /** Where an expired fetch reads and answers (the request-handler threads); null: the timer thread. */
    private final Executor readExecutor;

    DelayedFetch(FetchParams params, List<Map.Entry<TopicIdPartition, PartitionFetch>> fetches,
                 List<PartitionRead> firstRead, ReplicaManager replicas, PartitionReader reader,
                 Executor readExecutor, BiConsumer<List<PartitionRead>, Throwable> respond) {
        super(params.maxWaitMs());
        this.params = params;
        this.fetches = fetches;
        this.positions = new LogOffsetMetadata[fetches.size()];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = firstRead.get(i).fetchOffsetMetadata();
        }
        this.replicas = replicas;
        this.reader = reader;
        this.respond = respond;
        this.readExecutor = readExecutor;
    }

    @Override
    protected Executor expiryExecutor() {
        return readExecutor;
    }

    @Override
    protected boolean tryComplete() {
        long accumulated = 0;
        for (int i = 0; i < positions.length; i++) {
            TopicIdPartition tp = fetches.get(i).getKey();
            PartitionFetch fetch = fetches.get(i).getValue();
            Partition partition = replicas.partition(tp.topicPartition()).orElse(null);
            if (partition == null) {
                return forceComplete();
            }
            try {
                partition.checkReadable(fetch.currentLeaderEpoch(), params.fetchOnlyLeader());
                long end = partition.fetchableEnd(params.isolation());
                long offset = fetch.fetchOffset();
                if (offset > end) {
                    return forceComplete();
                }
                if (offset < end && !reader.shouldThrottle(params, partition)) {
                    long available = bytesAvailable(partition, i, fetch, end);
                    accumulated += Math.min(available, fetch.maxBytes());
                }
                if (partition.hasDiverged(fetch.currentLeaderEpoch(), fetch.lastFetchedEpoch(), offset)) {
                    return forceComplete();
                }
            } catch (RuntimeException e) {
                return forceComplete();
            }
            if (accumulated >= params.minBytes()) {
                return forceComplete();
            }
        }
        return false;
    }

    /**
     * The bytes between the fetch offset and the visible end, taken from positions where both are known on one
     * segment (Kafka's {@code positionDiff}); a fetch offset on an older segment counts as enough (the log rolled
     * past it); otherwise the partition is read to measure, and the position is remembered.
     */
    private long bytesAvailable(Partition partition, int i, PartitionFetch fetch, long end) {
        if (params.minBytes() <= 1) {
            return 1L;
        }
        LogOffsetMetadata position = positions[i];
        LogOffsetMetadata logEnd = partition.log().logEndOffsetMetadata();
        if (position.segmentBaseOffset() >= 0 && end == logEnd.messageOffset()) {
            if (position.segmentBaseOffset() < logEnd.segmentBaseOffset()) {
                return Long.MAX_VALUE / 2;
            }
            if (position.segmentBaseOffset() == logEnd.segmentBaseOffset()) {
                return Math.max(0, logEnd.relativePositionInSegment() - position.relativePositionInSegment());
            }
        }
        try (LogReadResult read = partition.read(fetch.fetchOffset(), fetch.currentLeaderEpoch(), fetch.maxBytes(),
                params.isolation(), true, params.fetchOnlyLeader())) {
            positions[i] = read.info().fetchOffsetMetadata();
            return read.info().records().length();
        }
    }

    @Override
    protected void onComplete() {
        List<PartitionRead> reads;
        try {
            reads = reader.read(params, fetches, true);
        } catch (RuntimeException e) {
            LOGGER.error("Completing a delayed fetch failed", e);
            respond.accept(null, e);
            return;
        }
        respond.accept(reads, null);
    }

    @Override
    protected void onExpiration() {
        // Expiry needs no extra work: onComplete has answered with what is there.
    }
}
