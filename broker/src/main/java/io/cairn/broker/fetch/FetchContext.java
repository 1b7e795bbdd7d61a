package io.cairn.broker.fetch;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.NodeEndpoint;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * How one fetch relates to the fetch sessions (Kafka's {@code FetchContext}): which partitions to read, and how the
 * response is made from what was read (a new session, an incremental response that omits unchanged partitions, or
 * a session error). {@link #respond} takes ownership of the records in {@code updates}: those it leaves out of the
 * response it releases.
 *
 * <p>Thread-safety: a context serves one request; the session it may refer to is locked where it is touched.
 */
sealed interface FetchContext {

    /** The partitions to read, in fetch order. */
    List<Map.Entry<TopicIdPartition, PartitionFetch>> partitions();

    /** The response for the read results {@code updates} (in the order of {@link #partitions()}, errors last). */
    FetchResponseData respond(LinkedHashMap<TopicIdPartition, PartitionData> updates, List<NodeEndpoint> endpoints);

    private static void releaseAll(Map<TopicIdPartition, PartitionData> updates) {
        updates.values().forEach(FetchResponses::release);
    }

    /** A session error (unknown id, wrong epoch, topic-id mismatch): no partitions, the error at the top level. */
    record SessionError(Errors error) implements FetchContext {

        @Override
        public List<Map.Entry<TopicIdPartition, PartitionFetch>> partitions() {
            return List.of();
        }

        @Override
        public FetchResponseData respond(LinkedHashMap<TopicIdPartition, PartitionData> updates,
                                         List<NodeEndpoint> endpoints) {
            releaseAll(updates);
            return FetchResponses.of(error, FetchSession.INVALID_SESSION_ID, Map.of(), endpoints);
        }
    }

    /** A fetch without a session (epoch -1, or an incremental fetch that forgot every partition). */
    record Sessionless(Map<TopicIdPartition, PartitionFetch> fetchData) implements FetchContext {

        @Override
        public List<Map.Entry<TopicIdPartition, PartitionFetch>> partitions() {
            return new ArrayList<>(fetchData.entrySet());
        }

        @Override
        public FetchResponseData respond(LinkedHashMap<TopicIdPartition, PartitionData> updates,
                                         List<NodeEndpoint> endpoints) {
            return FetchResponses.of(Errors.NONE, FetchSession.INVALID_SESSION_ID, updates, endpoints);
        }
    }

    /** A full fetch (epoch 0): answers every partition and tries to create a session of them. */
    record Full(FetchSessionCache cache, Map<TopicIdPartition, PartitionFetch> fetchData, boolean usesTopicIds,
                boolean fromFollower) implements FetchContext {

        @Override
        public List<Map.Entry<TopicIdPartition, PartitionFetch>> partitions() {
            return new ArrayList<>(fetchData.entrySet());
        }

        @Override
        public FetchResponseData respond(LinkedHashMap<TopicIdPartition, PartitionData> updates,
                                         List<NodeEndpoint> endpoints) {
            int sessionId = cache.maybeCreateSession(fromFollower, updates.size(), usesTopicIds, () -> {
                LinkedHashMap<TopicIdPartition, CachedPartition> cached = new LinkedHashMap<>();
                updates.forEach((tp, data) -> cached.put(tp, new CachedPartition(tp, fetchData.get(tp), data)));
                return cached;
            });
            return FetchResponses.of(Errors.NONE, sessionId, updates, endpoints);
        }
    }

    /** An incremental fetch of an existing session: answers only partitions with something new. */
    final class Incremental implements FetchContext {

        private static final Logger LOGGER = LogManager.getLogger(Incremental.class);

        private final FetchSession session;
        private final int requestEpoch;
        private final Function<Uuid, String> topicNames;

        Incremental(FetchSession session, int requestEpoch, Function<Uuid, String> topicNames) {
            this.session = session;
            this.requestEpoch = requestEpoch;
            this.topicNames = topicNames;
        }

        @Override
        public List<Map.Entry<TopicIdPartition, PartitionFetch>> partitions() {
            return session.partitionsToFetch(topicNames);
        }

        @Override
        public FetchResponseData respond(LinkedHashMap<TopicIdPartition, PartitionData> updates,
                                         List<NodeEndpoint> endpoints) {
            synchronized (session) {
                int expected = FetchSession.nextEpoch(requestEpoch);
                if (session.epoch() != expected) {
                    LOGGER.info("Incremental fetch session {} expected epoch {}, but got {}. Possible duplicate "
                        + "request.", session.id(), expected, session.epoch());
                    releaseAll(updates);
                    return FetchResponses.of(Errors.INVALID_FETCH_SESSION_EPOCH, session.id(), Map.of(), endpoints);
                }
                Iterator<Map.Entry<TopicIdPartition, PartitionData>> it = updates.entrySet().iterator();
                while (it.hasNext()) {
                    Map.Entry<TopicIdPartition, PartitionData> e = it.next();
                    CachedPartition cached = session.cached(e.getKey());
                    PartitionData data = e.getValue();
                    if (cached == null || cached.mustRespond(data, true)) {
                        if (cached != null && data.records() != null && data.records().readableBytes() > 0) {
                            session.moveToEnd(e.getKey());
                        }
                    } else {
                        FetchResponses.release(data);
                        it.remove();
                    }
                }
                return FetchResponses.of(Errors.NONE, session.id(), updates, endpoints);
            }
        }
    }
}
