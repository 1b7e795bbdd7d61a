package io.cairn.log;

import java.nio.file.Path;

/**
 * Told once when a log directory fails (see {@link LogDirHealth}): the broker's reaction to a full or failed disk.
 * Called on the thread whose write failed, with the partition's lock held; implementations must only hand the
 * failure on (Kafka's {@code LogDirFailureChannel} queue), never block or touch the log.
 */
@FunctionalInterface
public interface LogDirFailureListener {

    /** A listener that does nothing: the directory still refuses writes once failed. */
    LogDirFailureListener NONE = (logDir, message, cause) -> { };

    /** {@code logDir} failed: {@code message} says which write, {@code cause} is the I/O error. */
    void onLogDirFailure(Path logDir, String message, Throwable cause);
}
