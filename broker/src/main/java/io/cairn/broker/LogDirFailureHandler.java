package io.cairn.broker;

import io.cairn.log.LogDirFailureListener;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.function.IntConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * What the broker does when a log directory fails (a write to it failed: a full disk, a failed device; see
 * {@link io.cairn.log.LogDirHealth}): Kafka's {@code LogDirFailureHandler} thread. The failing request has already
 * been answered {@code KAFKA_STORAGE_ERROR} and the directory refuses every further write; this thread, told
 * through a queue so that the writer never blocks, logs the failure and halts the process with exit code 1.
 *
 * <p>A failed write of the metadata (Raft) log comes here too ({@link #onMetadataLogFailure}) and halts the same way.
 *
 * <p>Halting is what Kafka does when the failed directory holds the metadata log or was its last live one, which
 * covers every broker with one log directory. With several, Kafka 4.1 takes only the failed directory's replicas
 * offline and tells the controller (KIP-858); Cairn does not yet, and halts then too, so that the controller fences
 * the broker and elects new leaders from the other replicas instead of leaving partitions led by a broker that
 * cannot write them. The next start's recovery cuts off whatever the failed write left past the last whole batch.
 *
 * <p>Its thread is a daemon blocked on the queue until a failure comes, or {@link #close} at a clean shutdown.
 *
 * <p>Thread-safety: thread-safe.
 */
final class LogDirFailureHandler implements LogDirFailureListener {

    private static final Logger LOGGER = LogManager.getLogger(LogDirFailureHandler.class);
    static final String THREAD_NAME = "LogDirFailureHandler";

    private record Failure(Path logDir, String message, Throwable cause, boolean metadataLog) { }

    private final List<Path> logDirs;
    private final IntConsumer halt;
    private final BlockingQueue<Failure> failures = new ArrayBlockingQueue<>(1);
    private final Thread thread;

    /** Halts the JVM ({@link Runtime#halt}) on the first failure of one of {@code logDirs}. */
    LogDirFailureHandler(List<Path> logDirs) {
        this(logDirs, status -> Runtime.getRuntime().halt(status));
    }

    LogDirFailureHandler(List<Path> logDirs, IntConsumer halt) {
        this.logDirs = List.copyOf(logDirs);
        this.halt = halt;
        this.thread = new Thread(this::run, THREAD_NAME);
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void onLogDirFailure(Path logDir, String message, Throwable cause) {
        // Only the first failure matters: the process ends on it. A full queue drops the others.
        failures.offer(new Failure(logDir, message, cause, false));
    }

    /** A write to the metadata (Raft) log in {@code metadataLogDir} failed ({@code MetadataNode.logFailure}). */
    void onMetadataLogFailure(Path metadataLogDir, Throwable cause) {
        failures.offer(new Failure(metadataLogDir, "a write to the metadata log failed", cause, true));
    }

    /** Ends the thread at a clean shutdown; a failure being handled still halts. */
    void close() {
        thread.interrupt();
    }

    private void run() {
        Failure failure;
        try {
            failure = failures.take();
        } catch (InterruptedException e) {
            return;
        }
        LOGGER.error("Error while writing to the log dir {}: {}", failure.logDir(), failure.message(),
                failure.cause());
        // Kafka's words (logged at ERROR, as its fatal() is), so that what operators search for finds it
        if (failure.metadataLog()) {
            LOGGER.error("Shutdown broker because the metadata log dir {} has failed", failure.logDir());
        } else if (logDirs.size() == 1) {
            LOGGER.error("Shutdown broker because all log dirs in {} have failed", failure.logDir());
        } else {
            LOGGER.error("Shutdown broker because the log dir {} has failed (log dirs: {}; Cairn does not take one "
                    + "log dir offline alone)", failure.logDir(), logDirs);
        }
        halt.accept(1);
    }
}
