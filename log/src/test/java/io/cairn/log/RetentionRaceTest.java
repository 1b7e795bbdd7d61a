package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retention racing an append: the pass must choose its segments under the log lock (Kafka's
 * {@code UnifiedLog.deleteOldSegments} holds {@code lock} around {@code deletableSegments} and the deletion), so a
 * batch that lands in the active segment while a pass runs is judged with it, never deleted unseen.
 */
class RetentionRaceTest {

    @TempDir
    Path tmp;

    /** A mock clock that parks the appender thread while it holds the partition lock, until released. */
    private static final class ParkingTime implements Time {
        private final MockTime delegate = new MockTime();
        private final AtomicReference<Thread> parkThread = new AtomicReference<>();
        private final CountDownLatch parked = new CountDownLatch(1);
        private final CountDownLatch release = new CountDownLatch(1);
        private volatile PartitionLog log;

        @Override
        public long milliseconds() {
            if (Thread.currentThread() == parkThread.get() && log.lock().isHeldByCurrentThread()) {
                parkThread.set(null);
                parked.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return delegate.milliseconds();
        }

        @Override
        public long nanoseconds() {
            return delegate.nanoseconds();
        }

        @Override
        public void sleep(long ms) {
            delegate.sleep(ms);
        }
    }

    @Test
    void aBatchAppendedWhileTimeRetentionRunsIsNotDeleted() throws Exception {
        // Given: one batch per segment, every one older than retention.ms, then room in the active segment
        ParkingTime time = new ParkingTime();
        PartitionLog log = PartitionLog.open(tmp.resolve("race-0"),
            LogConfig.builder().segmentBytes(160).fileDeleteDelayMs(0).retentionMs(1000).build(),
            LogEnvironment.of(time), true);
        time.log = log;
        for (int i = 0; i < 4; i++) {
            log.appendAsLeader(TestBatches.keyed(time.milliseconds(), "key-" + i, "old-" + i), 0,
                AppendOrigin.CLIENT);
            time.sleep(1000);
        }
        log.updateConfig(log.config().toBuilder().segmentBytes(1 << 20).build());
        time.sleep(10_000);
        long freshOffset = log.logEndOffset();

        // When a fresh batch is being appended (the appender holds the lock) as a retention pass starts
        CompletableFuture<LogAppendInfo> append = new CompletableFuture<>();
        Thread appender = new Thread(() -> {
            try {
                append.complete(log.appendAsLeader(TestBatches.keyed(time.milliseconds(), "key-new", "fresh"), 0,
                    AppendOrigin.CLIENT));
            } catch (RuntimeException e) {
                append.completeExceptionally(e);
            }
        });
        time.parkThread.set(appender);
        appender.start();
        assertThat(time.parked.await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Integer> pass = new CompletableFuture<>();
        Thread retention = new Thread(() -> {
            try {
                pass.complete(log.deleteOldSegments());
            } catch (RuntimeException e) {
                pass.completeExceptionally(e);
            }
        });
        retention.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!log.lock().hasQueuedThread(retention) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        time.release.countDown();
        append.get(30, TimeUnit.SECONDS);
        pass.get(30, TimeUnit.SECONDS);

        // Then the old batches are gone and the fresh one is still there to read
        assertThat(log.logStartOffset()).isLessThanOrEqualTo(freshOffset);
        assertThat(LogInvariants.verify(log)).last().isEqualTo(freshOffset + ":fresh");
        log.close();
    }
}
