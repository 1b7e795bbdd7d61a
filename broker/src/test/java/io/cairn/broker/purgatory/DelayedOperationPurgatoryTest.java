package io.cairn.broker.purgatory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DelayedOperationPurgatoryTest {

    private final DelayedOperationPurgatory<String> purgatory = new DelayedOperationPurgatory<>("test");

    @AfterEach
    void tearDown() {
        purgatory.close();
    }

    @Test
    void anOperationThatCanCompleteAtOnceIsNotWatched() {
        // Given
        Op op = new Op(60_000);
        op.ready.set(true);

        // When
        boolean completed = purgatory.tryCompleteElseWatch(op, List.of("a"));

        // Then
        assertThat(completed).isTrue();
        assertThat(op.completions.get()).isEqualTo(1);
        assertThat(purgatory.pendingCount()).isZero();
        assertThat(purgatory.watchedKeyCount()).isZero();
    }

    @Test
    void anEventOnAWatchedKeyCompletesTheOperationWithoutWaitingForItsDelay() {
        // Given
        Op op = new Op(60_000);
        purgatory.tryCompleteElseWatch(op, List.of("a", "b"));
        assertThat(purgatory.pendingCount()).isEqualTo(1);

        // When
        op.ready.set(true);
        int completed = purgatory.checkAndComplete("b");

        // Then
        assertThat(completed).isEqualTo(1);
        assertThat(op.completions.get()).isEqualTo(1);
        assertThat(op.expired.get()).isFalse();
        assertThat(purgatory.pendingCount()).isZero();
        assertThat(purgatory.watchedKeyCount()).isZero();
    }

    @Test
    void anEventOnAnotherKeyOrAnUnmetConditionLeavesTheOperationWaiting() {
        // Given
        Op op = new Op(60_000);
        purgatory.tryCompleteElseWatch(op, List.of("a"));

        // When
        int otherKey = purgatory.checkAndComplete("z");
        int notReady = purgatory.checkAndComplete("a");

        // Then
        assertThat(otherKey + notReady).isZero();
        assertThat(op.completions.get()).isZero();
        assertThat(purgatory.pendingCount()).isEqualTo(1);
    }

    @Test
    void anOperationExpiresOnTheTimerAfterItsDelay() {
        // Given
        long start = System.nanoTime();
        Op op = new Op(200);

        // When
        purgatory.tryCompleteElseWatch(op, List.of("a"));

        // Then
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(op.completions.get()).isEqualTo(1));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(190));
        assertThat(op.expired.get()).isTrue();
        assertThat(purgatory.pendingCount()).isZero();
        assertThat(purgatory.watchedKeyCount()).isZero();
    }

    @Test
    void closingThePurgatoryCompletesEveryWaitingOperationOnce() {
        // Given
        Op first = new Op(60_000);
        Op second = new Op(60_000);
        purgatory.tryCompleteElseWatch(first, List.of("a"));
        purgatory.tryCompleteElseWatch(second, List.of("a"));

        // When
        purgatory.close();

        // Then
        assertThat(first.completions.get()).isEqualTo(1);
        assertThat(second.completions.get()).isEqualTo(1);
        assertThat(purgatory.pendingCount()).isZero();
    }

    @Test
    void anOperationNamingAnExpiryExecutorExpiresOnItNotOnTheTimerThread() {
        // Given: an operation whose completion must run on "handler" threads (as a delayed fetch reads files)
        MockTimer timer = new MockTimer();
        DelayedOperationPurgatory<String> onMock = new DelayedOperationPurgatory<>("mock", timer);
        ExecutorService handlers = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-handler"));
        try {
            Op op = new Op(100, handlers);
            onMock.tryCompleteElseWatch(op, List.of("a"));

            // When: its delay runs out on the timer (the test's thread)
            timer.advance(100);

            // Then: it completed, as expired, on the handler thread
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(op.completions.get()).isEqualTo(1));
            assertThat(op.completedOn.get()).isEqualTo("test-handler");
            assertThat(op.expired.get()).isTrue();
            assertThat(onMock.pendingCount()).isZero();
            assertThat(onMock.watchedKeyCount()).isZero();
        } finally {
            handlers.shutdownNow();
            onMock.close();
        }
    }

    @Test
    void anExpiryExecutorThatRefusesTheTaskLeavesTheExpiryOnTheTimerThread() {
        // Given: the handler threads have stopped (a broker shutting down)
        MockTimer timer = new MockTimer();
        DelayedOperationPurgatory<String> onMock = new DelayedOperationPurgatory<>("mock", timer);
        Op op = new Op(100, task -> {
            throw new RejectedExecutionException("stopped");
        });
        onMock.tryCompleteElseWatch(op, List.of("a"));

        // When
        timer.advance(100);

        // Then: still answered, once
        assertThat(op.completions.get()).isEqualTo(1);
        assertThat(op.completedOn.get()).isEqualTo(Thread.currentThread().getName());
        assertThat(op.expired.get()).isTrue();
        assertThat(onMock.pendingCount()).isZero();
        onMock.close();
    }

    @Test
    void anOperationCompletedByAnEventBeforeItsHandedOffExpiryRunsIsNotCompletedAgain() {
        // Given: the expiry is queued on an executor that has not run it yet
        MockTimer timer = new MockTimer();
        DelayedOperationPurgatory<String> onMock = new DelayedOperationPurgatory<>("mock", timer);
        List<Runnable> queued = new java.util.ArrayList<>();
        Op op = new Op(100, queued::add);
        onMock.tryCompleteElseWatch(op, List.of("a"));
        timer.advance(100);
        assertThat(queued).hasSize(1);

        // When: an event completes it first, then the queued expiry runs
        op.ready.set(true);
        onMock.checkAndComplete("a");
        queued.get(0).run();

        // Then
        assertThat(op.completions.get()).isEqualTo(1);
        assertThat(op.expired.get()).isFalse();
        onMock.close();
    }

    /** Completes when {@link #ready} is set. */
    private static final class Op extends DelayedOperation {

        final AtomicBoolean ready = new AtomicBoolean();
        final AtomicInteger completions = new AtomicInteger();
        final AtomicBoolean expired = new AtomicBoolean();
        final AtomicReference<String> completedOn = new AtomicReference<>();
        private final Executor expiryExecutor;

        Op(long delayMs) {
            this(delayMs, null);
        }

        Op(long delayMs, Executor expiryExecutor) {
            super(delayMs);
            this.expiryExecutor = expiryExecutor;
        }

        @Override
        protected Executor expiryExecutor() {
            return expiryExecutor;
        }

        @Override
        protected boolean tryComplete() {
            return ready.get() && forceComplete();
        }

        @Override
        protected void onComplete() {
            completedOn.set(Thread.currentThread().getName());
            completions.incrementAndGet();
        }

        @Override
        protected void onExpiration() {
            expired.set(true);
        }
    }
}
