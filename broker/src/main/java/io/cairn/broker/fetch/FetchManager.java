package io.cairn.broker.fetch;

import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Turns a fetch's session id and epoch into a {@link FetchContext} (Kafka's {@code FetchManager.newContext}): epoch 0
 * is a full fetch that closes any session it names and may open a new one; epoch -1 is a fetch without a session;
 * any other epoch continues the named session, which must exist (FETCH_SESSION_ID_NOT_FOUND), expect this epoch
 * (INVALID_FETCH_SESSION_EPOCH) and use topic ids exactly when the request version does
 * (FETCH_SESSION_TOPIC_ID_ERROR).
 *
 * <p>Thread-safety: thread-safe; the cache and each session are locked where they are read or changed.
 */
final class FetchManager {

    private static final Logger LOGGER = LogManager.getLogger(FetchManager.class);

    private final FetchSessionCache cache;

    FetchManager(FetchSessionCache cache) {
        this.cache = cache;
    }

    FetchContext newContext(short version, int sessionId, int epoch, boolean fromFollower,
                            Map<TopicIdPartition, PartitionFetch> fetchData, List<TopicIdPartition> toForget,
                            Function<Uuid, String> topicNames) {
        boolean usesTopicIds = version >= 13;
        if (epoch == FetchSession.INITIAL_EPOCH || epoch == FetchSession.FINAL_EPOCH) {
            if (sessionId != FetchSession.INVALID_SESSION_ID && cache.remove(sessionId) != null) {
                LOGGER.debug("Removed fetch session {}", sessionId);
            }
            if (epoch == FetchSession.FINAL_EPOCH) {
                return new FetchContext.Sessionless(fetchData);
            }
            return new FetchContext.Full(cache, fetchData, usesTopicIds, fromFollower);
        }
        synchronized (cache) {
            FetchSession session = cache.get(sessionId);
            if (session == null) {
                LOGGER.debug("Session error for {}: no such session ID found", sessionId);
                return new FetchContext.SessionError(Errors.FETCH_SESSION_ID_NOT_FOUND);
            }
            synchronized (session) {
                if (session.epoch() != epoch) {
                    LOGGER.debug("Session error for {}: expected epoch {}, but got {}", sessionId, session.epoch(),
                        epoch);
                    return new FetchContext.SessionError(Errors.INVALID_FETCH_SESSION_EPOCH);
                }
                if (session.usesTopicIds() != usesTopicIds) {
                    LOGGER.debug("Session error for {}: it {} topic ids, but request version {} {}", sessionId,
                        session.usesTopicIds() ? "uses" : "does not use", version,
                        usesTopicIds ? "does" : "does not");
                    return new FetchContext.SessionError(Errors.FETCH_SESSION_TOPIC_ID_ERROR);
                }
                session.update(fetchData, toForget);
                if (session.isEmpty()) {
                    cache.remove(session);
                    return new FetchContext.Sessionless(fetchData);
                }
                cache.touch(session, cache.time().milliseconds());
                session.setEpoch(FetchSession.nextEpoch(session.epoch()));
                return new FetchContext.Incremental(session, epoch, topicNames);
            }
        }
    }
}
