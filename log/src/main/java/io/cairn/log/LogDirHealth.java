package io.cairn.log;

import io.cairn.wire.error.KafkaStorageException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whether one log directory still takes writes (Kafka's {@code LogDirFailureChannel}, for one directory). The first
 * write to a partition of the directory that fails with an I/O error (a full disk, a failed device, a file system
 * remounted read-only) marks the directory failed and tells the {@link LogDirFailureListener} once. From then on
 * every append, roll, flush and truncation of its partitions is refused with {@link KafkaStorageException}
 * ({@code KAFKA_STORAGE_ERROR}) before it touches a file: a failed write may have left part of a batch past the
 * log's end, and nothing may be written after it until a restart's recovery has cut it off. A directory does not
 * come back online while the process lives, as in Kafka.
 *
 * <p>Thread-safe.
 */
public final class LogDirHealth {

    private final LogDirFailureListener listener;
    /** What failed first; null while the directory is online. */
    private final AtomicReference<String> failure = new AtomicReference<>();

    public LogDirHealth(LogDirFailureListener listener) {
        this.listener = listener;
    }

    /** A directory whose failure nobody is told of (tests, tools). */
    public static LogDirHealth unobserved() {
        return new LogDirHealth(LogDirFailureListener.NONE);
    }

    public boolean isOnline() {
        return failure.get() == null;
    }

    /** Throws {@code KAFKA_STORAGE_ERROR} when the directory has failed; {@code logPrefix} names the partition. */
    public void ensureOnline(String logPrefix) {
        String first = failure.get();
        if (first != null) {
            throw new KafkaStorageException(logPrefix + "the log directory is offline after a failed write: " + first);
        }
    }

    /**
     * Marks {@code logDir} failed because {@code message} (a write of one of its partitions) failed with
     * {@code cause}; the first failure tells the listener. Returns the exception for the caller to throw.
     */
    public KafkaStorageException fail(Path logDir, String message, Throwable cause) {
        String what = message + ": " + cause;
        if (failure.compareAndSet(null, what)) {
            listener.onLogDirFailure(logDir, message, cause);
        }
        return new KafkaStorageException(message, cause);
    }
}
