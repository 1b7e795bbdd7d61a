package io.cairn.broker.produce;

import io.cairn.broker.purgatory.DelayedOperation;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The acks=all wait of one produce request (Kafka's {@code DelayedProduce}), a {@link DelayedOperation} in the
 * broker's {@link PartitionPurgatory}: it watches the high watermark of every appended partition and completes once
 * each has its outcome, or when the request's {@code timeoutMs} runs out. A partition whose high watermark covers its
 * append answers NONE (NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below {@code min.insync.replicas}
 * meanwhile), one whose leadership was lost, whose leader epoch changed since the append (even back to this broker:
 * the leader of the epoch in between may have truncated it) or that left this broker NOT_LEADER_OR_FOLLOWER, one
 * still waiting at
 * the deadline REQUEST_TIMED_OUT; the offsets of the append stay in the response, as in Kafka. Whichever way it
 * completes, the operation leaves the purgatory's watch lists and timer at once.
 *
 * <p>Thread-safety: {@link #tryComplete()} and {@link #onComplete()} run under the operation's lock (see
 * {@link DelayedOperation}), which orders every access to the partitions' outcomes.
 *
 * @param <S> the response type
 */
final class DelayedProduce<S> extends DelayedOperation {

    private final List<ProducePartition> waiting;
    private final Supplier<S> response;
    private final CompletableFuture<S> result = new CompletableFuture<>();

    private DelayedProduce(long timeoutMs, List<ProducePartition> waiting, Supplier<S> response) {
        super(timeoutMs);
        this.waiting = waiting;
        this.response = response;
    }

    /**
     * Waits in {@code purgatory} for the pending (appended) partitions of {@code partitions}; {@code response} builds
     * the response once every partition has its outcome.
     */
    static <S> CompletableFuture<S> await(List<ProducePartition> partitions, long timeoutMs,
                                          PartitionPurgatory purgatory, Supplier<S> response) {
        List<ProducePartition> waiting = new ArrayList<>();
        List<TopicPartition> keys = new ArrayList<>();
        for (ProducePartition p : partitions) {
            if (p.pending()) {
                waiting.add(p);
                keys.add(p.partition().topicPartition());
            }
        }
        DelayedProduce<S> produce = new DelayedProduce<>(timeoutMs, waiting, response);
        if (waiting.isEmpty()) {
            produce.respond();
            return produce.result;
        }
        purgatory.tryCompleteElseWatch(produce, keys, PartitionPurgatory.WakeOn.HIGH_WATERMARK);
        return produce.result;
    }

    @Override
    protected boolean tryComplete() {
        boolean all = true;
        for (ProducePartition p : waiting) {
            if (!p.pending()) {
                continue;
            }
            Optional<Errors> reached = p.partition().checkEnoughReplicasReachOffset(p.requiredOffset(),
                    p.appendLeaderEpoch());
            if (reached.isPresent()) {
                p.completeAcks(reached.get());
            } else {
                all = false;
            }
        }
        return all && forceComplete();
    }

    @Override
    protected void onComplete() {
        for (ProducePartition p : waiting) {
            if (p.pending()) {
                p.completeAcks(Errors.REQUEST_TIMED_OUT);
            }
        }
        respond();
    }

    @Override
    protected void onExpiration() {
        // onComplete answered REQUEST_TIMED_OUT for every partition still waiting.
    }

    private void respond() {
        try {
            result.complete(response.get());
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
    }
}
