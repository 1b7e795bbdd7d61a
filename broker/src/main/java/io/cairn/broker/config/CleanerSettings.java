package io.cairn.broker.config;

import java.util.List;
import java.util.Map;

/**
 * The log cleaner's settings Cairn acts on, Kafka's keys: {@code log.cleaner.enable}, {@code log.cleaner.threads},
 * {@code log.cleaner.backoff.ms} and {@code log.cleaner.io.max.bytes.per.second}. Immutable.
 *
 * @param enabled             whether the cleaner runs at all (compacted topics are not cleaned without it)
 * @param threads             cleaner threads; 0 runs none, as Kafka
 * @param backoffMs           how long a thread waits when it found no work
 * @param ioMaxBytesPerSecond the cleaner threads' read and write rate together
 */
public record CleanerSettings(boolean enabled, int threads, long backoffMs, double ioMaxBytesPerSecond) {

    public static final String ENABLE = "log.cleaner.enable";
    public static final String THREADS = "log.cleaner.threads";
    public static final String BACKOFF_MS = "log.cleaner.backoff.ms";
    public static final String IO_MAX_BYTES_PER_SECOND = "log.cleaner.io.max.bytes.per.second";
    /** The keys that change live (Kafka's {@code LogCleaner.ReconfigurableConfigs} that Cairn acts on). */
    public static final List<String> LIVE_KEYS = List.of(THREADS, BACKOFF_MS, IO_MAX_BYTES_PER_SECOND);

    /** The threads the log managers start: none when the cleaner is disabled. */
    public int threadsToRun() {
        return enabled ? threads : 0;
    }

    /** The backoff as the log managers take it: at least 1 ms (Kafka's 0 is a thread that never waits). */
    public long scheduledBackoffMs() {
        return Math.max(1, backoffMs);
    }

    static CleanerSettings parse(ValueParser values) {
        return new CleanerSettings(values.booleanValue(ENABLE), values.intValue(THREADS, 0),
                values.longValue(BACKOFF_MS, 0L), values.doubleValue(IO_MAX_BYTES_PER_SECOND));
    }

    /** These settings with the live keys of {@code props} (as dynamic configs set them) over them. */
    public CleanerSettings with(Map<String, String> props) {
        ValueParser values = new ValueParser(props);
        return new CleanerSettings(enabled, props.containsKey(THREADS) ? values.intValue(THREADS, 0) : threads,
                props.containsKey(BACKOFF_MS) ? values.longValue(BACKOFF_MS, 0L) : backoffMs,
                props.containsKey(IO_MAX_BYTES_PER_SECOND) ? values.doubleValue(IO_MAX_BYTES_PER_SECOND)
                        : ioMaxBytesPerSecond);
    }
}
