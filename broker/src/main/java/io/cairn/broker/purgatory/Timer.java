package io.cairn.broker.purgatory;

/**
 * The clock that expires delayed operations (Kafka's {@code Timer}): runs a task once its delay has passed unless it
 * was cancelled first. {@link SystemTimer} is the wall clock on one thread of its own; tests inject a timer they
 * advance by hand, so a timeout is a step of the test and not a sleep.
 *
 * <p>Implementations are thread-safe; tasks run on a thread of the timer's choosing and must be quick.
 */
public interface Timer extends AutoCloseable {

    /**
     * Runs {@code task} after {@code delayMs} milliseconds. Returns the handle that cancels it, or null when the
     * timer is closed (the task then never runs; the caller completes the operation itself).
     */
    Timeout schedule(Runnable task, long delayMs);

    /** Stops the timer; tasks not yet run are dropped. */
    @Override
    void close();

    /** A scheduled task. */
    @FunctionalInterface
    interface Timeout {

        /** Prevents the task from running if it has not started; calling it again does nothing. */
        void cancel();
    }
}
