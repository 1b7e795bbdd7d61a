package io.cairn.broker.share.partition;

import io.cairn.broker.fetch.TopicIdPartition;
import io.cairn.wire.error.Errors;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The share sessions of this broker (Kafka's {@code ShareSessionCache}): one per (share group, member), at most
 * {@code group.share.max.share.sessions}. A ShareFetch of epoch 0 opens a session (replacing the member's old one)
 * with the partitions it names; later requests carry the session's epoch, which each one moves on (1, 2, ...,
 * wrapping to 1), add the partitions they name and drop the forgotten ones; epoch -1 closes it, and so does the
 * close of the connection that opened it. The errors are
 * Kafka's: SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED.
 *
 * <p>Thread-safety: thread-safe (this object's monitor).
 */
public final class ShareSessionCache {

    /** Kafka's ShareRequestMetadata epochs. */
    public static final int INITIAL_EPOCH = 0;
    public static final int FINAL_EPOCH = -1;

    /** A session's key. */
    public record Key(String groupId, String memberId) {
    }

    /** An outcome: the partitions to fetch (a copy) or an error. */
    public record Outcome(Errors error, List<TopicIdPartition> partitions) {

        static Outcome failed(Errors error) {
            return new Outcome(error, List.of());
        }
    }

    private static final class Session {
        int epoch;
        String connectionId;
        final Set<TopicIdPartition> partitions = new LinkedHashSet<>();
    }

    private final int maxSessions;
    private final Map<Key, Session> sessions = new HashMap<>();

    public ShareSessionCache(int maxSessions) {
        this.maxSessions = maxSessions;
    }

    /** The epoch after {@code epoch} (Kafka's {@code ShareRequestMetadata.nextEpoch}). */
    static int nextEpoch(int epoch) {
        if (epoch < 0) {
            return epoch;
        }
        return epoch == Integer.MAX_VALUE ? 1 : epoch + 1;
    }

    /**
     * The session context of a ShareFetch: opens (epoch 0), checks and updates (epoch > 0) or checks the session
     * to be closed (epoch -1, whose request may not name partitions: INVALID_REQUEST). The outcome's partitions are
     * those to fetch: the session's after the update; none when closing.
     */
    public synchronized Outcome fetchContext(Key key, int epoch, Collection<TopicIdPartition> toFetch,
                                             Collection<TopicIdPartition> toForget, String connectionId) {
        if (epoch == FINAL_EPOCH) {
            if (!toFetch.isEmpty()) {
                return Outcome.failed(Errors.INVALID_REQUEST);
            }
            return sessions.containsKey(key) ? new Outcome(Errors.NONE, List.of())
                : Outcome.failed(Errors.SHARE_SESSION_NOT_FOUND);
        }
        if (epoch == INITIAL_EPOCH) {
            sessions.remove(key);
            if (sessions.size() >= maxSessions) {
                return Outcome.failed(Errors.SHARE_SESSION_LIMIT_REACHED);
            }
            Session session = new Session();
            session.partitions.addAll(toFetch);
            session.epoch = nextEpoch(INITIAL_EPOCH);
            session.connectionId = connectionId;
            sessions.put(key, session);
            return new Outcome(Errors.NONE, new ArrayList<>(session.partitions));
        }
        Session session = sessions.get(key);
        if (session == null) {
            return Outcome.failed(Errors.SHARE_SESSION_NOT_FOUND);
        }
        if (session.epoch != epoch) {
            return Outcome.failed(Errors.INVALID_SHARE_SESSION_EPOCH);
        }
        session.partitions.addAll(toFetch);
        session.partitions.removeAll(toForget);
        session.epoch = nextEpoch(session.epoch);
        return new Outcome(Errors.NONE, new ArrayList<>(session.partitions));
    }

    /**
     * The session check of a ShareAcknowledge (Kafka's {@code acknowledgeSessionUpdate}): epoch 0 is
     * INVALID_SHARE_SESSION_EPOCH, an unknown session SHARE_SESSION_NOT_FOUND, epoch -1 leaves the session to be
     * closed, any other epoch must be the session's and moves it on.
     */
    public synchronized Errors acknowledgeContext(Key key, int epoch) {
        if (epoch == INITIAL_EPOCH) {
            return Errors.INVALID_SHARE_SESSION_EPOCH;
        }
        Session session = sessions.get(key);
        if (session == null) {
            return Errors.SHARE_SESSION_NOT_FOUND;
        }
        if (epoch == FINAL_EPOCH) {
            return Errors.NONE;
        }
        if (epoch != session.epoch) {
            return Errors.INVALID_SHARE_SESSION_EPOCH;
        }
        session.epoch = nextEpoch(session.epoch);
        return Errors.NONE;
    }

    /** Whether some member of {@code groupId} has a session. */
    public synchronized boolean hasGroup(String groupId) {
        return sessions.keySet().stream().anyMatch(k -> k.groupId().equals(groupId));
    }

    /** Closes a session; returns its partitions (none when there was no session). */
    public synchronized List<TopicIdPartition> remove(Key key) {
        Session session = sessions.remove(key);
        return session == null ? List.of() : new ArrayList<>(session.partitions);
    }

    /**
     * The connection that opened sessions closed: they end (Kafka 4.1's connection disconnect listener). Returns
     * each removed session's partitions.
     */
    public synchronized Map<Key, List<TopicIdPartition>> removeConnection(String connectionId) {
        Map<Key, List<TopicIdPartition>> removed = new HashMap<>();
        sessions.entrySet().removeIf(e -> {
            if (!connectionId.equals(e.getValue().connectionId)) {
                return false;
            }
            removed.put(e.getKey(), new ArrayList<>(e.getValue().partitions));
            return true;
        });
        return removed;
    }

    /** How many sessions are open. */
    public synchronized int size() {
        return sessions.size();
    }
}
