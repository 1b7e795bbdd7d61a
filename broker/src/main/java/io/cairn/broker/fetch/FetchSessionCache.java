package io.cairn.broker.fetch;

import io.cairn.log.Time;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The broker's incremental fetch sessions (Kafka's {@code FetchSessionCache}), at most
 * {@code max.incremental.fetch.session.cache.slots} (1000) of them. When it is full a new session may evict one that
 * has been unused for {@link #DEFAULT_EVICTION_MS}, else the least valuable evictable one: a follower's session
 * (privileged) beats a consumer's, a larger one beats a smaller one, and a session younger than the eviction time
 * is only evictable by a privileged one when it is not privileged itself. Session ids are random, positive and
 * unique.
 *
 * <p>Thread-safety: every method is synchronized on the cache. A session's own monitor may be taken inside the
 * cache's, never the other way round.
 */
public final class FetchSessionCache {

    private static final Logger LOGGER = LogManager.getLogger(FetchSessionCache.class);
    /** Kafka's {@code max.incremental.fetch.session.cache.slots} default. */
    public static final int DEFAULT_MAX_ENTRIES = 1000;
    /** How long a session must stay unused to be stale, and how old it must be to be evictable (Kafka: 2 min). */
    public static final long DEFAULT_EVICTION_MS = 120_000L;

    private static final Comparator<EvictableKey> BY_VALUE = Comparator.comparing(EvictableKey::privileged)
        .thenComparingInt(EvictableKey::size).thenComparingInt(EvictableKey::id);

    private final int maxEntries;
    private final long evictionMs;
    private final Time time;
    private final Map<Integer, FetchSession> sessions = new HashMap<>();
    private final TreeMap<LastUsedKey, FetchSession> lastUsed =
        new TreeMap<>(Comparator.comparingLong(LastUsedKey::lastUsedMs).thenComparingInt(LastUsedKey::id));
    private final TreeMap<EvictableKey, FetchSession> evictableByAll = new TreeMap<>(BY_VALUE);
    private final TreeMap<EvictableKey, FetchSession> evictableByPrivileged = new TreeMap<>(BY_VALUE);
    private long numPartitions;
    private long evictions;

    public FetchSessionCache(int maxEntries, long evictionMs, Time time) {
        this.maxEntries = maxEntries;
        this.evictionMs = evictionMs;
        this.time = time;
    }

    Time time() {
        return time;
    }

    synchronized FetchSession get(int sessionId) {
        return sessions.get(sessionId);
    }

    /** Number of sessions. */
    public synchronized int size() {
        return sessions.size();
    }

    /** Number of partitions over all sessions. */
    public synchronized long totalPartitions() {
        return numPartitions;
    }

    /** Sessions evicted so far. */
    public synchronized long evictions() {
        return evictions;
    }

    /**
     * Creates a session of {@code size} partitions if there is room or something may be evicted for it; returns its
     * id, or {@link FetchSession#INVALID_SESSION_ID} when no session was created.
     */
    synchronized int maybeCreateSession(boolean privileged, int size, boolean usesTopicIds,
                                        Supplier<LinkedHashMap<TopicIdPartition, CachedPartition>> partitions) {
        long now = time.milliseconds();
        if (sessions.size() >= maxEntries && !tryEvict(privileged, new EvictableKey(privileged, size, 0), now)) {
            LOGGER.debug("No fetch session created for privileged={}, size={}", privileged, size);
            return FetchSession.INVALID_SESSION_ID;
        }
        FetchSession session = new FetchSession(newSessionId(), privileged, usesTopicIds, now, partitions.get());
        sessions.put(session.id(), session);
        touch(session, now);
        LOGGER.debug("Created {}", session);
        return session.id();
    }

    private int newSessionId() {
        int id;
        do {
            id = ThreadLocalRandom.current().nextInt(1, Integer.MAX_VALUE);
        } while (sessions.containsKey(id));
        return id;
    }

    private boolean tryEvict(boolean privileged, EvictableKey key, long now) {
        Map.Entry<LastUsedKey, FetchSession> oldest = lastUsed.firstEntry();
        if (oldest == null) {
            return false;
        }
        if (now - oldest.getKey().lastUsedMs() > evictionMs) {
            LOGGER.debug("Evicting stale {}", oldest.getValue());
            remove(oldest.getValue());
            evictions++;
            return true;
        }
        TreeMap<EvictableKey, FetchSession> candidates = privileged ? evictableByPrivileged : evictableByAll;
        Map.Entry<EvictableKey, FetchSession> least = candidates.firstEntry();
        if (least == null || BY_VALUE.compare(key, least.getKey()) < 0) {
            return false;
        }
        LOGGER.debug("Evicting {} for a new session of {}", least.getValue(), key);
        remove(least.getValue());
        evictions++;
        return true;
    }

    /** Removes the session with this id; returns it, or null. */
    synchronized FetchSession remove(int sessionId) {
        FetchSession session = sessions.get(sessionId);
        return session == null ? null : remove(session);
    }

    synchronized FetchSession remove(FetchSession session) {
        EvictableKey key = evictableKey(session);
        evictableByAll.remove(key);
        evictableByPrivileged.remove(key);
        lastUsed.remove(new LastUsedKey(session.lastUsedMs(), session.id()));
        FetchSession removed = sessions.remove(session.id());
        if (removed != null) {
            numPartitions -= session.cachedSize();
            session.setCachedSize(-1);
        }
        return removed;
    }

    /** Records a use of {@code session}: its last-used time and its size for eviction. */
    synchronized void touch(FetchSession session, long now) {
        lastUsed.remove(new LastUsedKey(session.lastUsedMs(), session.id()));
        session.setLastUsedMs(now);
        lastUsed.put(new LastUsedKey(now, session.id()), session);
        if (session.cachedSize() != -1) {
            EvictableKey old = evictableKey(session);
            evictableByAll.remove(old);
            evictableByPrivileged.remove(old);
            numPartitions -= session.cachedSize();
        }
        session.setCachedSize(session.size());
        EvictableKey key = evictableKey(session);
        boolean old = now - session.creationMs() > evictionMs;
        if (!session.privileged() || old) {
            evictableByPrivileged.put(key, session);
        }
        if (old) {
            evictableByAll.put(key, session);
        }
        numPartitions += session.cachedSize();
    }

    private static EvictableKey evictableKey(FetchSession session) {
        return new EvictableKey(session.privileged(), session.cachedSize(), session.id());
    }

    private record LastUsedKey(long lastUsedMs, int id) {
    }

    private record EvictableKey(boolean privileged, int size, int id) {
    }
}
