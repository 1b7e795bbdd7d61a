package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.wire.protocol.Uuid;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The shared background pool (Kafka's KafkaScheduler): resized live, each owner closing only its own tasks. */
class SchedulerTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    private Scheduler scheduler;

    @AfterEach
    void closeScheduler() {
        if (scheduler != null) {
            scheduler.close();
        }
    }

    @Test
    void tasksKeepRunningAcrossAResizeAndTheNewThreadsRunTogether() throws Exception {
        // Given: one thread and a periodic task
        scheduler = new Scheduler(1);
        ScheduledExecutorService tasks = scheduler.tasks("test");
        AtomicInteger runs = new AtomicInteger();
        tasks.scheduleWithFixedDelay(runs::incrementAndGet, 0, 2, TimeUnit.MILLISECONDS);
        await().atMost(WAIT).until(() -> runs.get() >= 3);

        // When: three threads, and three tasks that each wait for the others
        scheduler.resize(3);
        CountDownLatch allStarted = new CountDownLatch(3);
        CountDownLatch release = new CountDownLatch(1);
        Set<String> threads = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < 3; i++) {
            tasks.execute(() -> {
                threads.add(Thread.currentThread().getName());
                allStarted.countDown();
                awaitQuietly(release);
            });
        }

        // Then: they run at once, on Kafka's thread names
        assertThat(allStarted.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        release.countDown();
        assertThat(scheduler.poolSize()).isEqualTo(3);
        assertThat(threads).hasSize(3).allMatch(name -> name.startsWith("kafka-scheduler-"));

        // When: back to one thread, the periodic task still runs
        scheduler.resize(1);
        int before = runs.get();

        // Then
        await().atMost(WAIT).until(() -> runs.get() >= before + 3);
        assertThat(scheduler.poolSize()).isEqualTo(1);
    }

    @Test
    void anOwnersShutdownCancelsOnlyItsTasksAndWaitsForItsRunningOne() throws Exception {
        // Given: two owners on two threads; one has a periodic, a delayed and a running task
        scheduler = new Scheduler(2);
        ScheduledExecutorService mine = scheduler.tasks("mine");
        ScheduledExecutorService theirs = scheduler.tasks("theirs");
        AtomicInteger myRuns = new AtomicInteger();
        AtomicInteger theirRuns = new AtomicInteger();
        mine.scheduleWithFixedDelay(myRuns::incrementAndGet, 0, 2, TimeUnit.MILLISECONDS);
        theirs.scheduleWithFixedDelay(theirRuns::incrementAndGet, 0, 2, TimeUnit.MILLISECONDS);
        ScheduledFuture<?> delayed = mine.schedule(myRuns::incrementAndGet, 1, TimeUnit.HOURS);
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        mine.execute(() -> {
            running.countDown();
            awaitQuietly(release);
        });
        assertThat(running.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

        // When
        mine.shutdown();

        // Then: the waiting ones are cancelled, the running one finishes before the owner is terminated
        assertThat(delayed.isCancelled()).isTrue();
        assertThat(mine.awaitTermination(20, TimeUnit.MILLISECONDS)).isFalse();
        release.countDown();
        assertThat(mine.awaitTermination(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThatThrownBy(() -> mine.execute(myRuns::incrementAndGet))
                .isInstanceOf(RejectedExecutionException.class);

        // And: the other owner's task goes on, this one's does not
        int mineAfter = myRuns.get();
        int theirsAfter = theirRuns.get();
        await().atMost(WAIT).until(() -> theirRuns.get() >= theirsAfter + 5);
        assertThat(myRuns.get()).isEqualTo(mineAfter);
        assertThat(theirs.isShutdown()).isFalse();
    }

    @Test
    void aFailingPeriodicTaskKeepsItsSchedule() {
        // Given
        scheduler = new Scheduler(1);
        AtomicInteger runs = new AtomicInteger();

        // When: it fails on its first run
        scheduler.tasks("failing").scheduleWithFixedDelay(() -> {
            if (runs.incrementAndGet() == 1) {
                throw new IllegalStateException("expected by the test");
            }
        }, 0, 2, TimeUnit.MILLISECONDS);

        // Then
        await().atMost(WAIT).until(() -> runs.get() >= 3);
    }

    @Test
    void aClosedLogManagerLeavesTheSharedThreadsToTheOthers() throws Exception {
        // Given: two log directories on one background thread
        scheduler = new Scheduler(1);
        LogManager closed = LogManager.start(tmp.resolve("a"), LogConfig.defaults(), Time.SYSTEM,
                LogManager.Options.defaults(), scheduler);
        LogManager open = LogManager.start(tmp.resolve("b"), LogConfig.defaults(), Time.SYSTEM,
                LogManager.Options.defaults(), scheduler);
        open.getOrCreateLog("t", 0, LogConfig.defaults(), new Uuid(1, 2));

        // When: one closes, the other deletes a log (renamed, then removed in the background)
        closed.close();
        open.deleteLog("t", 0);

        // Then
        await().atMost(WAIT).untilAsserted(() -> {
            try (var children = Files.list(tmp.resolve("b"))) {
                assertThat(children.filter(Files::isDirectory)).isEmpty();
            }
        });
        open.close();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
