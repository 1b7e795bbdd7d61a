package io.cairn.broker.txn.markers;

import io.cairn.isr.client.SourceBroker;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersRequestData.WritableTxnMarker;
import io.cairn.wire.message.WriteTxnMarkersRequestData.WritableTxnMarkerTopic;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The state of the marker channel (Kafka's {@code TransactionMarkerChannelManager} queues with the rules of
 * {@code TransactionMarkerRequestCompletionHandler}), without threads or sockets: the transactions whose markers are
 * being written, each partition's marker and when it may be sent next, which destinations have a request in flight.
 *
 * <ul>
 *   <li>{@link #drain} routes every ready marker to its partition's leader in the metadata image and builds one
 *       WriteTxnMarkers request per leader that has none in flight. A partition the image no longer has counts as
 *       written (its topic was deleted); one without a leader, or whose leader has no endpoint on the inter-broker
 *       listener, waits a back-off and is routed again.</li>
 *   <li>{@link #onResponse}: NONE (and UNSUPPORTED_FOR_MESSAGE_FORMAT, UNSUPPORTED_VERSION, as Kafka drops those
 *       partitions) is written; TRANSACTION_COORDINATOR_FENCED or INVALID_PRODUCER_EPOCH ends the whole
 *       transaction's writing exceptionally (a newer coordinator or producer epoch took over); every other error
 *       (NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT,
 *       KAFKA_STORAGE_ERROR, …, and a partition missing from the answer) is retried after the back-off, routed anew
 *       since the leader may have moved. {@link #onFailure} (no answer) retries all of the request's markers.</li>
 *   <li>Bounded: at most {@code maxQueued} partition markers are admitted; later calls wait, in order, for room
 *       (each waiting call is the coordinator's own partition list, held by reference), and a call larger than the
 *       bound is admitted alone.</li>
 * </ul>
 *
 * <p>Not thread-safe: owned by {@link TransactionMarkerChannel}, which calls it under its lock.
 */
final class MarkerQueue {

    private static final Logger LOGGER = LogManager.getLogger(MarkerQueue.class);

    /** One {@code writeMarkers} call. */
    static final class Txn {
        final String transactionalId;
        final long producerId;
        final short producerEpoch;
        final boolean commit;
        final int coordinatorEpoch;
        final Collection<TopicPartition> partitions;
        final CompletableFuture<Void> result = new CompletableFuture<>();
        private int remaining;

        Txn(String transactionalId, long producerId, short producerEpoch, boolean commit, int coordinatorEpoch,
            Collection<TopicPartition> partitions) {
            this.transactionalId = transactionalId;
            this.producerId = producerId;
            this.producerEpoch = producerEpoch;
            this.commit = commit;
            this.coordinatorEpoch = coordinatorEpoch;
            this.partitions = partitions;
        }
    }

    /** One partition's marker of a transaction. */
    static final class Marker {
        final Txn txn;
        final TopicPartition partition;
        long notBeforeMs;
        boolean inFlight;
        /** The last routing found no leader with an inter-broker endpoint (Kafka's unknown destination). */
        boolean noDestination;

        Marker(Txn txn, TopicPartition partition) {
            this.txn = txn;
            this.partition = partition;
        }
    }

    /** A request to one leader and the markers it carries. */
    record Send(SourceBroker destination, WriteTxnMarkersRequestData request, List<Marker> markers) {
    }

    private final String listenerName;
    private final long backoffMs;
    private final int maxQueued;
    private final ArrayDeque<Txn> waiting = new ArrayDeque<>();
    private final LinkedHashSet<Marker> markers = new LinkedHashSet<>();
    private final Set<Integer> busy = new HashSet<>();
    /** Destinations whose last request got no answer: their next failures are logged at DEBUG only. */
    private final Set<Integer> unreachable = new HashSet<>();

    /**
     * @param listenerName the inter-broker listener whose endpoints the requests go to
     * @param backoffMs    how long a marker waits before it is routed again after a failure
     * @param maxQueued    the most partition markers admitted at once
     */
    MarkerQueue(String listenerName, long backoffMs, int maxQueued) {
        this.listenerName = listenerName;
        this.backoffMs = backoffMs;
        this.maxQueued = maxQueued;
    }

    /** Queues the markers of {@code txn}; an empty partition list completes at once. */
    void add(Txn txn) {
        if (txn.partitions.isEmpty()) {
            txn.result.complete(null);
            return;
        }
        waiting.addLast(txn);
        admit();
    }

    private void admit() {
        while (!waiting.isEmpty()) {
            Txn next = waiting.peekFirst();
            Set<TopicPartition> distinct = new LinkedHashSet<>(next.partitions);
            if (!markers.isEmpty() && markers.size() + distinct.size() > maxQueued) {
                return;
            }
            waiting.removeFirst();
            next.remaining = distinct.size();
            for (TopicPartition tp : distinct) {
                markers.add(new Marker(next, tp));
            }
        }
    }

    /** The requests to send now: every ready marker routed to its leader, one request per free destination. */
    List<Send> drain(MetadataImage image, long nowMs) {
        Map<Integer, SourceBroker> destinations = new HashMap<>();
        Map<Integer, List<Marker>> byLeader = new LinkedHashMap<>();
        List<Marker> written = new ArrayList<>();
        for (Marker marker : markers) {
            if (marker.inFlight || marker.notBeforeMs > nowMs) {
                continue;
            }
            Optional<PartitionRegistration> registration = image.partition(marker.partition);
            if (registration.isEmpty()) {
                LOGGER.info("Partition {} of transaction {} no longer exists; its marker is not needed",
                    marker.partition, marker.txn.transactionalId);
                written.add(marker);
                continue;
            }
            int leader = registration.get().leader();
            Optional<BrokerEndpoint> endpoint = leader < 0 ? Optional.empty()
                : image.broker(leader).flatMap(b -> b.endpoint(listenerName));
            marker.noDestination = endpoint.isEmpty();
            if (endpoint.isEmpty()) {
                marker.notBeforeMs = nowMs + backoffMs;
                continue;
            }
            if (busy.contains(leader)) {
                continue;
            }
            destinations.put(leader, new SourceBroker(leader, endpoint.get().host(), endpoint.get().port()));
            byLeader.computeIfAbsent(leader, id -> new ArrayList<>()).add(marker);
        }
        written.forEach(this::written);
        List<Send> sends = new ArrayList<>(byLeader.size());
        byLeader.forEach((leader, list) -> {
            busy.add(leader);
            list.forEach(m -> m.inFlight = true);
            sends.add(new Send(destinations.get(leader), request(list), list));
        });
        return sends;
    }

    /** One WriteTxnMarkers request: a marker entry per transaction, its partitions grouped by topic. */
    private static WriteTxnMarkersRequestData request(List<Marker> list) {
        Map<Txn, Entry> byTxn = new LinkedHashMap<>();
        WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData();
        for (Marker marker : list) {
            Entry entry = byTxn.computeIfAbsent(marker.txn, txn -> {
                WritableTxnMarker created = new WritableTxnMarker().setProducerId(txn.producerId)
                    .setProducerEpoch(txn.producerEpoch).setTransactionResult(txn.commit)
                    .setCoordinatorEpoch(txn.coordinatorEpoch);
                request.markers().add(created);
                return new Entry(created, new LinkedHashMap<>());
            });
            entry.topics().computeIfAbsent(marker.partition.topic(), name -> {
                WritableTxnMarkerTopic topic = new WritableTxnMarkerTopic().setName(name);
                entry.marker().topics().add(topic);
                return topic;
            }).partitionIndexes().add(marker.partition.partition());
        }
        return request;
    }

    /** A transaction's entry of a request and its topics by name. */
    private record Entry(WritableTxnMarker marker, Map<String, WritableTxnMarkerTopic> topics) {
    }

    /** Applies the leader's answer to the markers of {@code send}. */
    void onResponse(Send send, WriteTxnMarkersResponseData response, long nowMs) {
        busy.remove(send.destination().id());
        unreachable.remove(send.destination().id());
        Map<Long, Map<TopicPartition, Errors>> errors = new HashMap<>();
        for (WritableTxnMarkerResult result : response.markers()) {
            Map<TopicPartition, Errors> ofProducer = errors.computeIfAbsent(result.producerId(), id -> new HashMap<>());
            for (WritableTxnMarkerTopicResult topic : result.topics()) {
                for (WritableTxnMarkerPartitionResult p : topic.partitions()) {
                    ofProducer.put(new TopicPartition(topic.name(), p.partitionIndex()), Errors.forCode(p.errorCode()));
                }
            }
        }
        for (Marker marker : send.markers()) {
            if (!markers.contains(marker)) {
                continue;
            }
            Errors error = errors.getOrDefault(marker.txn.producerId, Map.of()).get(marker.partition);
            apply(marker, error, send.destination(), nowMs);
        }
    }

    private void apply(Marker marker, Errors error, SourceBroker destination, long nowMs) {
        if (error == Errors.NONE || error == Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT
                || error == Errors.UNSUPPORTED_VERSION) {
            written(marker);
        } else if (error == Errors.TRANSACTION_COORDINATOR_FENCED || error == Errors.INVALID_PRODUCER_EPOCH) {
            LOGGER.info("Writing the markers of transaction {} to {} failed with {}; no more markers are sent",
                marker.txn.transactionalId, marker.partition, error);
            fail(marker.txn, error.exception("The " + (marker.txn.commit ? "COMMIT" : "ABORT") + " marker of "
                + marker.txn.transactionalId + " to " + marker.partition + " failed: " + error));
        } else {
            LOGGER.info("Writing the marker of transaction {} to {} at {} failed with {}; retrying",
                marker.txn.transactionalId, marker.partition, destination, error == null ? "no answer" : error);
            retry(marker, nowMs);
        }
    }

    /** The request of {@code send} got no answer: every marker it carried is routed again after the back-off. */
    void onFailure(Send send, Exception failure, long nowMs) {
        busy.remove(send.destination().id());
        if (unreachable.add(send.destination().id())) {
            LOGGER.info("Sending transaction markers to {} failed: {}; retrying", send.destination(),
                failure.toString());
        } else if (LOGGER.isDebugEnabled()) {
            LOGGER.debug("Sending transaction markers to {} failed again: {}", send.destination(), failure.toString());
        }
        for (Marker marker : send.markers()) {
            if (markers.contains(marker)) {
                retry(marker, nowMs);
            }
        }
    }

    private void retry(Marker marker, long nowMs) {
        marker.inFlight = false;
        marker.notBeforeMs = nowMs + backoffMs;
    }

    private void written(Marker marker) {
        if (!markers.remove(marker)) {
            return;
        }
        if (--marker.txn.remaining == 0) {
            marker.txn.result.complete(null);
        }
        admit();
    }

    private void fail(Txn txn, Throwable failure) {
        markers.removeIf(m -> m.txn == txn);
        txn.result.completeExceptionally(failure);
        admit();
    }

    /** When a marker waiting for its back-off becomes ready, or {@link Long#MAX_VALUE} when none waits. */
    long nextReadyMs(long nowMs) {
        long next = Long.MAX_VALUE;
        for (Marker marker : markers) {
            if (!marker.inFlight && marker.notBeforeMs > nowMs) {
                next = Math.min(next, marker.notBeforeMs);
            }
        }
        return next;
    }

    /** Partition markers admitted and not yet written. */
    int size() {
        return markers.size();
    }

    /** Markers whose last routing found no leader to send them to (Kafka's UnknownDestinationQueueSize). */
    int unknownDestinations() {
        int count = 0;
        for (Marker marker : markers) {
            if (marker.noDestination) {
                count++;
            }
        }
        return count;
    }

    /** Calls waiting for room. */
    int waitingCalls() {
        return waiting.size();
    }

    /** Ends every transaction's writing with {@code failure} (the channel closes). */
    void failAll(Throwable failure) {
        List<Txn> txns = new ArrayList<>(waiting);
        markers.forEach(m -> txns.add(m.txn));
        waiting.clear();
        markers.clear();
        busy.clear();
        unreachable.clear();
        new LinkedHashSet<>(txns).forEach(txn -> txn.result.completeExceptionally(failure));
    }
}
