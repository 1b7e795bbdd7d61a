package io.cairn.broker.coordinator;

import java.util.Objects;
import java.util.function.Function;

/**
 * What makes a {@link CoordinatorRuntime} one coordinator kind (groups on {@code __consumer_offsets}, transactions
 * on {@code __transaction_state}). Immutable.
 *
 * @param name         the kind's name in thread names and logs ({@code group-coordinator}: threads
 *                     {@code cairn-group-coordinator-N} and {@code cairn-group-coordinator-loader})
 * @param topic        the internal topic whose partitions this broker leads become shards
 * @param settings     threads, append linger and write timeout
 * @param serde        the byte format of the kind's records
 * @param shardFactory creates the state machine of a shard, given its context
 * @param <S>          the kind's shard type
 * @param <R>          the kind's record type
 */
public record CoordinatorRuntimeConfig<S extends CoordinatorShard<R>, R>(String name, String topic,
                                                                        CoordinatorRuntimeSettings settings,
                                                                        CoordinatorSerde<R> serde,
                                                                        Function<ShardContext<R>, S> shardFactory) {

    public CoordinatorRuntimeConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(serde, "serde");
        Objects.requireNonNull(shardFactory, "shardFactory");
    }
}
