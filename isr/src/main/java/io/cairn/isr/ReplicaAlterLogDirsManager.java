package io.cairn.isr;

import io.cairn.log.PartitionLog;
import io.cairn.metadata.image.TopicPartition;
import java.util.Comparator;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The replica moves between this broker's log directories (Kafka's {@code ReplicaAlterLogDirsManager} and its
 * {@code ReplicaAlterLogDirsThread}s, {@code num.replica.alter.log.dirs.threads}, by default one per log
 * directory): each moving partition belongs to the thread {@code abs(31 * topic.hashCode() + partition) % n}, named
 * {@code ReplicaAlterLogDirsThread-<i>} and started on the first move it gets. A thread works on one partition at a
 * time, the greatest by topic then partition (Kafka moves one replica at a time per thread so that each finishes
 * sooner): a copy step of up to {@code maxBytes} from the current log into the future log
 * ({@link Partition#copyToFutureLog}), counted by the {@code replica.alter.log.dirs.io.max.bytes.per.second} quota;
 * once the future log is within about {@code maxBytes} of the current one it tries the swap
 * ({@link Partition#maybeReplaceCurrentWithFutureLog}), and a swapped partition leaves the thread. While the quota
 * is exceeded, or after a failed step, the thread waits {@code backoffMs} ({@code replica.fetch.backoff.ms}).
 *
 * <p>Thread-safety: thread-safe. Each thread's partitions are guarded by its lock, which a step holds: when
 * {@link #remove} returns, the thread no longer touches that partition's logs.
 */
final class ReplicaAlterLogDirsManager implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(ReplicaAlterLogDirsManager.class);
    /** Copy steps the swap may take under the partition's write lock before it gives up and lets appends in. */
    static final int MAX_SWAP_STEPS = 4;
    private static final Comparator<TopicPartition> ORDER =
        Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    /** What a swap does with the logs (the replica manager's half: log directories and checkpoints). */
    interface Swapper {
        /** Retires {@code current} and returns {@code future} opened as the partition's log. */
        PartitionLog swap(Partition partition, PartitionLog current, PartitionLog future);

        /** Called after a swap, outside the partition's locks. */
        void afterSwap(Partition partition);
    }

    private final Mover[] movers;
    private final Function<TopicPartition, Partition> partitions;
    private final ReplicationQuota quota;
    private final Swapper swapper;
    private final int maxBytes;
    private final long backoffMs;

    ReplicaAlterLogDirsManager(int numThreads, Function<TopicPartition, Partition> partitions,
                               ReplicationQuota quota, Swapper swapper, int maxBytes, long backoffMs) {
        if (numThreads < 1) {
            throw new IllegalArgumentException("num.replica.alter.log.dirs.threads must be at least 1");
        }
        this.movers = new Mover[numThreads];
        for (int i = 0; i < numThreads; i++) {
            movers[i] = new Mover(i);
        }
        this.partitions = partitions;
        this.quota = quota;
        this.swapper = swapper;
        this.maxBytes = maxBytes;
        this.backoffMs = backoffMs;
    }

    private Mover moverOf(TopicPartition tp) {
        return movers[Math.abs(31 * tp.topic().hashCode() + tp.partition()) % movers.length];
    }

    /** Starts (or keeps) moving {@code tp}, whose partition has a future log. */
    void add(TopicPartition tp) {
        moverOf(tp).add(tp);
    }

    /** Stops moving {@code tp}; on return no thread touches its logs. */
    void remove(TopicPartition tp) {
        moverOf(tp).remove(tp);
    }

    /** Stops every thread, each after its current step. */
    @Override
    public void close() {
        for (Mover mover : movers) {
            mover.close();
        }
    }

    /** One step on {@code tp}; returns false after a failure (the thread then backs off). */
    private boolean step(TopicPartition tp, TreeSet<TopicPartition> moving) {
        Partition partition = partitions.apply(tp);
        if (partition == null || partition.isRemoved()) {
            moving.remove(tp);
            return true;
        }
        try {
            int copied = partition.copyToFutureLog(maxBytes);
            if (copied < 0) {
                moving.remove(tp);
                return true;
            }
            quota.record(copied);
            if (partition.futureLogBytesBehind() <= maxBytes
                    && partition.maybeReplaceCurrentWithFutureLog(MAX_SWAP_STEPS, maxBytes,
                    (current, future) -> swapper.swap(partition, current, future))) {
                moving.remove(tp);
                swapper.afterSwap(partition);
            }
            return true;
        } catch (RuntimeException e) {
            LOGGER.warn("Moving {} between log directories failed; retrying in {} ms", tp, backoffMs, e);
            return false;
        }
    }

    private final class Mover implements Runnable {

        private final String name;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition changed = lock.newCondition();
        private final TreeSet<TopicPartition> moving = new TreeSet<>(ORDER);
        private Thread thread;
        private boolean closed;

        Mover(int index) {
            this.name = "ReplicaAlterLogDirsThread-" + index;
        }

        void add(TopicPartition tp) {
            lock.lock();
            try {
                if (closed) {
                    return;
                }
                moving.add(tp);
                if (thread == null) {
                    thread = new Thread(this, name);
                    thread.setDaemon(true);
                    thread.start();
                }
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }

        void remove(TopicPartition tp) {
            lock.lock();
            try {
                moving.remove(tp);
            } finally {
                lock.unlock();
            }
        }

        void close() {
            Thread running;
            lock.lock();
            try {
                closed = true;
                changed.signalAll();
                running = thread;
            } finally {
                lock.unlock();
            }
            if (running != null) {
                try {
                    running.join(TimeUnit.SECONDS.toMillis(30));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void run() {
            lock.lock();
            try {
                while (!closed) {
                    if (moving.isEmpty()) {
                        changed.await();
                    } else if (quota.isQuotaExceeded() || !step(moving.last(), moving)) {
                        changed.await(backoffMs, TimeUnit.MILLISECONDS);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                lock.unlock();
            }
        }
    }
}
