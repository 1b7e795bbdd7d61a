package io.cairn.broker.share.partition;

import io.cairn.broker.fetch.PartitionReader;
import io.cairn.broker.fetch.TopicIdPartition;
import io.cairn.broker.group.GroupConfigs;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.purgatory.Timer;
import io.cairn.broker.share.SharePartitionKey;
import io.cairn.broker.share.partition.ShareRecordTypes.AckBatch;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.Partition;
import io.cairn.isr.PartitionListener;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.TimestampAndOffset;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The share-partitions this broker leads (Kafka's {@code SharePartitionManager}): one {@link SharePartition} per
 * (share group, topic partition), created by the first fetch, which reads its state through the
 * {@link StatePersister} at the partition's leader epoch. Only share-partitions whose state the group coordinator
 * initialized stay (a failed read leaves nothing behind), so their number is bounded by the groups' subscriptions.
 * A leadership change of the partition, or a failed write, fences a share-partition and drops it; the next fetch
 * of a new leader reads the state again. Fetches wait in the broker's {@link PartitionPurgatory}
 * ({@link DelayedShareFetch}), woken by the high watermark and by records released or whose locks expired.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class SharePartitionManager implements PartitionListener, AutoCloseable {

    /** What a fetch asks for: Kafka's ShareFetch limits. */
    public record FetchLimits(int maxWaitMs, int minBytes, int maxBytes, int maxRecords) {
    }

    private final ReplicaManager replicas;
    private final PartitionPurgatory purgatory;
    private final PartitionReader reader;
    private final StatePersister persister;
    private final Timer timer;
    private final SharePartitionConfig config;
    private final Function<String, GroupConfigs.Settings> groupSettings;
    private final Map<SharePartitionKey, CompletableFuture<SharePartition>> partitions = new ConcurrentHashMap<>();

    public SharePartitionManager(ReplicaManager replicas, PartitionPurgatory purgatory, StatePersister persister,
                                 Timer timer, SharePartitionConfig config) {
        this(replicas, purgatory, persister, timer, config, group -> new GroupConfigs.Settings(0, 0,
            config.lockDurationMs(), "latest", false));
    }

    /**
     * @param groupSettings a share group's settings ({@link GroupConfigs}: its group-level configs over the
     *                      broker's): the lock duration, where a new share-partition starts and the isolation
     *                      level of its fetches
     */
    public SharePartitionManager(ReplicaManager replicas, PartitionPurgatory purgatory, StatePersister persister,
                                 Timer timer, SharePartitionConfig config,
                                 Function<String, GroupConfigs.Settings> groupSettings) {
        this.groupSettings = groupSettings;
        this.replicas = replicas;
        this.purgatory = purgatory;
        this.reader = new PartitionReader(replicas);
        this.persister = persister;
        this.timer = timer;
        this.config = config;
        replicas.addListener(this);
    }

    /** The settings of {@code groupId}: its group-level configs over the broker's. */
    public GroupConfigs.Settings settings(String groupId) {
        return groupSettings.apply(groupId);
    }

    public SharePartitionConfig config() {
        return config;
    }

    /**
     * The share-partition of {@code groupId} on {@code tp} (a known topic), loading it when new; fails with
     * NOT_LEADER_OR_FOLLOWER when this broker does not lead the partition, UNKNOWN_TOPIC_ID for a topic id that is
     * not the partition's, and the persister's errors as Kafka's {@code fetchPersisterError} maps them.
     */
    public CompletableFuture<SharePartition> sharePartition(String groupId, TopicIdPartition tp) {
        Partition partition = replicas.partition(tp.topicPartition()).orElse(null);
        if (partition == null || !partition.isLeader()) {
            return CompletableFuture.failedFuture(Errors.NOT_LEADER_OR_FOLLOWER.exception());
        }
        if (!tp.topicId().equals(partition.topicId())) {
            return CompletableFuture.failedFuture(Errors.UNKNOWN_TOPIC_ID.exception());
        }
        int leaderEpoch = partition.leaderEpoch();
        SharePartitionKey key = new SharePartitionKey(groupId, tp.topicId(), tp.partition());
        while (true) {
            CompletableFuture<SharePartition> existing = partitions.get(key);
            if (existing == null) {
                CompletableFuture<SharePartition> created = new CompletableFuture<>();
                if (partitions.putIfAbsent(key, created) == null) {
                    load(key, partition, leaderEpoch, created);
                    return created;
                }
                continue;
            }
            if (!existing.isDone() || existing.isCompletedExceptionally()) {
                return existing;
            }
            SharePartition current = existing.join();
            if (current.leaderEpoch() == leaderEpoch && !current.isFenced()) {
                return existing;
            }
            current.fence();
            partitions.remove(key, existing);
        }
    }

    private void load(SharePartitionKey key, Partition partition, int leaderEpoch,
                      CompletableFuture<SharePartition> created) {
        TopicPartition tp = partition.topicPartition();
        persister.read(key, leaderEpoch).whenComplete((state, failure) -> {
            Errors error = failure != null ? Errors.forException(failure) : state.error();
            if (error != Errors.NONE) {
                partitions.remove(key, created);
                created.completeExceptionally(persisterError(error).exception());
                return;
            }
            try {
                GroupConfigs.Settings settings = settings(key.groupId());
                created.complete(new SharePartition(key, leaderEpoch, state, resetOffset(partition, settings),
                    config, () -> settings(key.groupId()).recordLockDurationMs(), timer, persister,
                    sp -> purgatory.checkHighWatermarkWatchers(tp), this::forget));
            } catch (RuntimeException e) {
                partitions.remove(key, created);
                created.completeExceptionally(e);
            }
        });
    }

    /**
     * Where a share-partition without a start offset starts, by its group's {@code share.auto.offset.reset}
     * (Kafka's {@code SharePartition.startOffsetDuringInitialization}): the log start offset for earliest, the
     * first offset of a record at most the duration old for by_duration (the high watermark when there is none),
     * else the high watermark.
     */
    static long resetOffset(Partition partition, GroupConfigs.Settings settings) {
        if (settings.resetToEarliest()) {
            return partition.logStartOffset();
        }
        Optional<Duration> back = settings.resetDuration();
        if (back.isPresent()) {
            long timestamp = System.currentTimeMillis() - back.get().toMillis();
            return partition.fetchOffsetForTimestamp(timestamp, FetchIsolation.HIGH_WATERMARK,
                    partition.leaderEpoch()).map(TimestampAndOffset::offset).orElse(partition.highWatermark());
        }
        return partition.highWatermark();
    }

    /** Kafka's {@code SharePartition.fetchPersisterError}: what a failed state read or write answers. */
    static Errors persisterError(Errors error) {
        switch (error) {
            case NONE:
                return error;
            case NOT_COORDINATOR:
            case COORDINATOR_NOT_AVAILABLE:
            case COORDINATOR_LOAD_IN_PROGRESS:
                return Errors.COORDINATOR_NOT_AVAILABLE;
            case GROUP_ID_NOT_FOUND:
            case UNKNOWN_TOPIC_OR_PARTITION:
                return error;
            case FENCED_LEADER_EPOCH:
            case FENCED_STATE_EPOCH:
                return Errors.NOT_LEADER_OR_FOLLOWER;
            default:
                return Errors.UNKNOWN_SERVER_ERROR;
        }
    }

    private void forget(SharePartition fenced) {
        partitions.computeIfPresent(fenced.key(), (k, f) ->
            f.isDone() && !f.isCompletedExceptionally() && f.join() == fenced ? null : f);
    }

    /**
     * Acquires records of {@code partitions} for {@code memberId}: at once when some can be acquired, else when
     * records arrive, are released or {@code max_wait_ms} passes. Every partition gets a result (an error, or what
     * was acquired, possibly nothing).
     */
    public CompletableFuture<Map<TopicIdPartition, ShareFetchResult>> fetch(String groupId, String memberId,
            List<TopicIdPartition> fetchPartitions, FetchLimits limits) {
        Map<TopicIdPartition, CompletableFuture<SharePartition>> loading = new LinkedHashMap<>();
        for (TopicIdPartition tp : fetchPartitions) {
            loading.put(tp, sharePartition(groupId, tp));
        }
        return CompletableFuture.allOf(loading.values().stream().map(f -> f.handle((v, e) -> null))
                .toArray(CompletableFuture[]::new))
            .thenCompose(ignored -> {
                Map<TopicIdPartition, ShareFetchResult> errors = new LinkedHashMap<>();
                Map<TopicIdPartition, SharePartition> ready = new LinkedHashMap<>();
                loading.forEach((tp, f) -> {
                    if (f.isCompletedExceptionally()) {
                        errors.put(tp, ShareFetchResult.error(Errors.forException(failure(f))));
                    } else {
                        ready.put(tp, f.join());
                    }
                });
                CompletableFuture<Map<TopicIdPartition, ShareFetchResult>> done = new CompletableFuture<>();
                FetchIsolation isolation = settings(groupId).readCommitted() ? FetchIsolation.TXN_COMMITTED
                    : FetchIsolation.HIGH_WATERMARK;
                DelayedShareFetch delayed = new DelayedShareFetch(memberId, ready, limits, replicas, reader, isolation,
                    results -> {
                        Map<TopicIdPartition, ShareFetchResult> all = new LinkedHashMap<>();
                        for (TopicIdPartition tp : fetchPartitions) {
                            ShareFetchResult r = errors.containsKey(tp) ? errors.get(tp) : results.get(tp);
                            if (r != null) {
                                all.put(tp, r);
                            }
                        }
                        done.complete(all);
                    });
                List<TopicPartition> keys = new ArrayList<>(ready.size());
                ready.keySet().forEach(tp -> keys.add(tp.topicPartition()));
                if (ready.isEmpty()) {
                    delayed.forceComplete();
                } else {
                    purgatory.tryCompleteElseWatch(delayed, keys, PartitionPurgatory.WakeOn.HIGH_WATERMARK);
                }
                return done;
            });
    }

    private static Throwable failure(CompletableFuture<?> f) {
        try {
            f.join();
            return null;
        } catch (CompletionException e) {
            return e.getCause() == null ? e : e.getCause();
        }
    }

    /**
     * Acknowledges for {@code memberId}; each partition's outcome (a partition this broker does not lead or whose
     * share-partition cannot be loaded gets that error).
     */
    public CompletableFuture<Map<TopicIdPartition, Errors>> acknowledge(String groupId, String memberId,
            Map<TopicIdPartition, List<AckBatch>> acknowledgements) {
        Map<TopicIdPartition, CompletableFuture<Errors>> futures = new LinkedHashMap<>();
        acknowledgements.forEach((tp, batches) -> futures.put(tp, sharePartition(groupId, tp)
            .thenCompose(sp -> sp.acknowledge(memberId, batches))
            .exceptionally(Errors::forException)));
        return CompletableFuture.allOf(futures.values().toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            Map<TopicIdPartition, Errors> results = new LinkedHashMap<>();
            futures.forEach((tp, f) -> results.put(tp, f.join()));
            return results;
        });
    }

    /** A share session ended: what the member holds of {@code sessionPartitions} goes back. */
    public CompletableFuture<Void> releaseSession(String groupId, String memberId,
                                                  List<TopicIdPartition> sessionPartitions) {
        List<CompletableFuture<Errors>> releases = new ArrayList<>();
        for (TopicIdPartition tp : sessionPartitions) {
            CompletableFuture<SharePartition> f = partitions.get(
                new SharePartitionKey(groupId, tp.topicId(), tp.partition()));
            if (f != null && f.isDone() && !f.isCompletedExceptionally()) {
                releases.add(f.join().releaseAcquired(memberId));
            }
        }
        return CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new));
    }

    /**
     * No member of {@code groupId} has a share session here any more (Kafka's {@code onGroupEmpty}): the group's
     * loaded share-partitions are fenced and leave the cache; the next fetch reads their state again.
     */
    public void onGroupEmpty(String groupId) {
        for (Map.Entry<SharePartitionKey, CompletableFuture<SharePartition>> e : partitions.entrySet()) {
            CompletableFuture<SharePartition> f = e.getValue();
            if (e.getKey().groupId().equals(groupId) && f.isDone() && !f.isCompletedExceptionally()) {
                f.join().fence();
            }
        }
    }

    /** A new leader, or none here: the share-partitions of the partition are fenced. */
    @Override
    public void onLeadershipChanged(Partition partition) {
        TopicPartition tp = partition.topicPartition();
        for (Map.Entry<SharePartitionKey, CompletableFuture<SharePartition>> e : partitions.entrySet()) {
            SharePartitionKey key = e.getKey();
            CompletableFuture<SharePartition> f = e.getValue();
            if (key.partition() != tp.partition() || !key.topicId().equals(partition.topicId()) || !f.isDone()
                    || f.isCompletedExceptionally()) {
                continue;
            }
            SharePartition sp = f.join();
            if (!partition.isLeader() || partition.leaderEpoch() != sp.leaderEpoch()) {
                sp.fence();
            }
        }
    }

    @Override
    public void onHighWatermarkAdvanced(Partition partition) {
        // The purgatory wakes the waiting fetches itself.
    }

    /** How many share-partitions are loaded or loading; for tests and metrics. */
    public int size() {
        return partitions.size();
    }

    /** Fences every share-partition and closes the persister. */
    @Override
    public void close() {
        for (CompletableFuture<SharePartition> f : partitions.values()) {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                f.join().fence();
            }
        }
        partitions.clear();
        persister.close();
    }
}
