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
 * @param loadChunkBytes how many bytes loading reads from the log at a time
 * @param <S>          the kind's shard type
 * @param <R>          the kind's record type
 */
public record CoordinatorRuntimeConfig<S extends CoordinatorShard<R>, R>(String name, String topic,
                                                                        CoordinatorRuntimeSettings settings,
                                                                        CoordinatorSerde<R> serde,
                                                                        Function<ShardContext<R>, S> shardFactory,
                                                                        int loadChunkBytes) {

    /** A kind that loads {@link CoordinatorLoader#DEFAULT_CHUNK_BYTES} at a time. */
    public CoordinatorRuntimeConfig(String name, String topic, CoordinatorRuntimeSettings settings,
                                    CoordinatorSerde<R> serde, Function<ShardContext<R>, S> shardFactory) {
        this(name, topic, settings, serde, shardFactory, CoordinatorLoader.DEFAULT_CHUNK_BYTES);
    }

    public CoordinatorRuntimeConfig {
        if (loadChunkBytes <= 0) {
            throw new IllegalArgumentException("Invalid load chunk size " + loadChunkBytes);
        }
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(topic, "topic");
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(serde, "serde");
        Objects.requireNonNull(shardFactory, "shardFactory");
    }
}
