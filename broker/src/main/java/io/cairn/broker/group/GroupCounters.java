package io.cairn.broker.group;

import java.util.concurrent.atomic.LongAdder;

/**
 * The cumulative counts behind Kafka's {@code group-coordinator-metrics} meters, shared by the coordinator's shards:
 * offsets committed by OffsetCommit, offsets expired (KIP-211) and deleted by OffsetDelete, and classic rebalances
 * completed (the group became Stable with its assignment stored). The rates are the counts' rates.
 *
 * <p>Thread-safe: incremented on the shard threads, read by metrics scrapes.
 */
public final class GroupCounters {

    private final LongAdder offsetCommits = new LongAdder();
    private final LongAdder offsetExpirations = new LongAdder();
    private final LongAdder offsetDeletions = new LongAdder();
    private final LongAdder completedRebalances = new LongAdder();

    void offsetsCommitted(int count) {
        offsetCommits.add(count);
    }

    void offsetsExpired(int count) {
        offsetExpirations.add(count);
    }

    void offsetsDeleted(int count) {
        offsetDeletions.add(count);
    }

    void rebalanceCompleted() {
        completedRebalances.increment();
    }

    public long offsetCommits() {
        return offsetCommits.sum();
    }

    public long offsetExpirations() {
        return offsetExpirations.sum();
    }

    public long offsetDeletions() {
        return offsetDeletions.sum();
    }

    public long completedRebalances() {
        return completedRebalances.sum();
    }
}
