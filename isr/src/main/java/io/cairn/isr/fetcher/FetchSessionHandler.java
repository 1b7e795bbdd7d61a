package io.cairn.isr.fetcher;

import io.cairn.isr.fetcher.LeaderEndpoint.PartitionFetchRequest;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The client side of an incremental fetch session (KIP-227, Kafka's {@code FetchSessionHandler}). A full fetch
 * (epoch 0) sends every partition and asks the leader for a session; while the session lives, each fetch carries
 * only the partitions that are new or whose request changed (fetch offset, log start offset, epochs), the ones no
 * longer wanted as forgotten, and the leader answers only the partitions with news. A session error, an invalid
 * response or a network error falls back to a full fetch.
 *
 * <p>Thread-safety: not thread-safe; owned by one fetcher's endpoint.
 */
final class FetchSessionHandler {

    static final int INVALID_SESSION_ID = 0;
    static final int INITIAL_EPOCH = 0;
    static final int FINAL_EPOCH = -1;

    private static final Logger LOGGER = LogManager.getLogger(FetchSessionHandler.class);

    private final int node;
    private int sessionId = INVALID_SESSION_ID;
    private int epoch = INITIAL_EPOCH;
    private LinkedHashMap<TopicPartition, PartitionFetchRequest> sessionPartitions = new LinkedHashMap<>();
    private Map<Uuid, String> sessionTopicNames = Map.of();

    /** @param node the leader's broker id, for the log */
    FetchSessionHandler(int node) {
        this.node = node;
    }

    /**
     * What one fetch sends. Immutable.
     *
     * @param toSend         the partitions to put in the request
     * @param toForget       the partitions to name as forgotten (removed, or replaced by a new topic id)
     * @param sessionId      the session id to send
     * @param epoch          the session epoch to send
     * @param canUseTopicIds every partition has a topic id (else the request must be v12 or older)
     */
    record Plan(Map<TopicPartition, PartitionFetchRequest> toSend, List<Forgotten> toForget, int sessionId,
                int epoch, boolean canUseTopicIds) {

        boolean isFull() {
            return epoch == INITIAL_EPOCH || epoch == FINAL_EPOCH;
        }
    }

    /**
     * A partition to forget. Immutable.
     *
     * @param topicId the topic id it was fetched under
     * @param tp      the partition
     */
    record Forgotten(Uuid topicId, TopicPartition tp) {
    }

    int sessionId() {
        return sessionId;
    }

    int epoch() {
        return epoch;
    }

    /** The topic names of the session's topic ids, to read a v13+ response. */
    Map<Uuid, String> sessionTopicNames() {
        return sessionTopicNames;
    }

    /** Plans the fetch of {@code next} (every partition wanted now) and makes it the session's content. */
    Plan build(Map<TopicPartition, PartitionFetchRequest> next) {
        boolean canUseTopicIds = true;
        Map<Uuid, String> topicNames = new HashMap<>();
        for (Map.Entry<TopicPartition, PartitionFetchRequest> e : next.entrySet()) {
            if (Uuid.ZERO.equals(e.getValue().topicId())) {
                canUseTopicIds = false;
            } else {
                topicNames.putIfAbsent(e.getValue().topicId(), e.getKey().topic());
            }
        }
        if (isFull()) {
            sessionPartitions = new LinkedHashMap<>(next);
            sessionTopicNames = canUseTopicIds ? topicNames : Map.of();
            return new Plan(Collections.unmodifiableMap(new LinkedHashMap<>(next)), List.of(), sessionId, epoch,
                canUseTopicIds);
        }
        LinkedHashMap<TopicPartition, PartitionFetchRequest> toSend = new LinkedHashMap<>(next);
        List<Forgotten> toForget = new ArrayList<>();
        Map<TopicPartition, PartitionFetchRequest> unchanged = new HashMap<>();
        for (Iterator<Map.Entry<TopicPartition, PartitionFetchRequest>> it = sessionPartitions.entrySet().iterator();
                it.hasNext(); ) {
            Map.Entry<TopicPartition, PartitionFetchRequest> entry = it.next();
            PartitionFetchRequest previous = entry.getValue();
            PartitionFetchRequest wanted = next.get(entry.getKey());
            if (wanted == null) {
                it.remove();
                toForget.add(new Forgotten(previous.topicId(), entry.getKey()));
                canUseTopicIds &= !Uuid.ZERO.equals(previous.topicId());
            } else if (!previous.topicId().equals(wanted.topicId()) && !Uuid.ZERO.equals(previous.topicId())
                    && !Uuid.ZERO.equals(wanted.topicId())) {
                // The topic was recreated under a new id: forget the old one, send the new.
                toForget.add(new Forgotten(previous.topicId(), entry.getKey()));
                entry.setValue(wanted);
            } else if (previous.equals(wanted)) {
                unchanged.put(entry.getKey(), wanted);
            } else {
                entry.setValue(wanted);
            }
        }
        unchanged.keySet().forEach(toSend::remove);
        for (Map.Entry<TopicPartition, PartitionFetchRequest> e : next.entrySet()) {
            sessionPartitions.putIfAbsent(e.getKey(), e.getValue());
        }
        sessionTopicNames = canUseTopicIds ? topicNames : Map.of();
        return new Plan(Collections.unmodifiableMap(toSend), List.copyOf(toForget), sessionId, epoch,
            canUseTopicIds);
    }

    private boolean isFull() {
        return epoch == INITIAL_EPOCH || epoch == FINAL_EPOCH;
    }

    /**
     * Takes a response in: false when its data must not be used (a top-level error, or partitions that are not the
     * session's), after which the next fetch is full; true otherwise, moving the session on.
     *
     * @param errorCode          the response's top-level error
     * @param responseSessionId  the session id the leader answered with
     * @param responsePartitions the partitions the response carries
     */
    boolean handleResponse(short errorCode, int responseSessionId, Set<TopicPartition> responsePartitions) {
        Errors error = Errors.forCode(errorCode);
        if (error != Errors.NONE) {
            LOGGER.info("Node {} was unable to process the fetch request with session {} epoch {}: {}.", node,
                sessionId, epoch, error);
            if (error == Errors.FETCH_SESSION_ID_NOT_FOUND) {
                sessionId = INVALID_SESSION_ID;
            }
            epoch = INITIAL_EPOCH;
            return false;
        }
        boolean full = isFull();
        if (!sessionPartitions.keySet().containsAll(responsePartitions)
                || full && !responsePartitions.containsAll(sessionPartitions.keySet())) {
            LOGGER.info("Node {} sent an invalid {} fetch response: partitions {} for a session of {}", node,
                full ? "full" : "incremental", responsePartitions, sessionPartitions.keySet());
            if (full) {
                sessionId = INVALID_SESSION_ID;
            }
            epoch = INITIAL_EPOCH;
            return false;
        }
        if (responseSessionId == INVALID_SESSION_ID) {
            sessionId = INVALID_SESSION_ID;
            epoch = INITIAL_EPOCH;
        } else if (full) {
            sessionId = responseSessionId;
            epoch = 1;
        } else {
            epoch = epoch == Integer.MAX_VALUE ? 1 : epoch + 1;
        }
        return true;
    }

    /** A failed send: the next fetch is full and closes the session (Kafka's {@code nextCloseExistingAttemptNew}). */
    void handleError(Throwable t) {
        LOGGER.info("Error sending fetch request with session {} epoch {} to node {}: {}", sessionId, epoch, node,
            t.toString());
        epoch = INITIAL_EPOCH;
    }
}
