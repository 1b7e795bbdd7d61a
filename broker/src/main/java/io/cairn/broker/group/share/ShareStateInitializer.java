package io.cairn.broker.group.share;

import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import java.util.concurrent.CompletableFuture;

/**
 * Sends a group's InitializeShareGroupState to the share coordinator(s) of its share-partitions (Kafka's
 * {@code Persister.initializeState} as the group coordinator uses it).
 */
public interface ShareStateInitializer extends AutoCloseable {

    /** Completes with true when every share-partition of {@code request} was initialized, false otherwise. */
    CompletableFuture<Boolean> initialize(InitializeShareGroupStateRequestData request);

    /** Stops its connections and threads (the group coordinator closes it). */
    @Override
    default void close() {
    }
}
