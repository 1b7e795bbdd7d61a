package io.cairn.metadata.controller;

import io.cairn.wire.protocol.ApiMessage;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The replicated metadata log as the active controller sees it. The Ratis implementation lives in
 * {@code io.cairn.metadata.ratis}; the simulation test has an in-memory one. Implementations are thread-safe.
 */
public interface MetadataLog {

    /**
     * Appends one batch of records as one log entry, if this node is still the leader of {@code term}.
     *
     * @return a future completed with the entry's index once the entry is committed <em>and applied</em> to this
     *         node's image, or completed exceptionally when the entry may not commit (leadership lost, timeout)
     */
    CompletableFuture<Long> append(long term, List<ApiMessage> records);

    /**
     * Appends the records of one controller command together with its request id and response, so that every
     * replica's apply path can remember the response ({@link AppliedCommands}). A log that does not carry them
     * appends the records alone.
     */
    default CompletableFuture<Long> append(long term, List<ApiMessage> records, UUID requestId,
                                           ApiMessage response) {
        return append(term, records);
    }
}
