package io.cairn.broker.fetch;

import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * An incremental fetch session (KIP-227, Kafka's {@code FetchSession}): its id, its epoch (the next request must
 * carry it), whether a follower owns it (privileged) and whether it names topics by id (v13+), and its partitions
 * in fetch order. Partitions that returned records move to the end, so a byte-limited response does not starve the
 * later ones.
 *
 * <p>Thread-safety: mutable state is guarded by this object's monitor; the {@link FetchSessionCache} lock may be
 * taken before it, never after.
 */
final class FetchSession {

    /** The epoch that creates a session (a full fetch). */
    static final int INITIAL_EPOCH = 0;
    /** The epoch that closes a session, or asks for none. */
    static final int FINAL_EPOCH = -1;
    /** The session id of "no session". */
    static final int INVALID_SESSION_ID = 0;

    private final int id;
    private final boolean privileged;
    private final boolean usesTopicIds;
    private final long creationMs;
    private final LinkedHashMap<TopicIdPartition, CachedPartition> partitions;
    private long lastUsedMs;
    private int epoch;
    /** The size the cache accounted for this session, or -1 while it is not in the cache; guarded by the cache. */
    private int cachedSize = -1;

    FetchSession(int id, boolean privileged, boolean usesTopicIds, long nowMs,
                 LinkedHashMap<TopicIdPartition, CachedPartition> partitions) {
        this.id = id;
        this.privileged = privileged;
        this.usesTopicIds = usesTopicIds;
        this.creationMs = nowMs;
        this.lastUsedMs = nowMs;
        this.partitions = partitions;
        this.epoch = nextEpoch(INITIAL_EPOCH);
    }

    /** The epoch after {@code epoch}: 1 after the initial one, wrapping from MAX_VALUE to 1 (Kafka's rule). */
    static int nextEpoch(int epoch) {
        if (epoch < 0) {
            return FINAL_EPOCH;
        }
        return epoch == Integer.MAX_VALUE ? 1 : epoch + 1;
    }

    int id() {
        return id;
    }

    boolean privileged() {
        return privileged;
    }

    boolean usesTopicIds() {
        return usesTopicIds;
    }

    long creationMs() {
        return creationMs;
    }

    synchronized long lastUsedMs() {
        return lastUsedMs;
    }

    synchronized void setLastUsedMs(long nowMs) {
        this.lastUsedMs = nowMs;
    }

    synchronized int epoch() {
        return epoch;
    }

    synchronized void setEpoch(int newEpoch) {
        this.epoch = newEpoch;
    }

    synchronized int size() {
        return partitions.size();
    }

    synchronized boolean isEmpty() {
        return partitions.isEmpty();
    }

    int cachedSize() {
        return cachedSize;
    }

    void setCachedSize(int size) {
        this.cachedSize = size;
    }

    /** Adds the partitions of an incremental request or updates their parameters, then drops the forgotten ones. */
    synchronized void update(Map<TopicIdPartition, PartitionFetch> fetchData, List<TopicIdPartition> toForget) {
        fetchData.forEach((tp, fetch) -> {
            CachedPartition cached = partitions.get(tp);
            if (cached == null) {
                partitions.put(tp, new CachedPartition(tp, fetch));
            } else {
                cached.updateRequest(fetch);
            }
        });
        for (TopicIdPartition tp : toForget) {
            partitions.remove(tp);
        }
    }

    /** The session's partitions in fetch order, with names of ids resolved where the metadata now knows them. */
    synchronized List<Map.Entry<TopicIdPartition, PartitionFetch>> partitionsToFetch(
            Function<Uuid, String> topicNames) {
        List<Map.Entry<TopicIdPartition, PartitionFetch>> out = new ArrayList<>(partitions.size());
        for (CachedPartition cached : partitions.values()) {
            if (usesTopicIds) {
                cached.maybeResolveName(topicNames);
            }
            out.add(Map.entry(cached.topicIdPartition(), cached.fetch()));
        }
        return out;
    }

    /** The cached partition, or null; the caller holds this session's monitor. */
    CachedPartition cached(TopicIdPartition tp) {
        return partitions.get(tp);
    }

    /** Moves a partition that returned records to the end of the fetch order; the caller holds the monitor. */
    void moveToEnd(TopicIdPartition tp) {
        CachedPartition cached = partitions.remove(tp);
        if (cached != null) {
            partitions.put(tp, cached);
        }
    }

    @Override
    public synchronized String toString() {
        return "FetchSession(id=" + id + ", privileged=" + privileged + ", partitions=" + partitions.size()
            + ", usesTopicIds=" + usesTopicIds + ", creationMs=" + creationMs + ", lastUsedMs=" + lastUsedMs
            + ", epoch=" + epoch + ")";
    }
}
