package io.cairn.metadata.controller;

import io.cairn.wire.protocol.ApiMessage;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The responses of the most recently applied controller commands by request id, derived from the log: the apply
 * path records the (request id, response) each log entry carries, in log order, keeping the last {@code capacity}
 * ids, so every replica that applied the same entries holds the same cache. The active controller consults it before
 * deciding a command, so a retry of a command that already committed (its first try timed out at the sender) returns
 * the first response and appends nothing. The cache is not part of snapshots: after a node restores from a snapshot
 * it is empty and holds only the entries applied since, which is acceptable because it only ever suppresses
 * duplicates at decision time (it never changes how an entry is applied, so replicas cannot diverge through it).
 * Thread-safe: written by the apply thread, read by the controller thread.
 */
public final class AppliedCommands {

    /** How many request ids are remembered by default. */
    public static final int DEFAULT_CAPACITY = 10_000;

    private final int capacity;
    private final Map<UUID, ApiMessage> responses;

    public AppliedCommands() {
        this(DEFAULT_CAPACITY);
    }

    public AppliedCommands(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        this.capacity = capacity;
        this.responses = new LinkedHashMap<>();
    }

    /** Records the response of an applied command; a request id already present keeps its first response. */
    public synchronized void record(UUID requestId, ApiMessage response) {
        if (requestId == null || response == null || responses.containsKey(requestId)) {
            return;
        }
        responses.put(requestId, response);
        if (responses.size() > capacity) {
            UUID eldest = responses.keySet().iterator().next();
            responses.remove(eldest);
        }
    }

    /** The response of the applied command with this request id, or null when it is not (or no longer) known. */
    public synchronized ApiMessage response(UUID requestId) {
        return requestId == null ? null : responses.get(requestId);
    }

    /** How many request ids are remembered. */
    public synchronized int size() {
        return responses.size();
    }
}
