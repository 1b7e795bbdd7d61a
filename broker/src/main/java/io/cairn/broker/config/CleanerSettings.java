package io.cairn.broker.config;

import io.cairn.log.cleaner.LogCleaner;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The log cleaner's settings Cairn acts on, Kafka's keys: {@code log.cleaner.enable}, {@code log.cleaner.threads},
 * {@code log.cleaner.backoff.ms}, {@code log.cleaner.io.max.bytes.per.second} and the cleaner's memory,
 * {@code log.cleaner.dedupe.buffer.size}, {@code log.cleaner.io.buffer.load.factor} and
 * {@code log.cleaner.io.buffer.size}. Immutable.
 *
 * @param enabled             whether the cleaner runs at all (compacted topics are not cleaned without it)
 * @param threads             cleaner threads; 0 runs none, as Kafka
 * @param backoffMs           how long a thread waits when it found no work
 * @param ioMaxBytesPerSecond the cleaner threads' read and write rate together
 * @param dedupeBufferSize    the threads' offset maps together (each {@code dedupeBufferSize / threads} bytes)
 * @param loadFactor          how full an offset map may get before a pass stops mapping
 * @param ioBufferSize        the threads' I/O buffers together (each thread reads through a half of its share)
 */
public record CleanerSettings(boolean enabled, int threads, long backoffMs, double ioMaxBytesPerSecond,
                              long dedupeBufferSize, double loadFactor, int ioBufferSize) {

    public static final String ENABLE = "log.cleaner.enable";
    public static final String THREADS = "log.cleaner.threads";
    public static final String BACKOFF_MS = "log.cleaner.backoff.ms";
    public static final String IO_MAX_BYTES_PER_SECOND = "log.cleaner.io.max.bytes.per.second";
    public static final String DEDUPE_BUFFER_SIZE = "log.cleaner.dedupe.buffer.size";
    public static final String LOAD_FACTOR = "log.cleaner.io.buffer.load.factor";
    public static final String IO_BUFFER_SIZE = "log.cleaner.io.buffer.size";
    /** The keys that change live (Kafka's {@code LogCleaner.ReconfigurableConfigs} that Cairn acts on). */
    public static final List<String> LIVE_KEYS = List.of(THREADS, BACKOFF_MS, IO_MAX_BYTES_PER_SECOND,
            DEDUPE_BUFFER_SIZE, LOAD_FACTOR, IO_BUFFER_SIZE);

    /** The threads the log managers start: none when the cleaner is disabled. */
    public int threadsToRun() {
        return enabled ? threads : 0;
    }

    /** The backoff as the log managers take it: at least 1 ms (Kafka's 0 is a thread that never waits). */
    public long scheduledBackoffMs() {
        return Math.max(1, backoffMs);
    }

    /** The cleaner's memory as the log module takes it. */
    public LogCleaner.BufferSizes bufferSizes() {
        return new LogCleaner.BufferSizes(dedupeBufferSize, loadFactor, ioBufferSize);
    }

    /**
     * Why these settings cannot run, in Kafka's words, or empty: Kafka's {@code KafkaConfig} requires more than
     * 1 MiB of dedupe buffer per cleaner thread, and a thread's offset map must hold at least one key (Kafka's
     * {@code Cleaner} requirement, which Kafka meets only when it starts the threads; Cairn checks it up front so a
     * change cannot leave the broker without cleaner threads). With no thread the 1 MiB rule is not checked (Kafka
     * divides by the thread count there), the map still sized as for one thread.
     */
    public Optional<String> problem() {
        if (threads > 0 && dedupeBufferSize / threads <= 1024 * 1024) {
            return Optional.of("requirement failed: " + DEDUPE_BUFFER_SIZE
                    + " must be at least 1MB per cleaner thread.");
        }
        if (bufferSizes().perThread(Math.max(1, threads)).mapCapacity() < 1) {
            return Optional.of("requirement failed: offset map is too small to fit in even a single message, so "
                    + "log cleaning will never make progress. You can increase " + DEDUPE_BUFFER_SIZE
                    + " or decrease " + THREADS);
        }
        return Optional.empty();
    }

    static CleanerSettings parse(ValueParser values) {
        CleanerSettings settings = new CleanerSettings(values.booleanValue(ENABLE), values.intValue(THREADS, 0),
                values.longValue(BACKOFF_MS, 0L), values.doubleValue(IO_MAX_BYTES_PER_SECOND),
                values.longValue(DEDUPE_BUFFER_SIZE, Long.MIN_VALUE), values.doubleValue(LOAD_FACTOR),
                values.intValue(IO_BUFFER_SIZE, 0));
        Optional<String> problem = settings.problem();
        if (problem.isPresent()) {
            throw new ConfigException(problem.get());
        }
        return settings;
    }

    /** These settings with the live keys of {@code props} (as dynamic configs set them) over them. */
    public CleanerSettings with(Map<String, String> props) {
        ValueParser values = new ValueParser(props);
        return new CleanerSettings(enabled, props.containsKey(THREADS) ? values.intValue(THREADS, 0) : threads,
                props.containsKey(BACKOFF_MS) ? values.longValue(BACKOFF_MS, 0L) : backoffMs,
                props.containsKey(IO_MAX_BYTES_PER_SECOND) ? values.doubleValue(IO_MAX_BYTES_PER_SECOND)
                        : ioMaxBytesPerSecond,
                props.containsKey(DEDUPE_BUFFER_SIZE) ? values.longValue(DEDUPE_BUFFER_SIZE, Long.MIN_VALUE)
                        : dedupeBufferSize,
                props.containsKey(LOAD_FACTOR) ? values.doubleValue(LOAD_FACTOR) : loadFactor,
                props.containsKey(IO_BUFFER_SIZE) ? values.intValue(IO_BUFFER_SIZE, 0) : ioBufferSize);
    }
}
