package io.cairn.isr;

import io.cairn.metadata.image.BrokerRegistration;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.function.LongSupplier;

/**
 * What a leading {@link Partition} needs to change its ISR, shared by every partition of a broker: the lag after
 * which an in-sync follower is dropped, the channel of ISR changes to the controller, the brokers as the metadata
 * image has them (fenced, in controlled shutdown, broker epoch: who may join an ISR) and this broker's own epoch.
 * Immutable; its parts are thread-safe.
 *
 * @param replicaLagTimeMaxMs   {@code replica.lag.time.max.ms}
 * @param alterPartitionManager where proposed ISR changes go
 * @param brokers               a broker's registration in the current metadata image, if any
 * @param localBrokerEpoch      this broker's epoch (of its current registration)
 */
record IsrContext(long replicaLagTimeMaxMs, AlterPartitionManager alterPartitionManager,
                  IntFunction<Optional<BrokerRegistration>> brokers, LongSupplier localBrokerEpoch) {

    /** Kafka's default {@code replica.lag.time.max.ms}. */
    static final long DEFAULT_REPLICA_LAG_TIME_MAX_MS = 30_000L;
}
