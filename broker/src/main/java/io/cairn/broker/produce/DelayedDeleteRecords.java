package io.cairn.broker.produce;

import io.cairn.broker.purgatory.DelayedOperation;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The wait of one DeleteRecords request (Kafka's {@code DelayedDeleteRecords}), a {@link DelayedOperation} in the
 * broker's {@link PartitionPurgatory} under {@link PartitionPurgatory.WakeOn#LOW_WATERMARK}: each partition deleted
 * on the leader waits until its low watermark reached the requested offset (NONE with that low watermark); one whose
 * leadership was lost gets NOT_LEADER_OR_FOLLOWER, one that left this broker (its topic deleted) meanwhile
 * UNKNOWN_TOPIC_OR_PARTITION (both with low watermark -1); one still waiting at {@code timeout_ms}
 * REQUEST_TIMED_OUT with the low watermark it had.
 *
 * <p>Thread-safety: the statuses are read and written under the operation's lock ({@link DelayedOperation}); the
 * response is built once, by whoever completes the operation.
 *
 * @param <S> the response type
 */
final class DelayedDeleteRecords<S> extends DelayedOperation {

    private final List<Status> waiting;
    private final Supplier<S> response;
    private final CompletableFuture<S> result = new CompletableFuture<>();

    private DelayedDeleteRecords(long timeoutMs, List<Status> waiting, Supplier<S> response) {
        super(timeoutMs);
        this.waiting = waiting;
        this.response = response;
    }

    /**
     * Answers at once when no partition of {@code statuses} needs to wait (every one failed or its low watermark
     * already reached its offset), else waits in {@code purgatory}; {@code response} reads the statuses at the end.
     */
    static <S> CompletableFuture<S> await(List<Status> statuses, long timeoutMs, PartitionPurgatory purgatory,
                                          Supplier<S> response) {
        List<Status> waiting = new ArrayList<>();
        List<TopicPartition> keys = new ArrayList<>();
        for (Status s : statuses) {
            if (s.pending) {
                waiting.add(s);
                keys.add(s.topicPartition);
            }
        }
        DelayedDeleteRecords<S> wait = new DelayedDeleteRecords<>(timeoutMs, waiting, response);
        if (waiting.isEmpty()) {
            wait.respond();
        } else {
            purgatory.tryCompleteElseWatch(wait, keys, PartitionPurgatory.WakeOn.LOW_WATERMARK);
        }
        return wait.result;
    }

    @Override
    protected boolean tryComplete() {
        boolean all = true;
        for (Status s : waiting) {
            if (s.pending && !check(s)) {
                all = false;
            }
        }
        return all && forceComplete();
    }

    /** Settles {@code s} when its partition reached the offset or cannot any more; true when it is settled. */
    private boolean check(Status s) {
        if (s.partition.isRemoved()) {
            s.settle(Errors.UNKNOWN_TOPIC_OR_PARTITION, DeleteRecordsService.INVALID_LOW_WATERMARK);
            return true;
        }
        long low;
        try {
            low = s.partition.lowWatermarkIfLeader();
        } catch (NotLeaderOrFollowerException e) {
            s.settle(Errors.NOT_LEADER_OR_FOLLOWER, DeleteRecordsService.INVALID_LOW_WATERMARK);
            return true;
        }
        if (low < s.requestedOffset) {
            return false;
        }
        s.settle(Errors.NONE, low);
        return true;
    }

    @Override
    protected void onComplete() {
        respond();
    }

    @Override
    protected void onExpiration() {
        // The partitions still pending kept REQUEST_TIMED_OUT and their first low watermark.
    }

    private void respond() {
        try {
            result.complete(response.get());
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
    }

    /** One partition of the request: its outcome so far. Guarded by the operation's lock once it is watched. */
    static final class Status {
        private final TopicPartition topicPartition;
        /** The partition deleted on, null when the deletion failed. */
        private final Partition partition;
        private final long requestedOffset;
        private long lowWatermark;
        private Errors error;
        private boolean pending;

        private Status(TopicPartition tp, Partition partition, long requestedOffset, long lowWatermark, Errors error,
                       boolean pending) {
            this.topicPartition = tp;
            this.partition = partition;
            this.requestedOffset = requestedOffset;
            this.lowWatermark = lowWatermark;
            this.error = error;
            this.pending = pending;
        }

        /** Deleted on the leader: done when the low watermark already reached the offset, else it waits. */
        static Status deleted(Partition partition, long requestedOffset, long lowWatermark) {
            boolean reached = lowWatermark >= requestedOffset;
            return new Status(partition.topicPartition(), partition, requestedOffset, lowWatermark,
                    reached ? Errors.NONE : Errors.REQUEST_TIMED_OUT, !reached);
        }

        /** Failed on the leader (low watermark -1). */
        static Status failed(TopicPartition tp, Errors error) {
            return new Status(tp, null, -1L, DeleteRecordsService.INVALID_LOW_WATERMARK, error, false);
        }

        void settle(Errors outcome, long low) {
            this.error = outcome;
            this.lowWatermark = low;
            this.pending = false;
        }

        TopicPartition topicPartition() {
            return topicPartition;
        }

        long lowWatermark() {
            return lowWatermark;
        }

        Errors error() {
            return error;
        }
    }
}
