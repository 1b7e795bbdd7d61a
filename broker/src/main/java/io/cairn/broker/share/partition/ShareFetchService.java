package io.cairn.broker.share.partition;

import io.cairn.broker.fetch.TopicIdPartition;
import io.cairn.broker.share.partition.ShareRecordTypes.AckBatch;
import io.cairn.broker.share.partition.ShareRecordTypes.AcquiredRange;
import io.cairn.broker.share.partition.ShareRequests.Leader;
import io.cairn.broker.share.partition.ShareRequests.Resolved;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ShareAcknowledgeRequestData;
import io.cairn.wire.message.ShareAcknowledgeResponseData;
import io.cairn.wire.message.ShareFetchRequestData;
import io.cairn.wire.message.ShareFetchResponseData;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * ShareFetch v1 and ShareAcknowledge v1 as Kafka's {@code KafkaApis.handleShareFetchRequest} and
 * {@code handleShareAcknowledgeRequest} serve them: UNSUPPORTED_VERSION while share groups are disabled,
 * GROUP_AUTHORIZATION_FAILED without READ on the group, UNKNOWN_SERVER_ERROR for a member id that is not a Uuid
 * (Kafka's parse fails), INVALID_REQUEST for acknowledgements in a session-opening fetch, the share session errors
 * at the top level; per partition UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED, the acknowledgement's outcome
 * (AcknowledgeErrorCode on ShareFetch) and the fetch's. Acknowledgements are applied before the fetch, so released
 * records can be fetched again at once; a request of epoch -1 acknowledges, closes the session and releases what
 * the member still holds, as does the close of the connection that opened the session.
 *
 * <p>Thread-safety: thread-safe.
 */
public final class ShareFetchService {

    /** Who may do what: READ on the group and on topics. */
    public record Access(Predicate<String> groupRead, Predicate<String> topicRead) {
    }

    /** The client's connection: its id, and how to run something when it closes. */
    public record Connection(String id, Consumer<Runnable> onClose) {
    }

    private final SharePartitionManager manager;
    private final ShareSessionCache sessions;
    private final Supplier<MetadataImage> image;
    private final BooleanSupplier enabled;

    public ShareFetchService(SharePartitionManager manager, ShareSessionCache sessions, Supplier<MetadataImage> image,
                             BooleanSupplier enabled) {
        this.manager = manager;
        this.sessions = sessions;
        this.image = image;
        this.enabled = enabled;
    }

    /** Kafka's ShareFetch error response: the error at the top level only. */
    public static ShareFetchResponseData fetchError(Errors error) {
        return new ShareFetchResponseData().setErrorCode(error.code());
    }

    /** Kafka's ShareAcknowledge error response: the error at the top level only. */
    public static ShareAcknowledgeResponseData acknowledgeError(Errors error) {
        return new ShareAcknowledgeResponseData().setErrorCode(error.code());
    }

    private Errors checkRequest(String groupId, String memberId, Access access) {
        if (!enabled.getAsBoolean()) {
            return Errors.UNSUPPORTED_VERSION;
        }
        if (groupId == null || !access.groupRead().test(groupId)) {
            return Errors.GROUP_AUTHORIZATION_FAILED;
        }
        // Kafka 4.1.1 parses the member id as a Uuid (ShareRequestMetadata) and answers what else it gets with the
        // unexpected error of its request handler.
        try {
            Uuid.fromString(memberId);
        } catch (RuntimeException e) {
            return Errors.UNKNOWN_SERVER_ERROR;
        }
        return Errors.NONE;
    }

    /** ShareFetch v1. */
    public CompletableFuture<ShareFetchResponseData> fetch(ShareFetchRequestData request, Access access,
                                                           String listenerName, Connection connection) {
        Errors invalid = checkRequest(request.groupId(), request.memberId(), access);
        if (invalid != Errors.NONE) {
            return CompletableFuture.completedFuture(fetchError(invalid));
        }
        MetadataImage current = image.get();
        Map<TopicIdPartition, Errors> erroneous = new LinkedHashMap<>();
        List<TopicIdPartition> toFetch = new ArrayList<>();
        Map<TopicIdPartition, List<AckBatch>> acks = new LinkedHashMap<>();
        for (ShareFetchRequestData.FetchTopic topic : request.topics()) {
            for (ShareFetchRequestData.FetchPartition p : topic.partitions()) {
                Resolved resolved = ShareRequests.resolve(current, topic.topicId(), p.partitionIndex(),
                    access.topicRead());
                if (resolved.error() != Errors.NONE) {
                    erroneous.put(resolved.tp(), resolved.error());
                    continue;
                }
                toFetch.add(resolved.tp());
                if (!p.acknowledgementBatches().isEmpty()) {
                    List<AckBatch> batches = new ArrayList<>();
                    for (ShareFetchRequestData.AcknowledgementBatch b : p.acknowledgementBatches()) {
                        batches.add(new AckBatch(b.firstOffset(), b.lastOffset(),
                            ShareRequests.types(b.acknowledgeTypes())));
                    }
                    acks.put(resolved.tp(), batches);
                }
            }
        }
        int epoch = request.shareSessionEpoch();
        if (epoch == ShareSessionCache.INITIAL_EPOCH && !acks.isEmpty()) {
            return CompletableFuture.completedFuture(fetchError(Errors.INVALID_REQUEST));
        }
        List<TopicIdPartition> toForget = new ArrayList<>();
        for (ShareFetchRequestData.ForgottenTopic topic : request.forgottenTopicsData()) {
            String name = current.topic(topic.topicId()).map(t -> t.name()).orElse(null);
            for (int partition : topic.partitions()) {
                toForget.add(new TopicIdPartition(topic.topicId(), name, partition));
            }
        }
        ShareSessionCache.Key key = new ShareSessionCache.Key(request.groupId(), request.memberId());
        ShareSessionCache.Outcome context = sessions.fetchContext(key,
            epoch, epoch == ShareSessionCache.FINAL_EPOCH ? List.of() : toFetch, toForget, connection.id());
        if (context.error() != Errors.NONE) {
            return CompletableFuture.completedFuture(fetchError(context.error()));
        }
        if (epoch == ShareSessionCache.INITIAL_EPOCH) {
            connection.onClose().accept(() -> connectionClosed(connection.id()));
        }
        String groupId = request.groupId();
        String memberId = request.memberId();
        return acknowledge(groupId, memberId, acks).thenCompose(ackErrors -> {
            if (epoch == ShareSessionCache.FINAL_EPOCH) {
                List<TopicIdPartition> held = sessions.remove(key);
                return released(groupId, manager.releaseSession(groupId, memberId, held)).thenApply(ignored ->
                    fetchResponse(Map.of(), erroneous, ackErrors, listenerName));
            }
            List<TopicIdPartition> fetchable = turned(context.partitions(), epoch);
            fetchable.removeIf(tp -> tp.topic() == null || erroneous.containsKey(tp));
            SharePartitionManager.FetchLimits limits = new SharePartitionManager.FetchLimits(request.maxWaitMs(),
                request.minBytes(), request.maxBytes(), request.maxRecords());
            return manager.fetch(groupId, memberId, fetchable, limits).thenApply(results ->
                fetchResponse(results, erroneous, ackErrors, listenerName)
                    .setAcquisitionLockTimeoutMs(manager.settings(groupId).recordLockDurationMs()));
        });
    }

    /**
     * The session's partitions in the order this fetch takes them, which decides where its {@code max_records} go
     * first: Kafka's round-robin turn, the list started {@code epoch % size} places further on (as it was for the
     * session's first fetch, epoch 0, and whenever that remainder is 0).
     */
    static List<TopicIdPartition> turned(List<TopicIdPartition> partitions, int epoch) {
        int size = partitions.size();
        int start = epoch < 1 || size < 2 ? 0 : epoch % size;
        List<TopicIdPartition> turned = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            turned.add(partitions.get((start + i) % size));
        }
        return turned;
    }

    /** The sessions of a closed connection end; what their members held goes back. */
    private void connectionClosed(String connectionId) {
        sessions.removeConnection(connectionId).forEach((key, partitions) ->
            released(key.groupId(), manager.releaseSession(key.groupId(), key.memberId(), partitions)));
    }

    /**
     * Kafka's {@code ShareGroupListener.onGroupEmpty}: once a released session was the group's last one here, the
     * group's share-partitions leave the cache, so the next fetch reads their state again (and sees an offsets reset
     * made while the group was empty).
     */
    private CompletableFuture<Void> released(String groupId, CompletableFuture<Void> release) {
        return release.whenComplete((ignored, failure) -> {
            if (!sessions.hasGroup(groupId)) {
                manager.onGroupEmpty(groupId);
            }
        });
    }

    /** Validates and applies acknowledgements; each partition's outcome. */
    private CompletableFuture<Map<TopicIdPartition, Errors>> acknowledge(String groupId, String memberId,
            Map<TopicIdPartition, List<AckBatch>> acks) {
        Map<TopicIdPartition, Errors> invalid = new LinkedHashMap<>();
        Map<TopicIdPartition, List<AckBatch>> valid = new LinkedHashMap<>();
        acks.forEach((tp, batches) -> {
            Errors error = ShareRequests.validate(batches);
            if (error == Errors.NONE) {
                valid.put(tp, batches);
            } else {
                invalid.put(tp, error);
            }
        });
        if (valid.isEmpty()) {
            return CompletableFuture.completedFuture(invalid);
        }
        return manager.acknowledge(groupId, memberId, valid).thenApply(results -> {
            Map<TopicIdPartition, Errors> all = new LinkedHashMap<>(invalid);
            all.putAll(results);
            return all;
        });
    }

    private ShareFetchResponseData fetchResponse(Map<TopicIdPartition, ShareFetchResult> results,
                                                 Map<TopicIdPartition, Errors> erroneous,
                                                 Map<TopicIdPartition, Errors> ackErrors, String listenerName) {
        Set<TopicIdPartition> all = new LinkedHashSet<>(erroneous.keySet());
        all.addAll(results.keySet());
        all.addAll(ackErrors.keySet());
        List<TopicIdPartition> notLeader = new ArrayList<>();
        Map<Uuid, ShareFetchResponseData.ShareFetchableTopicResponse> topics = new LinkedHashMap<>();
        for (TopicIdPartition tp : all) {
            ShareFetchResult result = results.get(tp);
            Errors error = erroneous.containsKey(tp) ? erroneous.get(tp)
                : result == null ? Errors.NONE : result.error();
            Errors ackError = ackErrors.getOrDefault(tp, Errors.NONE);
            ShareFetchResponseData.PartitionData data = new ShareFetchResponseData.PartitionData()
                .setPartitionIndex(tp.partition()).setErrorCode(error.code())
                .setAcknowledgeErrorCode(ackError.code())
                .setRecords(result == null ? Unpooled.EMPTY_BUFFER : result.records());
            List<ShareFetchResponseData.AcquiredRecords> acquired = new ArrayList<>();
            if (result != null) {
                for (AcquiredRange range : result.acquired()) {
                    acquired.add(new ShareFetchResponseData.AcquiredRecords().setFirstOffset(range.firstOffset())
                        .setLastOffset(range.lastOffset()).setDeliveryCount((short) range.deliveryCount()));
                }
            }
            data.setAcquiredRecords(acquired);
            if (isNotLeader(error) || isNotLeader(ackError)) {
                notLeader.add(tp);
            }
            topics.computeIfAbsent(tp.topicId(), id -> new ShareFetchResponseData.ShareFetchableTopicResponse()
                .setTopicId(id)).partitions().add(data);
        }
        ShareFetchResponseData response = new ShareFetchResponseData().setErrorCode(Errors.NONE.code())
            .setAcquisitionLockTimeoutMs(manager.config().lockDurationMs())
            .setResponses(new ArrayList<>(topics.values()));
        Map<TopicIdPartition, Leader> leaders = ShareRequests.leaders(image.get(), notLeader, listenerName);
        Set<Integer> nodes = new LinkedHashSet<>();
        leaders.forEach((tp, leader) -> {
            for (ShareFetchResponseData.PartitionData data : topics.get(tp.topicId()).partitions()) {
                if (data.partitionIndex() == tp.partition()) {
                    data.currentLeader().setLeaderId(leader.id()).setLeaderEpoch(leader.epoch());
                }
            }
            if (nodes.add(leader.id())) {
                response.nodeEndpoints().add(new ShareFetchResponseData.NodeEndpoint().setNodeId(leader.id())
                    .setHost(leader.host()).setPort(leader.port()).setRack(leader.rack()));
            }
        });
        return response;
    }

    private static boolean isNotLeader(Errors error) {
        return error == Errors.NOT_LEADER_OR_FOLLOWER || error == Errors.FENCED_LEADER_EPOCH;
    }

    /** ShareAcknowledge v1. */
    public CompletableFuture<ShareAcknowledgeResponseData> acknowledge(ShareAcknowledgeRequestData request,
                                                                       Access access, String listenerName) {
        Errors invalid = checkRequest(request.groupId(), request.memberId(), access);
        if (invalid != Errors.NONE) {
            return CompletableFuture.completedFuture(acknowledgeError(invalid));
        }
        ShareSessionCache.Key key = new ShareSessionCache.Key(request.groupId(), request.memberId());
        Errors sessionError = sessions.acknowledgeContext(key, request.shareSessionEpoch());
        if (sessionError != Errors.NONE) {
            return CompletableFuture.completedFuture(acknowledgeError(sessionError));
        }
        MetadataImage current = image.get();
        Map<TopicIdPartition, Errors> erroneous = new LinkedHashMap<>();
        Map<TopicIdPartition, List<AckBatch>> acks = new LinkedHashMap<>();
        for (ShareAcknowledgeRequestData.AcknowledgeTopic topic : request.topics()) {
            for (ShareAcknowledgeRequestData.AcknowledgePartition p : topic.partitions()) {
                Resolved resolved = ShareRequests.resolve(current, topic.topicId(), p.partitionIndex(),
                    access.topicRead());
                if (resolved.error() != Errors.NONE) {
                    erroneous.put(resolved.tp(), resolved.error());
                    continue;
                }
                List<AckBatch> batches = new ArrayList<>();
                for (ShareAcknowledgeRequestData.AcknowledgementBatch b : p.acknowledgementBatches()) {
                    batches.add(new AckBatch(b.firstOffset(), b.lastOffset(),
                        ShareRequests.types(b.acknowledgeTypes())));
                }
                acks.put(resolved.tp(), batches);
            }
        }
        String groupId = request.groupId();
        String memberId = request.memberId();
        return acknowledge(groupId, memberId, acks).thenCompose(results -> {
            CompletableFuture<Void> release = request.shareSessionEpoch() == ShareSessionCache.FINAL_EPOCH
                ? released(groupId, manager.releaseSession(groupId, memberId, sessions.remove(key)))
                : CompletableFuture.completedFuture(null);
            return release.thenApply(ignored -> acknowledgeResponse(erroneous, results, listenerName));
        });
    }

    private ShareAcknowledgeResponseData acknowledgeResponse(Map<TopicIdPartition, Errors> erroneous,
                                                             Map<TopicIdPartition, Errors> results,
                                                             String listenerName) {
        Map<TopicIdPartition, Errors> all = new LinkedHashMap<>(erroneous);
        all.putAll(results);
        List<TopicIdPartition> notLeader = new ArrayList<>();
        Map<Uuid, ShareAcknowledgeResponseData.ShareAcknowledgeTopicResponse> topics = new LinkedHashMap<>();
        Map<TopicIdPartition, ShareAcknowledgeResponseData.PartitionData> byPartition = new LinkedHashMap<>();
        all.forEach((tp, error) -> {
            ShareAcknowledgeResponseData.PartitionData data = new ShareAcknowledgeResponseData.PartitionData()
                .setPartitionIndex(tp.partition()).setErrorCode(error.code());
            byPartition.put(tp, data);
            if (isNotLeader(error)) {
                notLeader.add(tp);
            }
            topics.computeIfAbsent(tp.topicId(), id -> new ShareAcknowledgeResponseData
                .ShareAcknowledgeTopicResponse().setTopicId(id)).partitions().add(data);
        });
        ShareAcknowledgeResponseData response = new ShareAcknowledgeResponseData()
            .setResponses(new ArrayList<>(topics.values()));
        Set<Integer> nodes = new LinkedHashSet<>();
        ShareRequests.leaders(image.get(), notLeader, listenerName).forEach((tp, leader) -> {
            byPartition.get(tp).currentLeader().setLeaderId(leader.id()).setLeaderEpoch(leader.epoch());
            if (nodes.add(leader.id())) {
                response.nodeEndpoints().add(new ShareAcknowledgeResponseData.NodeEndpoint()
                    .setNodeId(leader.id()).setHost(leader.host()).setPort(leader.port()).setRack(leader.rack()));
            }
        });
        return response;
    }
}
