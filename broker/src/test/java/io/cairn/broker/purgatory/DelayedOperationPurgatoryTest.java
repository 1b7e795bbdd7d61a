package io.cairn.broker.purgatory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
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

    /** Completes when {@link #ready} is set. */
    private static final class Op extends DelayedOperation {

        final AtomicBoolean ready = new AtomicBoolean();
        final AtomicInteger completions = new AtomicInteger();
        final AtomicBoolean expired = new AtomicBoolean();

        Op(long delayMs) {
            super(delayMs);
        }

        @Override
        protected boolean tryComplete() {
            return ready.get() && forceComplete();
        }

        @Override
        protected void onComplete() {
            completions.incrementAndGet();
        }

        @Override
        protected void onExpiration() {
            expired.set(true);
        }
    }
}
