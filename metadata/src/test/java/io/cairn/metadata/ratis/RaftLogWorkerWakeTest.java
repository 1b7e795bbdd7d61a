package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RaftLogWorkerWake} against stand-ins for Ratis' log worker and cache eviction thread: threads of their names
 * that, like them, wait in timed polls and end when interrupted.
 */
class RaftLogWorkerWakeTest {

    private final List<Thread> workers = new ArrayList<>();

    @AfterEach
    void stopWorkers() throws InterruptedException {
        for (Thread worker : workers) {
            worker.interrupt();
            worker.join(5_000);
        }
    }

    @Test
    void theWorkerIdleInItsPollIsInterruptedOnceTheStateMachineClosed() throws InterruptedException {
        // Given: the worker of member 7@group-test, idle
        CountDownLatch interrupted = new CountDownLatch(1);
        Thread worker = worker("7@group-test-SegmentedRaftLogWorker", interrupted);
        RaftLogWorkerWake wake = RaftLogWorkerWake.find("7@group-test");

        // When
        wake.stateMachineClosed();

        // Then
        assertThat(wake.armed()).isTrue();
        assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
        worker.join(10_000);
        assertThat(worker.isAlive()).isFalse();
    }

    @Test
    void theWorkerIsLeftAloneUntilTheLogsCloseEndedItsEvictionThread() throws InterruptedException {
        // Given: the worker of member 6@group-test and the log's cache eviction thread, both idle
        CountDownLatch interrupted = new CountDownLatch(1);
        worker("6@group-test-SegmentedRaftLogWorker", interrupted);
        Thread eviction = worker("6@group-test-cacheEviction-AwaitToRun", new CountDownLatch(1));
        RaftLogWorkerWake wake = RaftLogWorkerWake.find("6@group-test");

        // When: the state machine closed, the log's close not begun yet
        wake.stateMachineClosed();

        // Then: the worker (whose flag may not be cleared yet) is not interrupted
        assertThat(interrupted.await(300, TimeUnit.MILLISECONDS)).isFalse();

        // When: the log's close ends the eviction thread
        eviction.interrupt();

        // Then
        assertThat(interrupted.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aNameTwoLiveWorkersShareWakesNeither() throws InterruptedException {
        // Given: two in-process nodes with the same member id
        CountDownLatch interrupted = new CountDownLatch(2);
        worker("8@group-test-SegmentedRaftLogWorker", interrupted);
        worker("8@group-test-SegmentedRaftLogWorker", interrupted);

        // When
        RaftLogWorkerWake wake = RaftLogWorkerWake.find("8@group-test");
        wake.stateMachineClosed();

        // Then
        assertThat(wake.armed()).isFalse();
        assertThat(interrupted.await(200, TimeUnit.MILLISECONDS)).isFalse();
    }

    @Test
    void aWorkerAlreadyPickedByOneNodeIsNotPickedByAnother() {
        // Given
        worker("9@group-test-SegmentedRaftLogWorker", new CountDownLatch(1));
        RaftLogWorkerWake first = RaftLogWorkerWake.find("9@group-test");

        // When
        RaftLogWorkerWake second = RaftLogWorkerWake.find("9@group-test");

        // Then
        assertThat(first.armed()).isTrue();
        assertThat(second.armed()).isFalse();
    }

    private Thread worker(String name, CountDownLatch interrupted) {
        Thread worker = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
            }
            interrupted.countDown();
        }, name);
        worker.setDaemon(true);
        worker.start();
        workers.add(worker);
        // the stand-in is waiting in its poll before the test goes on
        while (worker.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
        }
        return worker;
    }
}
