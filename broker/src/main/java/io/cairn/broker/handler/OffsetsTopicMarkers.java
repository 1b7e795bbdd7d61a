package io.cairn.broker.handler;

import java.util.concurrent.CompletableFuture;

/**
 * Where WriteTxnMarkers sends the markers of {@code __consumer_offsets} partitions: Kafka 4's group coordinator
 * writes them itself ({@code GroupCoordinator.completeTransaction}), so that its transactional offsets become
 * visible or vanish with the marker. The future fails with the error the partition answers.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface OffsetsTopicMarkers {

    /** Writes a COMMIT ({@code commit}) or ABORT marker of the producer into {@code __consumer_offsets-partition}. */
    CompletableFuture<Void> completeTransaction(int partition, long producerId, short producerEpoch,
            int coordinatorEpoch, boolean commit);
}
