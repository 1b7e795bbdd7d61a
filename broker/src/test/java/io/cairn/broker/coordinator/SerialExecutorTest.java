package io.cairn.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One partition's tasks on a shared pool: in order, one at a time, while other partitions use the other threads. */
@Timeout(60)
class SerialExecutorTest {

    private final ExecutorService pool = Executors.newFixedThreadPool(4);

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    void tasksOfOnePartitionRunInSubmissionOrderAndNeverTwoAtATime() throws Exception {
        // Given
        SerialExecutor executor = new SerialExecutor(pool, "p-0");
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        List<Integer> order = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(1);

        // When: more tasks than a quantum, so the drain yields and resubmits itself
        for (int i = 0; i < 10 * SerialExecutor.QUANTUM; i++) {
            int n = i;
            executor.execute(() -> {
                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                order.add(n);
                inside.decrementAndGet();
            });
        }
        executor.execute(done::countDown);

        // Then
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(maxInside.get()).isEqualTo(1);
        assertThat(order).hasSize(10 * SerialExecutor.QUANTUM).isSorted();
    }

    @Test
    void aBlockedPartitionDoesNotHoldUpAnother() throws Exception {
        // Given: partition 0 is stuck in a task
        SerialExecutor first = new SerialExecutor(pool, "p-0");
        SerialExecutor second = new SerialExecutor(pool, "p-1");
        CountDownLatch release = new CountDownLatch(1);
        first.execute(() -> {
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        CountDownLatch ran = new CountDownLatch(1);

        // When
        second.execute(ran::countDown);

        // Then
        assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
        release.countDown();
    }

    @Test
    void aStoppedPoolRefusesTasks() {
        // Given
        SerialExecutor executor = new SerialExecutor(pool, "p-0");
        pool.shutdownNow();

        // When / Then
        assertThatThrownBy(() -> executor.execute(() -> { })).isInstanceOf(RejectedExecutionException.class);
    }
}
