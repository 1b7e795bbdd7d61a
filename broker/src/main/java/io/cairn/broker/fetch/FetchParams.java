package io.cairn.broker.fetch;

import io.cairn.isr.ClientMetadata;
import io.cairn.isr.FetchIsolation;

/**
 * The request-wide parameters of one fetch (Kafka's {@code FetchParams}). Immutable.
 *
 * @param version        the request version
 * @param replicaId      the fetching broker, or a negative id for consumers (-1)
 * @param maxWaitMs      how long the fetch may wait for {@code minBytes}
 * @param minBytes       the bytes that complete the fetch before {@code maxWaitMs}
 * @param maxBytes       the response's byte limit (a first batch may exceed it)
 * @param isolation      how far reads may go: log end (followers), high watermark or last stable offset (consumers)
 * @param replicaEpoch   the fetching broker's epoch (v15+ {@code ReplicaState.ReplicaEpoch}), -1 when not sent
 * @param clientMetadata the client's rack, id and listener (v11+), null for older versions
 */
public record FetchParams(short version, int replicaId, int maxWaitMs, int minBytes, int maxBytes,
                   FetchIsolation isolation, long replicaEpoch, ClientMetadata clientMetadata) {

    /** A follower's fetch: it reads up to the log end and reports its position. */
    public boolean isFromFollower() {
        return replicaId >= 0;
    }

    /**
     * Kafka's {@code fetchOnlyLeader}: a follower's fetch, and a consumer's older than v11 (it cannot be sent to a
     * preferred read replica); a consumer's v11+ fetch may be served by any replica (KIP-392).
     */
    public boolean fetchOnlyLeader() {
        return isFromFollower() || clientMetadata == null;
    }
}
