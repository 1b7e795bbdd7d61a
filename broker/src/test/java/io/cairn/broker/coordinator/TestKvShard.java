package io.cairn.broker.coordinator;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A key-value coordinator shard for runtime tests: records are {@link Kv} pairs, committed writes and replayed
 * records go into {@link #committed}, transactional ones wait in {@link #pending} for their producer's marker. It
 * notes whether two threads ever run it at once. Confined to the shard's thread, except the counters.
 */
final class TestKvShard implements CoordinatorShard<TestKvShard.Kv> {

    /** One record; a null value is a tombstone. */
    record Kv(String key, String value) {
    }

    static final CoordinatorSerde<Kv> SERDE = new CoordinatorSerde<>() {
        @Override
        public byte[] keyBytes(Kv record) {
            return record.key().getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public byte[] valueBytes(Kv record) {
            return record.value() == null ? null : record.value().getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public Optional<Kv> decode(ByteBuffer key, ByteBuffer valueOrNull) {
            return Optional.of(new Kv(StandardCharsets.UTF_8.decode(key.duplicate()).toString(),
                valueOrNull == null ? null : StandardCharsets.UTF_8.decode(valueOrNull.duplicate()).toString()));
        }
    };

    final ShardContext<Kv> ctx;
    final Map<String, String> committed = new HashMap<>();
    final Map<Long, Map<String, String>> pending = new HashMap<>();
    final List<String> events = new ArrayList<>();
    /** Threads that ran this shard's operations. */
    final Set<String> threads = ConcurrentHashMap.newKeySet();
    final AtomicInteger inside = new AtomicInteger();
    final AtomicInteger maxInside = new AtomicInteger();
    /** When set, replay waits for it (to hold a load). */
    private final CountDownLatch replayGate;

    TestKvShard(ShardContext<Kv> ctx, CountDownLatch replayGate) {
        this.ctx = ctx;
        this.replayGate = replayGate;
    }

    /** Runs {@code body} as an operation of this shard, noting the thread and any overlap. */
    <T> T operation(java.util.function.Supplier<T> body) {
        int now = inside.incrementAndGet();
        maxInside.accumulateAndGet(now, Math::max);
        threads.add(Thread.currentThread().getName());
        try {
            return body.get();
        } finally {
            inside.decrementAndGet();
        }
    }

    @Override
    public void replay(long offset, long producerId, short producerEpoch, Kv record) {
        if (replayGate != null) {
            try {
                replayGate.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (producerId >= 0) {
            pending.computeIfAbsent(producerId, p -> new HashMap<>()).put(record.key(), record.value());
        } else {
            committed.put(record.key(), record.value());
        }
    }

    @Override
    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        Map<String, String> ended = pending.remove(producerId);
        events.add((commit ? "commit-" : "abort-") + producerId);
        if (commit && ended != null) {
            committed.putAll(ended);
        }
    }

    @Override
    public void onLoaded() {
        events.add("loaded");
    }

    @Override
    public void onUnloaded() {
        events.add("unloaded");
    }
}
