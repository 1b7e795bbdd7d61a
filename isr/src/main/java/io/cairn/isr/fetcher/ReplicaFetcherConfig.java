package io.cairn.isr.fetcher;

/**
 * The follower's {@code replica.*} settings, with Kafka's defaults in {@link #defaults()}. Immutable.
 *
 * @param numFetchers             {@code num.replica.fetchers}: fetcher threads per leader broker (1)
 * @param fetchMaxBytes           {@code replica.fetch.max.bytes}: bytes asked per partition (1 MiB)
 * @param fetchMinBytes           {@code replica.fetch.min.bytes}: bytes a fetch waits for (1)
 * @param fetchWaitMaxMs          {@code replica.fetch.wait.max.ms}: how long a fetch may wait (500)
 * @param fetchBackoffMs          {@code replica.fetch.backoff.ms}: back-off after an error (1000)
 * @param fetchResponseMaxBytes   {@code replica.fetch.response.max.bytes}: bytes asked per response (10 MiB)
 * @param socketTimeoutMs         {@code replica.socket.timeout.ms}: connect and read timeout (30000)
 * @param socketReceiveBufferBytes {@code replica.socket.receive.buffer.bytes}: SO_RCVBUF, -1 for the OS default
 *                                (65536)
 * @param maxResponseBytes        the largest response read: the response limit plus one oversized first batch
 *                                (KIP-74, up to {@code message.max.bytes}) and the partitions' headers
 */
public record ReplicaFetcherConfig(int numFetchers, int fetchMaxBytes, int fetchMinBytes, int fetchWaitMaxMs,
                                   long fetchBackoffMs, int fetchResponseMaxBytes, int socketTimeoutMs,
                                   int socketReceiveBufferBytes, int maxResponseBytes) {

    /** Room for the response's headers and per-partition fields beyond its records. */
    private static final int HEADER_ROOM = 1 << 20;
    /** Kafka's default {@code message.max.bytes}. */
    private static final int DEFAULT_MESSAGE_MAX_BYTES = 1_048_588;

    /** Kafka's defaults. */
    public static ReplicaFetcherConfig defaults() {
        return of(1, 1_048_576, 1, 500, 1_000L, 10_485_760, 30_000, 65_536, DEFAULT_MESSAGE_MAX_BYTES);
    }

    /** The settings, the response bound derived from them and the broker's {@code message.max.bytes}. */
    public static ReplicaFetcherConfig of(int numFetchers, int fetchMaxBytes, int fetchMinBytes, int fetchWaitMaxMs,
                                          long fetchBackoffMs, int fetchResponseMaxBytes, int socketTimeoutMs,
                                          int socketReceiveBufferBytes, int messageMaxBytes) {
        long bound = (long) Math.max(fetchResponseMaxBytes, fetchMaxBytes) + Math.max(messageMaxBytes, fetchMaxBytes)
            + HEADER_ROOM;
        return new ReplicaFetcherConfig(numFetchers, fetchMaxBytes, fetchMinBytes, fetchWaitMaxMs, fetchBackoffMs,
            fetchResponseMaxBytes, socketTimeoutMs, socketReceiveBufferBytes, (int) Math.min(Integer.MAX_VALUE, bound));
    }
}
