package io.cairn.broker.handler;

/**
 * Receives the error codes a response carries, for the per-API error counts (Kafka's {@code ErrorsPerSec}, fed by
 * {@code AbstractResponse.errorCounts}). Called on the thread that writes the response.
 */
@FunctionalInterface
public interface ErrorCounter {

    /** One occurrence of {@code errorCode} (0 for NONE). */
    void count(short errorCode);
}
