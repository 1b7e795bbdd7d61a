package io.cairn.log.cleaner;

import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import java.io.Closeable;
import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The background cleaner (Kafka's {@code LogCleaner}): every {@code log.cleaner.backoff.ms} it picks the
 * compacted partition with the highest dirty ratio at or above its {@code min.cleanable.dirty.ratio} and cleans
 * it, one partition at a time, its I/O bounded by a {@link Throttler}.
 *
 * <p>Thread-safety: thread-safe; one cleaner thread, so a partition is never cleaned twice at once.
 */
public final class LogCleaner implements Closeable {

    private static final Logger LOGGER = LogManager.getLogger(LogCleaner.class);

    private final Supplier<Collection<PartitionLog>> logs;
    private final Cleaner cleaner;
    private final ScheduledExecutorService executor;

    /**
     * @param logs                 the partitions to consider
     * @param time                 clock (throttling)
     * @param ioMaxBytesPerSecond  {@code log.cleaner.io.max.bytes.per.second}
     */
    public LogCleaner(Supplier<Collection<PartitionLog>> logs, Time time, double ioMaxBytesPerSecond) {
        this.logs = logs;
        this.cleaner = new Cleaner(new Throttler(ioMaxBytesPerSecond, time));
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cairn-log-cleaner");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts cleaning every {@code backoffMs}. */
    public void start(long backoffMs) {
        executor.scheduleWithFixedDelay(() -> {
            try {
                cleanDirtiest();
            } catch (RuntimeException e) {
                LOGGER.error("Log cleaning failed", e);
            }
        }, backoffMs, backoffMs, TimeUnit.MILLISECONDS);
    }

    /** Cleans the dirtiest eligible partition, if any. */
    public Optional<Cleaner.CleanResult> cleanDirtiest() {
        PartitionLog dirtiest = null;
        double best = -1;
        for (PartitionLog log : logs.get()) {
            Optional<Cleaner.Cleanable> target = Cleaner.cleanable(log);
            if (target.isPresent() && target.get().dirtyRatio() >= log.config().minCleanableDirtyRatio()
                && target.get().dirtyRatio() > best) {
                best = target.get().dirtyRatio();
                dirtiest = log;
            }
        }
        return dirtiest == null ? Optional.empty() : cleaner.cleanIfNeeded(dirtiest);
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
