package io.cairn.log;

import io.cairn.log.cleaner.LogCleaner;
import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import io.cairn.wire.protocol.Uuid;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.logging.log4j.Logger;

/**
 * Owns every partition log of one log directory (Kafka's {@code LogManager}): loads them at start, creating and
 * deleting partitions, the clean-shutdown marker ({@code .kafka_cleanshutdown}, written after every log closed
 * cleanly with the broker epoch of the shutdown as Kafka writes it, {@code {"version":0,"brokerEpoch":N}}, and
 * removed once the next start has read it; KIP-966 registers with that epoch), the shared bounds on open file
 * handles and mapped indexes, and the background work: retention, producer expiry and time-based flush, each pass
 * bounded to one partition at a time and never holding a partition's lock across I/O it does not need. That work
 * runs on the broker's {@link Scheduler} ({@code background.threads}) as this manager's own tasks, which
 * {@link #close} cancels.
 *
 * <p>It also holds the directory's future logs ({@code <topic>-<partition>.<id>-future}, Kafka's
 * {@code LogManager.futureLogs}): the copies a replica move into this directory writes. They are loaded at start like
 * the others, but neither cleaned nor retained nor flushed by time: the move owns them until
 * {@link #promoteFutureLog} renames one into place. Directories of deleted logs ({@code -delete}) left by a crash
 * are removed at start.
 *
 * <p>Logs are loaded at start and closed at shutdown by {@code num.recovery.threads.per.data.dir} threads of this
 * directory ({@code log-recovery-<dir>}, Kafka's pool of the same name), made for that work and ended after it; a
 * dynamic change of the count ({@link #resizeRecoveryThreadPool}) applies to the next such work, as in Kafka.
 *
 * <p>Thread-safety: thread-safe; the partition map is concurrent and each partition log is itself thread-safe.
 */
public final class LogManager implements Closeable {

    public static final String CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown";
    /** The metadata quorum's directory, which may share a log directory with partitions; never a partition. */
    public static final String METADATA_DIR = "__cluster_metadata-0";
    private static final Pattern BROKER_EPOCH = Pattern.compile("\"brokerEpoch\"\\s*:\\s*(-?\\d+)");
    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(LogManager.class);

    private final Path logDir;
    private final LogConfig defaultConfig;
    private final LogEnvironment env;
    /** This manager's tasks on the background threads. */
    private final ScheduledExecutorService scheduler;
    /** The pool made for this manager alone when none was handed in; null otherwise. */
    private final Scheduler ownScheduler;
    private final Map<String, PartitionLog> logs = new ConcurrentHashMap<>();
    /** Future logs (KIP-113): copies of a partition of another log directory that will replace it; by partition. */
    private final Map<String, PartitionLog> futureLogs = new ConcurrentHashMap<>();
    private final boolean hadCleanShutdown;
    private final long previousBrokerEpoch;
    private final LogCleaner cleaner;
    /** {@code num.recovery.threads.per.data.dir}; written by the broker's config thread, read at load and close. */
    private volatile int recoveryThreads;
    private volatile boolean closed;

    /**
     * Settings of the manager (Kafka's server properties of the same purpose).
     *
     * @param maxOpenHandles     bound on open segment file handles
     * @param maxMappedIndexes   bound on mapped index files
     * @param retentionCheckMs   {@code log.retention.check.interval.ms}; {@code <= 0} disables the task
     * @param flushCheckMs       {@code log.flush.scheduler.interval.ms}: how often logs whose {@code flush.ms} has
     *                           passed since their last flush are flushed (Kafka's {@code flushDirtyLogs});
     *                           {@code <= 0} or Kafka's default {@code Long.MAX_VALUE} disables the task
     * @param cleanerBackoffMs   {@code log.cleaner.backoff.ms}; {@code <= 0} disables the cleaner
     * @param cleanerIoMaxBytesPerSecond {@code log.cleaner.io.max.bytes.per.second}
     * @param layer              file layer (tests may replace it)
     * @param flushListener      told of every segment flush
     * @param cleanerThreads     {@code log.cleaner.threads}
     * @param cleanerBuffers     {@code log.cleaner.dedupe.buffer.size}, {@code log.cleaner.io.buffer.load.factor}
     *                           and {@code log.cleaner.io.buffer.size}
     * @param producerIdExpirationCheckMs {@code producer.id.expiration.check.interval.ms}: how often producers idle
     *                           for longer than their log's {@code producer.id.expiration.ms} are dropped (Kafka's
     *                           {@code PeriodicProducerExpirationCheck}); {@code <= 0} disables the task
     * @param failureListener    told once when a write to the directory fails (see {@link LogDirHealth})
     */
    public record Options(int maxOpenHandles, int maxMappedIndexes, long retentionCheckMs, long flushCheckMs,
                          long cleanerBackoffMs, double cleanerIoMaxBytesPerSecond, FileLayer layer,
                          LogFlushListener flushListener, int cleanerThreads, LogCleaner.BufferSizes cleanerBuffers,
                          long producerIdExpirationCheckMs, LogDirFailureListener failureListener) {

        /** Kafka's {@code producer.id.expiration.check.interval.ms} default: 10 minutes. */
        public static final long DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_MS = 600_000L;

        /** Options whose flushes nobody listens to, with one cleaner thread. */
        public Options(int maxOpenHandles, int maxMappedIndexes, long retentionCheckMs, long flushCheckMs,
                       long cleanerBackoffMs, double cleanerIoMaxBytesPerSecond, FileLayer layer) {
            this(maxOpenHandles, maxMappedIndexes, retentionCheckMs, flushCheckMs, cleanerBackoffMs,
                cleanerIoMaxBytesPerSecond, layer, LogFlushListener.NONE, 1, LogCleaner.BufferSizes.DEFAULTS,
                DEFAULT_PRODUCER_ID_EXPIRATION_CHECK_MS, LogDirFailureListener.NONE);
        }

        /** Kafka's intervals; bounds that fit the default 1,048,576 descriptors and 65,530 mappings with room. */
        public static Options defaults() {
            return new Options(10_000, 30_000, 300_000L, Long.MAX_VALUE, 15_000L, Double.MAX_VALUE,
                FileLayer.DEFAULT);
        }

        /** These options with other retention and flush intervals. */
        public Options withIntervals(long newRetentionCheckMs, long newFlushCheckMs) {
            return new Options(maxOpenHandles, maxMappedIndexes, newRetentionCheckMs, newFlushCheckMs,
                cleanerBackoffMs, cleanerIoMaxBytesPerSecond, layer, flushListener, cleanerThreads, cleanerBuffers,
                producerIdExpirationCheckMs, failureListener);
        }

        /**
         * These options with other cleaner settings: {@code threads} cleaner threads looking for work every
         * {@code backoffMs} ({@code <= 0} disables the cleaner), their I/O bounded by {@code ioMaxBytesPerSecond}.
         */
        public Options withCleaner(int threads, long backoffMs, double ioMaxBytesPerSecond) {
            return new Options(maxOpenHandles, maxMappedIndexes, retentionCheckMs, flushCheckMs, backoffMs,
                ioMaxBytesPerSecond, layer, flushListener, threads, cleanerBuffers, producerIdExpirationCheckMs,
                failureListener);
        }

        /** These options with other cleaner buffer sizes. */
        public Options withCleanerBuffers(LogCleaner.BufferSizes buffers) {
            return new Options(maxOpenHandles, maxMappedIndexes, retentionCheckMs, flushCheckMs, cleanerBackoffMs,
                cleanerIoMaxBytesPerSecond, layer, flushListener, cleanerThreads, buffers, producerIdExpirationCheckMs,
                failureListener);
        }

        /** These options with {@code listener} told of every segment flush. */
        public Options withFlushListener(LogFlushListener listener) {
            return new Options(maxOpenHandles, maxMappedIndexes, retentionCheckMs, flushCheckMs, cleanerBackoffMs,
                cleanerIoMaxBytesPerSecond, layer, listener, cleanerThreads, cleanerBuffers,
                producerIdExpirationCheckMs, failureListener);
        }

        /** These options with {@code listener} told once when a write to the directory fails. */
        public Options withFailureListener(LogDirFailureListener listener) {
            return new Options(maxOpenHandles, maxMappedIndexes, retentionCheckMs, flushCheckMs, cleanerBackoffMs,
                cleanerIoMaxBytesPerSecond, layer, flushListener, cleanerThreads, cleanerBuffers,
                producerIdExpirationCheckMs, listener);
        }

        /** These options with producer expiry checked every {@code intervalMs} ({@code <= 0}: never). */
        public Options withProducerIdExpirationCheckMs(long intervalMs) {
            return new Options(maxOpenHandles, maxMappedIndexes, retentionCheckMs, flushCheckMs, cleanerBackoffMs,
                cleanerIoMaxBytesPerSecond, layer, flushListener, cleanerThreads, cleanerBuffers, intervalMs,
                failureListener);
        }
    }

    private LogManager(Path logDir, LogConfig defaultConfig, Time time, Options options, Scheduler shared,
                       int recoveryThreads) {
        this.logDir = logDir;
        this.recoveryThreads = recoveryThreads;
        this.defaultConfig = defaultConfig;
        this.ownScheduler = shared == null ? new Scheduler(1) : null;
        // Closing drops waiting tasks (deferred deletes, background flushes that close() redoes) but lets a running
        // one finish: an interrupt would close the FileChannel under the flush that close() needs next.
        ScheduledExecutorService executor = (shared == null ? ownScheduler : shared).tasks("log manager of "
            + logDir);
        this.scheduler = executor;
        this.env = new LogEnvironment(time, options.layer(), new OpenResources(options.maxOpenHandles()),
            new OpenResources(options.maxMappedIndexes()), executor, options.flushListener(),
            new LogDirHealth(options.failureListener()));
        Path marker = logDir.resolve(CLEAN_SHUTDOWN_FILE);
        this.hadCleanShutdown = Files.exists(marker);
        this.previousBrokerEpoch = hadCleanShutdown ? brokerEpochOf(marker) : -1L;
        if (options.retentionCheckMs() > 0) {
            executor.scheduleWithFixedDelay(this::runRetentionSafely, options.retentionCheckMs(),
                options.retentionCheckMs(), TimeUnit.MILLISECONDS);
        }
        if (options.producerIdExpirationCheckMs() > 0) {
            executor.scheduleWithFixedDelay(this::runProducerExpirationSafely, options.producerIdExpirationCheckMs(),
                options.producerIdExpirationCheckMs(), TimeUnit.MILLISECONDS);
        }
        if (options.flushCheckMs() > 0 && options.flushCheckMs() != Long.MAX_VALUE) {
            executor.scheduleWithFixedDelay(this::runFlushSafely, options.flushCheckMs(), options.flushCheckMs(),
                TimeUnit.MILLISECONDS);
        }
        this.cleaner = new LogCleaner(logs::values, time, options.cleanerIoMaxBytesPerSecond(),
            options.cleanerBuffers());
        if (options.cleanerBackoffMs() > 0) {
            cleaner.start(options.cleanerThreads(), options.cleanerBackoffMs());
        }
    }

    /** Opens the log directory and loads every partition in it; background work on a thread of its own. */
    public static LogManager start(Path logDir, LogConfig defaultConfig, Time time, Options options) {
        return start(logDir, defaultConfig, time, options, null);
    }

    /**
     * Opens the log directory and loads every partition in it; background work (retention, time flush, background
     * flushes, delayed deletes) runs on {@code scheduler}, the broker's {@code background.threads} (null: a thread of
     * its own). Closing the manager cancels its tasks, not the scheduler's others.
     */
    public static LogManager start(Path logDir, LogConfig defaultConfig, Time time, Options options,
                                   Scheduler scheduler) {
        return start(logDir, defaultConfig, time, options, scheduler, 1);
    }

    /**
     * As {@link #start(Path, LogConfig, Time, Options, Scheduler)}, loading the logs with {@code recoveryThreads}
     * threads ({@code num.recovery.threads.per.data.dir}, at least 1).
     */
    public static LogManager start(Path logDir, LogConfig defaultConfig, Time time, Options options,
                                   Scheduler scheduler, int recoveryThreads) {
        if (recoveryThreads < 1) {
            throw new IllegalArgumentException("num.recovery.threads.per.data.dir must be at least 1");
        }
        try {
            Files.createDirectories(logDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + logDir, e);
        }
        LogManager manager = new LogManager(logDir, defaultConfig, time, options, scheduler, recoveryThreads);
        manager.loadAll();
        return manager;
    }

    private void loadAll() {
        long start = env.time().milliseconds();
        List<Path> dirs = new ArrayList<>();
        try (Stream<Path> children = Files.list(logDir)) {
            children.filter(Files::isDirectory).forEach(dirs::add);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + logDir, e);
        }
        List<Path> partitionDirs = new ArrayList<>();
        for (Path dir : dirs) {
            String name = dir.getFileName().toString();
            if (isPartitionDir(dir)) {
                partitionDirs.add(dir);
            } else if (LogDirNames.isFuture(name)) {
                loadFutureLog(dir);
            } else if (name.endsWith(LogDirNames.DELETE_SUFFIX)) {
                scheduler.execute(() -> deleteTree(dir));
            }
        }
        int threads = inRecoveryThreads(partitionDirs, dir -> logs.put(dir.getFileName().toString(),
            PartitionLog.open(dir, defaultConfig, env, hadCleanShutdown)));
        try {
            Files.deleteIfExists(logDir.resolve(CLEAN_SHUTDOWN_FILE));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove the clean-shutdown marker", e);
        }
        LOGGER.info("Loaded {} partition log(s) from {} in {} ms ({} shutdown, {} recovery thread(s))", logs.size(),
            logDir, env.time().milliseconds() - start, hadCleanShutdown ? "clean" : "unclean", threads);
    }

    /**
     * Runs {@code action} on every item with {@code num.recovery.threads.per.data.dir} threads made for it (on this
     * thread when one is enough), and returns once all are done; the first failure is thrown after that.
     *
     * @return the threads used
     */
    private <T> int inRecoveryThreads(List<T> items, Consumer<T> action) {
        int threads = Math.min(recoveryThreads, items.size());
        if (threads <= 1) {
            items.forEach(action);
            return 1;
        }
        AtomicInteger index = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "log-recovery-" + logDir + "-" + index.getAndIncrement());
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> done = new ArrayList<>();
            for (T item : items) {
                done.add(pool.submit(() -> action.accept(item)));
            }
            RuntimeException first = null;
            for (Future<?> f : done) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (first == null) {
                        Throwable cause = e.getCause();
                        first = cause instanceof RuntimeException re ? re : new IllegalStateException(cause);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while loading or closing the logs of " + logDir, e);
                }
            }
            if (first != null) {
                throw first;
            }
            return threads;
        } finally {
            pool.shutdown();
        }
    }

    /**
     * Kafka's {@code resizeRecoveryThreadPool}: the logs are loaded (at the next start) and closed with
     * {@code threads} threads of this directory from now on.
     */
    public void resizeRecoveryThreadPool(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("num.recovery.threads.per.data.dir must be at least 1");
        }
        recoveryThreads = threads;
    }

    /** {@code num.recovery.threads.per.data.dir} now. */
    public int recoveryThreads() {
        return recoveryThreads;
    }

    private void loadFutureLog(Path dir) {
        PartitionLog log = PartitionLog.open(dir, defaultConfig, env, hadCleanShutdown);
        PartitionLog first = futureLogs.putIfAbsent(key(log.topic(), log.partition()), log);
        if (first != null) {
            LOGGER.warn("Deleting {}: {} is already a future log of the same partition", dir, first.dir());
            retire(log);
        } else {
            LOGGER.info("Loaded future log {} (log end offset {})", dir, log.logEndOffset());
        }
    }

    private static boolean isPartitionDir(Path dir) {
        String name = dir.getFileName().toString();
        return !name.equals(METADATA_DIR) && LogDirNames.isPartitionDir(name);
    }

    public boolean hadCleanShutdown() {
        return hadCleanShutdown;
    }

    /** The broker epoch the last clean shutdown recorded, -1 after an unclean one (or none recorded). */
    public long previousBrokerEpoch() {
        return previousBrokerEpoch;
    }

    public Path logDir() {
        return logDir;
    }

    /** The shared bounds and clock. */
    public LogEnvironment environment() {
        return env;
    }

    private static String key(String topic, int partition) {
        return topic + "-" + partition;
    }

    public Optional<PartitionLog> getLog(String topic, int partition) {
        return Optional.ofNullable(logs.get(key(topic, partition)));
    }

    /** The log of the partition, created (with {@code partition.metadata}) when missing. */
    public PartitionLog getOrCreateLog(String topic, int partition, LogConfig config, Uuid topicId) {
        return logs.computeIfAbsent(key(topic, partition), k -> {
            PartitionLog log = PartitionLog.open(logDir.resolve(k), config, env, true);
            if (topicId != null) {
                log.writeTopicId(topicId);
            }
            return log;
        });
    }

    public List<PartitionLog> allLogs() {
        return new ArrayList<>(logs.values());
    }

    /** Closes and removes a partition's directory (topic deletion, reassignment away, a move's old copy). */
    public void deleteLog(String topic, int partition) {
        PartitionLog log = logs.remove(key(topic, partition));
        if (log != null) {
            retire(log);
        }
    }

    /** The future log of the partition in this directory, if any. */
    public Optional<PartitionLog> getFutureLog(String topic, int partition) {
        return Optional.ofNullable(futureLogs.get(key(topic, partition)));
    }

    /** Every future log of this directory (a snapshot). */
    public List<PartitionLog> allFutureLogs() {
        return new ArrayList<>(futureLogs.values());
    }

    /**
     * Creates an empty future log of the partition starting at {@code logStartOffset}, with the topic id, in a new
     * {@code <topic>-<partition>.<id>-future} directory; the existing one when there is one.
     */
    public PartitionLog createFutureLog(String topic, int partition, LogConfig config, Uuid topicId,
                                        long logStartOffset) {
        return futureLogs.computeIfAbsent(key(topic, partition), k -> {
            PartitionLog log = PartitionLog.open(logDir.resolve(LogDirNames.futureDirName(topic, partition)), config,
                env, true);
            log.truncateFullyAndStartAt(logStartOffset);
            if (topicId != null) {
                log.writeTopicId(topicId);
            }
            LOGGER.info("Created future log {} starting at offset {}", log.dir(), logStartOffset);
            return log;
        });
    }

    /** Closes and removes the partition's future log (a move cancelled, or the partition left the broker). */
    public void deleteFutureLog(String topic, int partition) {
        PartitionLog log = futureLogs.remove(key(topic, partition));
        if (log != null) {
            retire(log);
        }
    }

    /**
     * Makes the partition's future log its log in this directory (Kafka's {@code replaceCurrentWithFutureLog}, this
     * directory's half): closes it cleanly (producer snapshot, everything fsynced), renames its directory to
     * {@code <topic>-<partition>}, fsyncs this directory and opens it again. The caller has already removed the old
     * log of the other directory, so that no restart ever finds two logs of the partition.
     */
    public PartitionLog promoteFutureLog(String topic, int partition, LogConfig config) {
        String name = key(topic, partition);
        PartitionLog future = futureLogs.remove(name);
        if (future == null) {
            throw new IllegalStateException("no future log of " + name + " in " + logDir);
        }
        if (logs.containsKey(name)) {
            futureLogs.put(name, future);
            throw new IllegalStateException(name + " already has a log in " + logDir);
        }
        future.close();
        Path target = logDir.resolve(name);
        try {
            Files.move(future.dir(), target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            env.layer().fsyncDirectory(logDir);
        } catch (IOException e) {
            throw new io.cairn.wire.error.KafkaStorageException("cannot rename " + future.dir() + " to " + target, e);
        }
        PartitionLog promoted = PartitionLog.open(target, config, env, true);
        logs.put(name, promoted);
        LOGGER.info("Promoted future log {} to {}", future.dir(), target);
        return promoted;
    }

    /** Closes {@code log}, renames its directory to {@code ...-delete} (fsynced) and deletes it in the background. */
    private void retire(PartitionLog log) {
        log.close();
        Path dir = log.dir();
        Path renamed = dir.resolveSibling(LogDirNames.partitionNameOf(dir.getFileName().toString()) + "."
            + Long.toHexString(System.nanoTime()) + LogDirNames.DELETE_SUFFIX);
        try {
            Files.move(dir, renamed);
            env.layer().fsyncDirectory(logDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot rename " + dir, e);
        }
        scheduler.execute(() -> deleteTree(renamed));
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            LOGGER.warn("Cannot delete {}: {}", dir, e.toString());
        }
    }

    /** One retention pass over every partition; returns the number of segments deleted. */
    public int runRetention() {
        int deleted = 0;
        for (PartitionLog log : logs.values()) {
            deleted += log.deleteOldSegments();
        }
        return deleted;
    }

    /**
     * One producer-expiry pass (Kafka's {@code PeriodicProducerExpirationCheck}): every partition drops the producers
     * idle for longer than its {@code producer.id.expiration.ms}, read now, so a dynamic change applies at the next
     * pass.
     */
    public void runProducerExpiration() {
        for (PartitionLog log : logs.values()) {
            log.removeExpiredProducers();
        }
    }

    private void runProducerExpirationSafely() {
        try {
            runProducerExpiration();
        } catch (RuntimeException e) {
            LOGGER.error("Producer expiration pass failed", e);
        }
    }

    /** The compaction cleaner of this directory (tests drive it with {@code cleanDirtiest()}). */
    public LogCleaner cleaner() {
        return cleaner;
    }

    /** One time-based flush pass over every partition. */
    public void runFlush() {
        for (PartitionLog log : logs.values()) {
            log.maybeFlushByTime();
        }
    }

    private void runRetentionSafely() {
        try {
            runRetention();
        } catch (RuntimeException e) {
            LOGGER.error("Retention pass failed", e);
        }
    }

    private void runFlushSafely() {
        try {
            runFlush();
        } catch (RuntimeException e) {
            LOGGER.error("Flush pass failed", e);
        }
    }

    /** Kafka's {@code CleanShutdownFileHandler} content: the broker epoch, -1 when absent or unreadable. */
    private static long brokerEpochOf(Path marker) {
        try {
            Matcher matcher = BROKER_EPOCH.matcher(Files.readString(marker, StandardCharsets.UTF_8));
            return matcher.find() ? Long.parseLong(matcher.group(1)) : -1L;
        } catch (IOException | NumberFormatException e) {
            LOGGER.warn("Cannot read the broker epoch of {}: {}", marker, e.toString());
            return -1L;
        }
    }

    /** Closes every log cleanly, then writes the clean-shutdown marker without a broker epoch (-1). */
    @Override
    public void close() {
        close(-1L);
    }

    /** Closes every log cleanly, then writes the clean-shutdown marker with the broker's epoch. */
    public void close(long brokerEpoch) {
        if (closed) {
            return;
        }
        closed = true;
        cleaner.close();
        scheduler.shutdown();
        try {
            scheduler.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownScheduler != null) {
            ownScheduler.close();
        }
        List<PartitionLog> all = new ArrayList<>(logs.values());
        all.addAll(futureLogs.values());
        if (!env.health().isOnline()) {
            // A failed write may have left part of a batch past a log's end: the next start must recover, as
            // Kafka writes no clean-shutdown file for an offline directory.
            all.forEach(PartitionLog::closeWithoutFlush);
            LOGGER.warn("Closed {} partition log(s) in {} without the clean-shutdown marker: the directory failed",
                logs.size(), logDir);
            return;
        }
        inRecoveryThreads(all, PartitionLog::close);
        io.cairn.log.io.CheckpointFile.write(env.layer(), logDir.resolve(CLEAN_SHUTDOWN_FILE),
            "{\"version\":0,\"brokerEpoch\":" + brokerEpoch + "}");
        LOGGER.info("Closed {} partition log(s) in {} cleanly", logs.size(), logDir);
    }
}
