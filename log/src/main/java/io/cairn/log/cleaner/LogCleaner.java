package io.cairn.log.cleaner;

import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.error.KafkaStorageException;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The background cleaner (Kafka's {@code LogCleaner}): every {@code log.cleaner.backoff.ms} it picks the
 * compacted partition with the highest dirty ratio among those at or above their {@code min.cleanable.dirty.ratio}
 * or holding a dirty record older than their {@code max.compaction.lag.ms}, and cleans it, each thread one partition
 * at a time, its I/O bounded by a {@link Throttler}. A partition whose cleaning fails (other than by a storage error,
 * which is its directory's) is marked uncleanable and skipped from then on, as Kafka's {@code LogCleanerManager} does,
 * so one broken log cannot hold the cleaner; {@link #stats()} tells what Kafka's cleaner gauges tell.
 *
 * <p>{@code log.cleaner.threads} threads (Kafka's {@code CleanerThread}s) each look for work every backoff; a thread
 * takes the dirtiest partition no other thread is cleaning, so a partition is never cleaned twice at once. They share
 * one {@link Throttler}. {@link #reconfigure} applies a new rate at once and restarts the threads with a new count
 * and backoff, as Kafka's {@code LogCleaner.reconfigure} does (a pass in progress completes).
 *
 * <p>Memory is bounded as in Kafka, whatever the keys of the logs: a pass holds one offset map of at most
 * {@code log.cleaner.dedupe.buffer.size / threads} bytes and one read buffer of
 * {@code log.cleaner.io.buffer.size / threads / 2} bytes (grown for one batch larger than it); a log with more
 * distinct dirty keys than the map holds is cleaned over several passes ({@link Cleaner#clean}).
 *
 * <p>Thread-safety: thread-safe. The statistics are written by the cleaner threads (volatile) and read by any.
 */
public final class LogCleaner implements Closeable {

    private static final Logger LOGGER = LogManager.getLogger(LogCleaner.class);

    private final Supplier<Collection<PartitionLog>> logs;
    private final Time time;
    private final Throttler throttler;
    /** The cleaner of the current buffer sizes and thread count; replaced by {@link #start} and reconfigure. */
    private volatile Cleaner cleaner;
    /** Guarded by this. */
    private BufferSizes bufferSizes;
    private final ScheduledThreadPoolExecutor executor;
    private final Set<PartitionLog> uncleanable = ConcurrentHashMap.newKeySet();
    /** The partitions a thread is cleaning now; guarded by itself. */
    private final Set<PartitionLog> inProgress = new HashSet<>();
    /** One periodic task per cleaner thread; guarded by this. */
    private final List<ScheduledFuture<?>> tasks = new ArrayList<>();
    private int threads;
    /** When the cleaner last looked for work (Kafka's {@code timeOfLastRun}; creation time before the first look). */
    private volatile long lastRunMs;
    /** The dirty ratio of the dirtiest cleanable partition at the last look, 0 when none was cleanable. */
    private volatile double maxDirtyRatio;
    /** The longest a dirty record was overdue ({@code max.compaction.lag.ms}) at the last look, 0 when none was. */
    private volatile long maxCompactionDelayMs;
    /** The last pass, or null before the first one. */
    private volatile LastClean lastClean;

    /** What the last cleaning pass read, wrote, and how long it took. */
    private record LastClean(long bytesRead, long bytesWritten, long elapsedMs) {
    }

    /**
     * Kafka's cleaner gauges. {@code maxDirtyPercent}: the dirtiest cleanable partition's dirty share at the last
     * look for work; {@code recopyPercent} and {@code cleanTimeMs}: the last pass's bytes written per byte read and
     * its duration (0 before the first pass); {@code uncleanablePartitions} and {@code uncleanableBytes}: partitions
     * whose cleaning failed and their dirty bytes; {@code dead}: the cleaner thread has stopped;
     * {@code maxCompactionDelayMs}: the longest a dirty record was past its {@code max.compaction.lag.ms} at the
     * last look for work (Kafka's {@code max-compaction-delay-secs}, in ms).
     */
    public record Stats(long timeSinceLastRunMs, int maxDirtyPercent, int recopyPercent, long cleanTimeMs,
                        int uncleanablePartitions, long uncleanableBytes, boolean dead, long maxCompactionDelayMs) {
    }

    /**
     * The cleaner's memory, Kafka's keys, shared by its threads: each thread's offset map takes at most
     * {@code dedupeBufferSize / threads} bytes filled to {@code loadFactor}, and each thread reads through
     * {@code ioBufferSize / threads / 2} bytes (Kafka's read buffer; the other half is its write buffer).
     *
     * @param dedupeBufferSize {@code log.cleaner.dedupe.buffer.size}
     * @param loadFactor       {@code log.cleaner.io.buffer.load.factor}
     * @param ioBufferSize     {@code log.cleaner.io.buffer.size}
     */
    public record BufferSizes(long dedupeBufferSize, double loadFactor, int ioBufferSize) {

        /** Kafka's defaults: 128 MiB, 0.9, 512 KiB. */
        public static final BufferSizes DEFAULTS = new BufferSizes(Cleaner.Buffers.DEFAULT_DEDUPE_BUFFER_SIZE,
            Cleaner.Buffers.DEFAULT_LOAD_FACTOR, Cleaner.Buffers.DEFAULT_IO_BUFFER_SIZE);

        /** One thread's share. */
        public Cleaner.Buffers perThread(int threads) {
            return Cleaner.Buffers.perThread(dedupeBufferSize, loadFactor, ioBufferSize, threads);
        }
    }

    /**
     * A cleaner with Kafka's default buffer sizes.
     *
     * @param logs                 the partitions to consider
     * @param time                 clock (throttling)
     * @param ioMaxBytesPerSecond  {@code log.cleaner.io.max.bytes.per.second}
     */
    public LogCleaner(Supplier<Collection<PartitionLog>> logs, Time time, double ioMaxBytesPerSecond) {
        this(logs, time, ioMaxBytesPerSecond, BufferSizes.DEFAULTS);
    }

    /**
     * @param logs                 the partitions to consider
     * @param time                 clock (throttling)
     * @param ioMaxBytesPerSecond  {@code log.cleaner.io.max.bytes.per.second}
     * @param bufferSizes          the memory of the cleaner threads together
     */
    public LogCleaner(Supplier<Collection<PartitionLog>> logs, Time time, double ioMaxBytesPerSecond,
                      BufferSizes bufferSizes) {
        this.logs = logs;
        this.time = time;
        this.lastRunMs = time.milliseconds();
        this.throttler = new Throttler(ioMaxBytesPerSecond, time);
        this.bufferSizes = bufferSizes;
        this.cleaner = new Cleaner(throttler, bufferSizes.perThread(1));
        AtomicInteger index = new AtomicInteger();
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "kafka-log-cleaner-thread-" + index.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
    }

    /** Starts one cleaner thread that looks for work every {@code backoffMs}. */
    public void start(long backoffMs) {
        start(1, backoffMs);
    }

    /** Starts {@code threadCount} cleaner threads that each look for work every {@code backoffMs}. */
    public synchronized void start(int threadCount, long backoffMs) {
        threads = threadCount;
        cleaner = new Cleaner(throttler, bufferSizes.perThread(threadCount));
        executor.setCorePoolSize(Math.max(1, threadCount));
        for (int i = 0; i < threadCount; i++) {
            tasks.add(executor.scheduleWithFixedDelay(() -> {
                try {
                    cleanDirtiest();
                } catch (RuntimeException e) {
                    LOGGER.error("Log cleaning failed", e);
                }
            }, backoffMs, backoffMs, TimeUnit.MILLISECONDS));
        }
    }

    /**
     * Kafka's {@code LogCleaner.reconfigure}: the I/O rate changes at once; the threads stop (a pass in progress
     * completes) and {@code threadCount} start again with {@code backoffMs}.
     */
    public synchronized void reconfigure(int threadCount, long backoffMs, double ioMaxBytesPerSecond) {
        reconfigure(threadCount, backoffMs, ioMaxBytesPerSecond, bufferSizes);
    }

    /**
     * As {@link #reconfigure(int, long, double)}, the threads starting again with {@code newBufferSizes} (a pass in
     * progress completes with the buffers it had).
     *
     * @throws IllegalArgumentException when one thread's offset map would not hold a single key
     */
    public synchronized void reconfigure(int threadCount, long backoffMs, double ioMaxBytesPerSecond,
                                         BufferSizes newBufferSizes) {
        if (newBufferSizes.perThread(threadCount).mapCapacity() < 1) {
            throw new IllegalArgumentException(OffsetMap.tooSmall(newBufferSizes.perThread(threadCount).dedupeBytes(),
                newBufferSizes.loadFactor()));
        }
        bufferSizes = newBufferSizes;
        throttler.updateDesiredRatePerSec(ioMaxBytesPerSecond);
        tasks.forEach(task -> task.cancel(false));
        tasks.clear();
        start(threadCount, backoffMs);
    }

    /** The buffer sizes the threads run with. */
    public synchronized BufferSizes bufferSizes() {
        return bufferSizes;
    }

    /** The cleaner threads started ({@code log.cleaner.threads}). */
    public synchronized int threads() {
        return threads;
    }

    /** Cleans the dirtiest eligible partition, if any; one whose cleaning fails is marked uncleanable. */
    public Optional<Cleaner.CleanResult> cleanDirtiest() {
        lastRunMs = time.milliseconds();
        Collection<PartitionLog> all = logs.get();
        uncleanable.retainAll(all);
        PartitionLog dirtiest = null;
        synchronized (inProgress) {
            double best = -1;
            long maxDelay = 0;
            for (PartitionLog log : all) {
                if (uncleanable.contains(log) || inProgress.contains(log)) {
                    continue;
                }
                Optional<Cleaner.Cleanable> target = Cleaner.cleanable(log);
                if (target.isPresent()) {
                    maxDelay = Math.max(maxDelay, target.get().compactionDelayMs());
                }
                if (target.isPresent() && target.get().due(log.config()) && target.get().dirtyRatio() > best) {
                    best = target.get().dirtyRatio();
                    dirtiest = log;
                }
            }
            maxDirtyRatio = Math.max(0, best);
            maxCompactionDelayMs = maxDelay;
            if (dirtiest == null) {
                return Optional.empty();
            }
            inProgress.add(dirtiest);
        }
        try {
            return clean(dirtiest);
        } finally {
            synchronized (inProgress) {
                inProgress.remove(dirtiest);
            }
        }
    }

    private Optional<Cleaner.CleanResult> clean(PartitionLog log) {
        long start = time.nanoseconds();
        Optional<Cleaner.CleanResult> result;
        try {
            result = cleaner.cleanIfNeeded(log);
        } catch (KafkaStorageException e) {
            // Kafka's rule: a storage failure is the directory's problem, not the partition's; tried again later
            LOGGER.warn("Cannot clean {}: {}", log.dir(), e.getMessage());
            return Optional.empty();
        } catch (RuntimeException e) {
            LOGGER.error("Unexpected exception when cleaning {}; marking it uncleanable", log.dir(), e);
            uncleanable.add(log);
            return Optional.empty();
        }
        result.ifPresent(r -> lastClean = new LastClean(r.bytesRead(), r.bytesWritten(),
                (time.nanoseconds() - start) / 1_000_000));
        return result;
    }

    /** Kafka's cleaner gauges now. */
    public Stats stats() {
        long uncleanableBytes = 0;
        for (PartitionLog log : uncleanable) {
            Optional<Cleaner.Cleanable> target = Cleaner.cleanable(log);
            if (target.isPresent()) {
                long size = target.get().segments().stream().mapToLong(LogSegment::size).sum();
                uncleanableBytes += Math.round(size * target.get().dirtyRatio());
            }
        }
        LastClean last = lastClean;
        int recopy = last == null || last.bytesRead() == 0 ? 0 : (int) (100 * last.bytesWritten() / last.bytesRead());
        boolean dead;
        synchronized (this) {
            dead = tasks.stream().anyMatch(task -> task.isDone() && !task.isCancelled());
        }
        return new Stats(Math.max(0, time.milliseconds() - lastRunMs), (int) (100 * maxDirtyRatio), recopy,
                last == null ? 0 : last.elapsedMs(), uncleanable.size(), uncleanableBytes, dead, maxCompactionDelayMs);
    }

    /** Cleans every eligible partition once, dirtiest first. */
    public int cleanAll() {
        int cleaned = 0;
        for (PartitionLog log : logs.get().stream()
            .sorted(Comparator.comparingDouble(l -> -Cleaner.cleanable(l).map(Cleaner.Cleanable::dirtyRatio)
                .orElse(0.0)))
            .toList()) {
            if (cleaner.cleanIfNeeded(log).isPresent()) {
                cleaned++;
            }
        }
        return cleaned;
    }

    @Override
    public void close() {
        executor.shutdownNow();
        try {
            executor.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
