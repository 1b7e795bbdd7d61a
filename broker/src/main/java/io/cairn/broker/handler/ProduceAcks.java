package io.cairn.broker.handler;

import io.cairn.isr.Partition;
import io.cairn.wire.error.Errors;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The acks=all wait of one produce request (Kafka's {@code DelayedProduce}): completes once the high watermark of
 * every appended partition covers its append, or when the request's {@code timeoutMs} expires, whichever comes
 * first. A partition reached in time answers NONE (NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below
 * {@code min.insync.replicas} meanwhile), one whose leadership was lost NOT_LEADER_OR_FOLLOWER, one still waiting
 * at the deadline REQUEST_TIMED_OUT; the offsets of the append stay in the response, as in Kafka.
 *
 * <p>Thread-safety: thread-safe. High watermark completions and the timer race; both go through this object's
 * monitor, and the response is built exactly once.
 *
 * @param <S> the response type
 */
final class ProduceAcks<S> {

    private final List<ProducePartition> waiting;
    private final Supplier<S> response;
    private final CompletableFuture<S> result = new CompletableFuture<>();
    /** Guarded by this. */
    private int remaining;
    /** Guarded by this. */
    private boolean done;
    /** Guarded by this. */
    private ScheduledFuture<?> timer;

    private ProduceAcks(List<ProducePartition> waiting, Supplier<S> response) {
        this.waiting = waiting;
        this.response = response;
        this.remaining = waiting.size();
    }

    /**
     * Waits for the pending (appended) partitions of {@code partitions}; {@code response} builds the response once
     * every partition has its outcome.
     */
    static <S> CompletableFuture<S> await(List<ProducePartition> partitions, long timeoutMs,
                                          ScheduledExecutorService timers, Supplier<S> response) {
        List<ProducePartition> waiting = new ArrayList<>();
        for (ProducePartition p : partitions) {
            if (p.pending()) {
                waiting.add(p);
            }
        }
        ProduceAcks<S> acks = new ProduceAcks<>(waiting, response);
        if (waiting.isEmpty()) {
            acks.respond();
            return acks.result;
        }
        for (ProducePartition p : waiting) {
            p.partition().awaitHighWatermark(p.requiredOffset())
                    .whenComplete((ignored, error) -> acks.reached(p, error));
        }
        acks.startTimer(Math.max(0L, timeoutMs), timers);
        return acks.result;
    }

    private void startTimer(long timeoutMs, ScheduledExecutorService timers) {
        synchronized (this) {
            if (done) {
                return;
            }
        }
        ScheduledFuture<?> scheduled = timers.schedule(this::expire, timeoutMs, TimeUnit.MILLISECONDS);
        synchronized (this) {
            if (done) {
                scheduled.cancel(false);
            } else {
                timer = scheduled;
            }
        }
    }

    private void reached(ProducePartition p, Throwable error) {
        synchronized (this) {
            if (done || !p.pending()) {
                return;
            }
            p.completeAcks(error != null ? Errors.forException(error) : afterAppend(p.partition()));
            remaining--;
            if (remaining > 0) {
                return;
            }
            finish();
        }
        respond();
    }

    private static Errors afterAppend(Partition partition) {
        return partition.registration().isr().size() < partition.minInsyncReplicas()
                ? Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND : Errors.NONE;
    }

    private void expire() {
        synchronized (this) {
            if (done) {
                return;
            }
            for (ProducePartition p : waiting) {
                if (p.pending()) {
                    p.completeAcks(Errors.REQUEST_TIMED_OUT);
                }
            }
            finish();
        }
        respond();
    }

    /** Called with the monitor held: no partition changes after this. */
    private void finish() {
        done = true;
        if (timer != null) {
            timer.cancel(false);
        }
    }

    private void respond() {
        try {
            result.complete(response.get());
        } catch (RuntimeException e) {
            result.completeExceptionally(e);
        }
    }
}
