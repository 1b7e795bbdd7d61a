package io.cairn.isr;

/** How far a read may go (Kafka's {@code FetchIsolation}): what replicas, consumers and transactional readers see. */
public enum FetchIsolation {
    /** Followers: up to the log end offset. */
    LOG_END,
    /** read_uncommitted consumers: up to the high watermark. */
    HIGH_WATERMARK,
    /** read_committed consumers: up to the last stable offset. */
    TXN_COMMITTED;

    /** The isolation of a consumer's Fetch or ListOffsets {@code isolation_level} (0 uncommitted, 1 committed). */
    public static FetchIsolation ofConsumer(byte isolationLevel) {
        return isolationLevel == 1 ? TXN_COMMITTED : HIGH_WATERMARK;
    }
}
