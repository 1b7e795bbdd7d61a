package io.cairn.broker.fetch;

import io.cairn.broker.metrics.BrokerTopicMetrics;
import io.cairn.broker.metrics.TopicMeters;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.ClientMetadata;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.NodeEndpoint;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Serves Fetch requests (Kafka's {@code KafkaApis.handleFetchRequest} with {@code ReplicaManager.fetchMessages}):
 * resolves topic ids, applies the fetch session, reads the partitions, answers at once when the fetch need not
 * wait (no wait asked, {@code min_bytes} reached, an error, a diverging epoch, a preferred read replica) and
 * otherwise parks a
 * {@link DelayedFetch} in the broker's {@link PartitionPurgatory}: a follower's fetch wakes when the log end offset
 * moves, a consumer's when the high watermark moves, both when the ISR or the leadership changes.
 *
 * <p>Lifecycle: uses the purgatory it is given; whoever owns the purgatory closes it, which answers the waiting
 * fetches. Thread-safety: thread-safe.
 */
public final class FetchService {

    /** Kafka's {@code fetch.max.bytes} default: a consumer's or follower's response limit is capped to it. */
    public static final int DEFAULT_FETCH_MAX_BYTES = 57_671_680;

    /** The read errors Kafka does not count as failed fetch requests. */
    private static final Set<Errors> EXPECTED_FETCH_ERRORS = EnumSet.of(Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_LEADER_EPOCH, Errors.FENCED_LEADER_EPOCH,
        Errors.REPLICA_NOT_AVAILABLE, Errors.KAFKA_STORAGE_ERROR, Errors.INCONSISTENT_TOPIC_ID,
        Errors.OFFSET_OUT_OF_RANGE);

    private final MetadataNode metadata;
    private final ReplicaManager replicas;
    private final FetchSessionCache sessions;
    private final FetchManager manager;
    private final PartitionReader reader;
    private final PartitionPurgatory purgatory;
    private final int fetchMaxBytes;
    private final BrokerTopicMetrics topicMetrics;
    /** Where expired delayed fetches read (the request-handler threads); null until handed in: the timer thread. */
    private volatile Executor readExecutor;

    public FetchService(MetadataNode metadata, ReplicaManager replicas, Time time, PartitionPurgatory purgatory,
                        BrokerTopicMetrics topicMetrics) {
        this(metadata, replicas, new FetchSessionCache(FetchSessionCache.DEFAULT_MAX_ENTRIES,
            FetchSessionCache.DEFAULT_EVICTION_MS, time), DEFAULT_FETCH_MAX_BYTES, purgatory, topicMetrics);
    }

    public FetchService(MetadataNode metadata, ReplicaManager replicas, FetchSessionCache sessions,
                        int fetchMaxBytes, PartitionPurgatory purgatory, BrokerTopicMetrics topicMetrics) {
        this.metadata = metadata;
        this.topicMetrics = topicMetrics;
        this.replicas = replicas;
        this.sessions = sessions;
        this.manager = new FetchManager(sessions);
        this.reader = new PartitionReader(replicas);
        this.fetchMaxBytes = fetchMaxBytes;
        this.purgatory = purgatory;
    }

    /**
     * Makes delayed fetches that expire read and answer on {@code requestHandlers} (the broker's request-handler
     * threads) rather than on the purgatory's timer thread: reading files is request-handler work.
     */
    public void useRequestHandlers(Executor requestHandlers) {
        this.readExecutor = requestHandlers;
    }

    /** The session cache; for tests and metrics. */
    public FetchSessionCache sessions() {
        return sessions;
    }

    /** Fetches waiting in the purgatory; for tests and metrics. */
    public int waitingFetches() {
        return purgatory.pendingCount();
    }

    /** Serves one Fetch request of {@code version} from {@code clientId} that arrived on {@code listenerName}. */
    public CompletableFuture<FetchResponseData> fetch(short version, String clientId, String listenerName,
                                                      FetchRequestData request) {
        return fetch(version, clientId, listenerName, request, Authorization.ALLOW_ALL);
    }

    /**
     * What the caller may fetch, as Kafka's {@code handleFetchRequest} asks the authorizer: a follower needs
     * CLUSTER_ACTION on the cluster (else every partition answers TOPIC_AUTHORIZATION_FAILED), a consumer READ on each
     * topic (else that topic's partitions answer TOPIC_AUTHORIZATION_FAILED, before any check that it exists).
     *
     * @param clusterAction whether the caller has CLUSTER_ACTION on the cluster
     * @param readTopic whether the caller may READ a topic, asked once per topic of a request
     */
    public record Authorization(boolean clusterAction, Predicate<String> readTopic) {
        /** No authorizer: everything is allowed. */
        public static final Authorization ALLOW_ALL = new Authorization(true, topic -> true);
    }

    /** {@link #fetch(short, String, String, FetchRequestData)} with the caller's permissions. */
    public CompletableFuture<FetchResponseData> fetch(short version, String clientId, String listenerName,
                                                      FetchRequestData request, Authorization authorization) {
        MetadataImage image = metadata.currentImage();
        Function<Uuid, String> topicNames = id -> image.topic(id).map(TopicImage::name).orElse(null);
        FetchParams params = params(version, request, version >= 11
            ? new ClientMetadata(request.rackId(), clientId, listenerName) : null);
        LinkedHashMap<TopicIdPartition, PartitionFetch> fetchData = fetchData(version, request, topicNames);
        List<TopicIdPartition> toForget = forgotten(version, request, topicNames);
        FetchContext context = manager.newContext(version, request.sessionId(), request.sessionEpoch(),
            params.isFromFollower(), fetchData, toForget, topicNames);
        List<Map.Entry<TopicIdPartition, PartitionFetch>> interesting = new ArrayList<>();
        LinkedHashMap<TopicIdPartition, PartitionData> erroneous = new LinkedHashMap<>();
        Map<String, Boolean> readable = new HashMap<>();
        boolean follower = params.isFromFollower();
        for (Map.Entry<TopicIdPartition, PartitionFetch> e : context.partitions()) {
            TopicIdPartition tp = e.getKey();
            if (follower && !authorization.clusterAction()) {
                erroneous.put(tp, FetchResponses.partitionError(tp.partition(), Errors.TOPIC_AUTHORIZATION_FAILED));
            } else if (tp.topic() == null) {
                erroneous.put(tp, FetchResponses.partitionError(tp.partition(), Errors.UNKNOWN_TOPIC_ID));
            } else if (!follower && !readable.computeIfAbsent(tp.topic(), authorization.readTopic()::test)) {
                erroneous.put(tp, FetchResponses.partitionError(tp.partition(), Errors.TOPIC_AUTHORIZATION_FAILED));
            } else if (image.partition(tp.topicPartition()).isEmpty()) {
                erroneous.put(tp, FetchResponses.partitionError(tp.partition(), Errors.UNKNOWN_TOPIC_OR_PARTITION));
            } else {
                interesting.add(e);
            }
        }
        CompletableFuture<FetchResponseData> future = new CompletableFuture<>();
        if (interesting.isEmpty()) {
            future.complete(respond(context, params, listenerName, List.of(), erroneous));
            return future;
        }
        List<PartitionRead> reads = reader.read(params, interesting, false);
        long bytesReadable = 0;
        boolean answerNow = false;
        for (PartitionRead read : reads) {
            bytesReadable += read.recordsSize();
            answerNow |= read.error() != Errors.NONE || read.divergingEpoch() != null
                || read.preferredReadReplica() >= 0;
        }
        if (params.maxWaitMs() <= 0 || bytesReadable >= params.minBytes() || answerNow) {
            future.complete(respond(context, params, listenerName, reads, erroneous));
            return future;
        }
        DelayedFetch delayed = new DelayedFetch(params, interesting, reads, replicas, reader, readExecutor,
            (later, error) -> {
                if (error != null) {
                    future.completeExceptionally(error);
                    return;
                }
                try {
                    future.complete(respond(context, params, listenerName, later, erroneous));
                } catch (RuntimeException e) {
                    future.completeExceptionally(e);
                }
            });
        reads.forEach(PartitionRead::release);
        List<TopicPartition> keys = new ArrayList<>(interesting.size());
        for (Map.Entry<TopicIdPartition, PartitionFetch> e : interesting) {
            keys.add(e.getKey().topicPartition());
        }
        purgatory.tryCompleteElseWatch(delayed, keys, params.isFromFollower()
            ? PartitionPurgatory.WakeOn.LOG_END_OFFSET : PartitionPurgatory.WakeOn.HIGH_WATERMARK);
        return future;
    }

    private FetchParams params(short version, FetchRequestData request, ClientMetadata client) {
        int replicaId = version >= 15 ? request.replicaState().replicaId() : request.replicaId();
        if (request.isolationLevel() != 0 && request.isolationLevel() != 1) {
            // Kafka's request parser rejects it (IsolationLevel.forId): the request fails as a whole.
            throw new IllegalArgumentException("Unknown isolation level " + request.isolationLevel());
        }
        // Kafka caps consumers and followers alike by fetch.max.bytes; a follower reads to the log end.
        int maxBytes = Math.min(request.maxBytes(), fetchMaxBytes);
        if (replicaId >= 0) {
            long replicaEpoch = version >= 15 ? request.replicaState().replicaEpoch() : -1L;
            return new FetchParams(version, replicaId, request.maxWaitMs(), Math.min(request.minBytes(), maxBytes),
                maxBytes, FetchIsolation.LOG_END, replicaEpoch, client);
        }
        return new FetchParams(version, replicaId, request.maxWaitMs(), Math.min(request.minBytes(), maxBytes),
            maxBytes, FetchIsolation.ofConsumer(request.isolationLevel()), -1L, client);
    }

    private static LinkedHashMap<TopicIdPartition, PartitionFetch> fetchData(short version, FetchRequestData request,
                                                                            Function<Uuid, String> topicNames) {
        LinkedHashMap<TopicIdPartition, PartitionFetch> fetchData = new LinkedHashMap<>();
        for (FetchRequestData.FetchTopic topic : request.topics()) {
            Uuid id = version >= 13 ? topic.topicId() : Uuid.ZERO;
            String name = version >= 13 ? topicNames.apply(id) : topic.topic();
            for (FetchRequestData.FetchPartition p : topic.partitions()) {
                int lastFetchedEpoch = version >= 12 ? p.lastFetchedEpoch() : -1;
                // Like Kafka, any negative epoch means "none given" (Partition.NO_EPOCH).
                int currentLeaderEpoch = Math.max(Partition.NO_EPOCH, p.currentLeaderEpoch());
                fetchData.put(new TopicIdPartition(id, name, p.partition()), new PartitionFetch(p.fetchOffset(),
                    currentLeaderEpoch, Math.max(-1, lastFetchedEpoch), p.logStartOffset(), p.partitionMaxBytes()));
            }
        }
        return fetchData;
    }

    private static List<TopicIdPartition> forgotten(short version, FetchRequestData request,
                                                    Function<Uuid, String> topicNames) {
        List<TopicIdPartition> toForget = new ArrayList<>();
        for (FetchRequestData.ForgottenTopic topic : request.forgottenTopicsData()) {
            Uuid id = version >= 13 ? topic.topicId() : Uuid.ZERO;
            String name = version >= 13 ? topicNames.apply(id) : topic.topic();
            for (int partition : topic.partitions()) {
                toForget.add(new TopicIdPartition(id, name, partition));
            }
        }
        return toForget;
    }

    /** The response: read partitions in order (with the leader for v16+ leadership errors), then the erroneous. */
    private FetchResponseData respond(FetchContext context, FetchParams params, String listenerName,
                                      List<PartitionRead> reads, Map<TopicIdPartition, PartitionData> erroneous) {
        LinkedHashMap<TopicIdPartition, PartitionData> updates = new LinkedHashMap<>();
        Map<Integer, NodeEndpoint> endpoints = new LinkedHashMap<>();
        MetadataImage image = metadata.currentImage();
        int converted = 0;
        count(reads, params.isFromFollower());
        reader.recordThrottled(params, reads);
        try {
            for (PartitionRead read : reads) {
                PartitionData data = read.toPartitionData();
                converted++;
                updates.put(read.tp(), data);
                if (params.version() >= 16 && (read.error() == Errors.NOT_LEADER_OR_FOLLOWER
                        || read.error() == Errors.FENCED_LEADER_EPOCH)) {
                    setCurrentLeader(image, listenerName, read.tp(), data, endpoints);
                }
            }
            updates.putAll(erroneous);
            return context.respond(updates, new ArrayList<>(endpoints.values()));
        } catch (RuntimeException e) {
            updates.values().forEach(FetchResponses::release);
            for (int i = converted; i < reads.size(); i++) {
                reads.get(i).release();
            }
            throw e;
        }
    }

    /**
     * Kafka's broker-topic counts of a fetch: every read partition is a fetch request of its topic, records sent
     * count as bytes out (replication bytes out for a follower), and an error outside Kafka's expected ones
     * (leadership, epochs, unknown partition, storage, offset out of range) as a failed fetch. Reads come grouped
     * by topic, so each topic's meters are resolved once.
     */
    private void count(List<PartitionRead> reads, boolean fromFollower) {
        String topic = null;
        TopicMeters meters = null;
        for (PartitionRead read : reads) {
            if (!read.tp().topic().equals(topic)) {
                topic = read.tp().topic();
                meters = topicMetrics.forTopic(topic);
            }
            meters.totalFetchRequest();
            if (read.error() == Errors.NONE) {
                meters.bytesOut(read.recordsSize(), fromFollower);
            } else if (!EXPECTED_FETCH_ERRORS.contains(read.error())) {
                meters.failedFetchRequest();
            }
        }
    }

    /**
     * KIP-951: the leader this broker knows for a partition it does not lead (Kafka's {@code getCurrentLeader}: the
     * hosted partition's view first, which may be newer than the image, then the image's), and that leader's
     * endpoint when it is alive.
     */
    private void setCurrentLeader(MetadataImage image, String listenerName, TopicIdPartition tp,
                                  PartitionData data, Map<Integer, NodeEndpoint> endpoints) {
        Partition local = replicas.partition(tp.topicPartition()).orElse(null);
        PartitionRegistration reg = local != null ? local.registration()
            : image.partition(tp.topicPartition()).orElse(null);
        if (reg == null) {
            data.currentLeader().setLeaderId(-1).setLeaderEpoch(-1);
            return;
        }
        data.currentLeader().setLeaderId(reg.leader()).setLeaderEpoch(reg.leaderEpoch());
        BrokerRegistration leader = image.broker(reg.leader()).filter(b -> !b.fenced()).orElse(null);
        if (leader != null) {
            leader.endpoint(listenerName).ifPresent(ep -> endpoints.put(leader.id(), new NodeEndpoint()
                .setNodeId(leader.id()).setHost(ep.host()).setPort(ep.port()).setRack(leader.rack().orElse(null))));
        }
    }
}
