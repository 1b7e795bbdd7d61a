package io.cairn.broker.coordinator;

/**
 * The broker settings of one coordinator kind's runtime. Immutable.
 *
 * @param threads        how many threads run the kind's shards ({@code group.coordinator.threads}, Kafka's default
 *                       4); each shard runs on one of them at a time
 * @param appendLingerMs how long a batch stays open for more operations' records
 *                       ({@code group.coordinator.append.linger.ms}, Kafka 4.1's default 5); 0 appends every
 *                       operation's records at once
 * @param writeTimeoutMs how long a write waits for the high watermark ({@code offsets.commit.timeout.ms}, default
 *                       5000): then it fails with COORDINATOR_NOT_AVAILABLE
 */
public record CoordinatorRuntimeSettings(int threads, int appendLingerMs, long writeTimeoutMs) {

    public CoordinatorRuntimeSettings {
        if (threads < 1) {
            throw new IllegalArgumentException("A coordinator needs at least one thread, not " + threads);
        }
        if (appendLingerMs < 0 || writeTimeoutMs <= 0) {
            throw new IllegalArgumentException("Invalid append linger " + appendLingerMs + " ms or write timeout "
                + writeTimeoutMs + " ms");
        }
    }
}
