package io.cairn.metadata.ratis;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Shortens the close of a Ratis server by up to a second. Ratis' Raft log writer ({@code SegmentedRaftLogWorker},
 * one thread named {@code <member id>-SegmentedRaftLogWorker}) waits for work in one-second polls, and its close only
 * clears a flag and waits for the thread to end: the thread sees the flag when its poll times out, so every close of
 * a node took about a second after everything else was done (a broker's stop was 1.4 s, Kafka's 0.3 s). The worker
 * ends at once, and quietly, when it is interrupted after that flag is cleared.
 *
 * <p>Ratis closes the state machine just before the Raft log ({@code StateMachineUpdater} closes it when it stops,
 * then {@code ServerState.close} closes the log), so {@link #stateMachineClosed} starts the watch. The log's close
 * first ends its cache eviction thread ({@code <member id>-cacheEviction-AwaitToRun}), then clears the worker's flag:
 * once the eviction thread has ended, the worker is interrupted as soon as it is idle in its poll (never while it
 * writes; no entry is appended after the division stops running). Without an eviction thread to watch it waits
 * {@value #FALLBACK_DELAY_MS} ms instead. The threads are the ones {@link #find} picked when the node started: a name
 * two live nodes of one JVM share (two clusters of in-process test nodes) picks none, and the close takes its second.
 *
 * <p>Thread-safe.
 */
final class RaftLogWorkerWake {

    private static final Logger LOGGER = LogManager.getLogger(RaftLogWorkerWake.class);
    private static final String WORKER_SUFFIX = "-SegmentedRaftLogWorker";
    private static final String EVICTION_SUFFIX = "-cacheEviction-AwaitToRun";
    /** How long after the state machine closed the threads are watched, at most. */
    private static final long MAX_WAIT_MS = 3_000;
    /** The wait for the flag when there is no eviction thread to watch. */
    private static final long FALLBACK_DELAY_MS = 50;
    /** Threads already picked by a node of this JVM. */
    private static final Set<Thread> PICKED =
        Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    /** Wakes nothing. */
    static final RaftLogWorkerWake NONE = new RaftLogWorkerWake(null, null);

    private final Thread worker;
    /** The log's cache eviction thread, null when none was found. */
    private final Thread eviction;

    private RaftLogWorkerWake(Thread worker, Thread eviction) {
        this.worker = worker;
        this.eviction = eviction;
    }

    /**
     * The wake for the Raft log worker of {@code memberId} (Ratis' {@code RaftGroupMemberId}, e.g.
     * {@code 1@group-00000000DA7A}), found among the live threads; one that wakes nothing when there is no such
     * thread or more than one not picked yet.
     */
    static RaftLogWorkerWake find(String memberId) {
        synchronized (PICKED) {
            Thread[] live = liveThreads();
            Thread worker = unpicked(live, memberId + WORKER_SUFFIX);
            if (worker == null) {
                return NONE;
            }
            Thread eviction = unpicked(live, memberId + EVICTION_SUFFIX);
            PICKED.add(worker);
            if (eviction != null) {
                PICKED.add(eviction);
            }
            return new RaftLogWorkerWake(worker, eviction);
        }
    }

    /** The one live thread named {@code name} that no node picked, else null. Called holding {@link #PICKED}. */
    private static Thread unpicked(Thread[] live, String name) {
        Thread found = null;
        for (Thread thread : live) {
            if (name.equals(thread.getName()) && !PICKED.contains(thread)) {
                if (found != null) {
                    return null;
                }
                found = thread;
            }
        }
        return found;
    }

    /** Whether a worker thread was picked. */
    boolean armed() {
        return worker != null;
    }

    /**
     * Called when Ratis closes the state machine: a daemon thread interrupts the worker once the log's close has
     * begun and the worker waits in its poll, for at most {@value #MAX_WAIT_MS} ms.
     */
    void stateMachineClosed() {
        if (worker == null || !worker.isAlive()) {
            return;
        }
        Thread waker = new Thread(this::wake, worker.getName() + "-wake");
        waker.setDaemon(true);
        waker.start();
    }

    private void wake() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(MAX_WAIT_MS);
        try {
            if (eviction == null) {
                TimeUnit.MILLISECONDS.sleep(FALLBACK_DELAY_MS);
            } else {
                eviction.join(MAX_WAIT_MS);
                if (eviction.isAlive()) {
                    return;
                }
            }
            // the log's cache closes, then the worker's close clears its flag
            TimeUnit.MILLISECONDS.sleep(2);
            while (worker.isAlive() && System.nanoTime() < deadline) {
                if (worker.getState() == Thread.State.TIMED_WAITING) {
                    worker.interrupt();
                    LOGGER.debug("Woke the Raft log worker {} for its close", worker.getName());
                    return;
                }
                TimeUnit.MILLISECONDS.sleep(2);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Thread[] liveThreads() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] threads = new Thread[root.activeCount() + 16];
        int count;
        while ((count = root.enumerate(threads, true)) == threads.length) {
            threads = new Thread[threads.length * 2];
        }
        Thread[] live = new Thread[count];
        System.arraycopy(threads, 0, live, 0, count);
        return live;
    }
}
