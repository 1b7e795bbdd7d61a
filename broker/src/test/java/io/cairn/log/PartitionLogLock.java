package io.cairn.log;

import java.util.concurrent.locks.ReentrantLock;

/** Test hook from the broker's tests: the lock a {@link PartitionLog}'s appends, flushes and state reads take. */
public final class PartitionLogLock {

    private PartitionLogLock() {
    }

    public static ReentrantLock of(PartitionLog log) {
        return log.lock();
    }
}
