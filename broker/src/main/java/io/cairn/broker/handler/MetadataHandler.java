package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.TopicNames;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.MetadataRequestData;
import io.cairn.wire.message.MetadataResponseData;
import io.cairn.wire.message.MetadataResponseData.MetadataResponseBroker;
import io.cairn.wire.message.MetadataResponseData.MetadataResponsePartition;
import io.cairn.wire.message.MetadataResponseData.MetadataResponseTopic;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Metadata v0-v13 as Kafka's broker answers it from its metadata cache: the live brokers with their endpoint on the
 * listener the request came in on, the cluster id, a live broker as "controller" (KRaft clients never talk to the
 * controllers), and the requested topics (all of them when the request's version says so) with topic ids,
 * partitions, leaders, leader epochs, replicas, ISR and offline replicas. Unknown topics are auto-created through the
 * controller when {@code auto.create.topics.enable} and the request allow it (answered LEADER_NOT_AVAILABLE, as
 * Kafka does while creation is in flight), and answered UNKNOWN_TOPIC_OR_PARTITION otherwise; illegal names get
 * INVALID_TOPIC_EXCEPTION and unknown topic ids (v12+) UNKNOWN_TOPIC_ID.
 *
 * <p>Reads one image per request (a volatile read); never blocks. Immutable, thread-safe.
 */
public final class MetadataHandler implements ApiHandler<MetadataRequestData, MetadataResponseData> {

    private static final Logger LOGGER = LogManager.getLogger(MetadataHandler.class);

    private final MetadataNode metadata;
    private final AutoTopicCreation autoCreation;

    public MetadataHandler(MetadataNode metadata, AutoTopicCreation autoCreation) {
        this.metadata = metadata;
        this.autoCreation = autoCreation;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.METADATA;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 13;
    }

    /**
     * Answered from the in-memory metadata image; auto-creation is an asynchronous controller call. The network
     * thread never waits for it.
     */
    @Override
    public RunsOn runsOn() {
        return RunsOn.NETWORK_THREAD;
    }

    @Override
    public CompletionStage<MetadataResponseData> handle(RequestContext ctx, MetadataRequestData request) {
        short version = ctx.apiVersion();
        boolean allTopics = request.topics() == null || (request.topics().isEmpty() && version == 0);
        if (!allTopics && version < 12) {
            for (MetadataRequestData.MetadataRequestTopic topic : request.topics()) {
                if (topic.name() == null || !Uuid.ZERO.equals(topic.topicId())) {
                    return completedFuture(errorResponse(ctx, request, Errors.INVALID_REQUEST));
                }
            }
        } else if (!allTopics && request.topics().stream().allMatch(t -> Uuid.ZERO.equals(t.topicId()))
                && request.topics().stream().anyMatch(t -> t.name() == null)) {
            // By name (no id given), an entry without a name names nothing: the rule of versions before 12.
            return completedFuture(errorResponse(ctx, request, Errors.INVALID_REQUEST));
        }
        MetadataImage image = metadata.currentImage();
        String listener = ctx.listenerName();
        List<MetadataResponseTopic> topics = new ArrayList<>();
        if (allTopics) {
            // Kafka lists only the topics the caller may DESCRIBE, and says nothing of the others.
            image.topicsById().values().stream().sorted((a, b) -> a.name().compareTo(b.name()))
                    .filter(t -> describable(ctx, t.name()))
                    .forEach(t -> topics.add(topicMetadata(image, t, listener, version)));
        } else {
            collectRequested(ctx, request, image, topics);
        }
        if (request.includeTopicAuthorizedOperations()) {
            topics.forEach(t -> t.setTopicAuthorizedOperations(t.name() == null ? ClusterView.TOPIC_OPERATIONS
                    : ctx.authorizedOperations(AclResourceType.TOPIC, t.name(), ClusterView.TOPIC_OPERATIONS)));
        }
        MetadataResponseData response = new MetadataResponseData().setThrottleTimeMs(0)
                .setBrokers(brokers(image, listener)).setClusterId(metadata.clusterId())
                .setControllerId(ClusterView.randomAliveBroker(image, listener)).setTopics(topics);
        if (request.includeClusterAuthorizedOperations()) {
            response.setClusterAuthorizedOperations(ctx.authorizedOperations(AclResourceType.CLUSTER,
                    AclResourceType.CLUSTER_NAME, ClusterView.CLUSTER_OPERATIONS));
        }
        return completedFuture(response);
    }

    private void collectRequested(RequestContext ctx, MetadataRequestData request, MetadataImage image,
                                  List<MetadataResponseTopic> topics) {
        short version = ctx.apiVersion();
        Set<String> names = new LinkedHashSet<>();
        boolean byId = request.topics().stream().anyMatch(t -> !Uuid.ZERO.equals(t.topicId()));
        if (byId) {
            for (MetadataRequestData.MetadataRequestTopic topic : request.topics()) {
                if (Uuid.ZERO.equals(topic.topicId())) {
                    continue;
                }
                Optional<TopicImage> known = image.topic(topic.topicId());
                if (known.isPresent() && !describable(ctx, known.get().name())) {
                    // Topic ids are not sensitive: Kafka answers TOPIC_AUTHORIZATION_FAILED with the id, no name.
                    topics.add(new MetadataResponseTopic().setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                            .setName(null).setTopicId(topic.topicId()).setIsInternal(false));
                } else if (known.isPresent()) {
                    names.add(known.get().name());
                } else {
                    topics.add(new MetadataResponseTopic().setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()).setName(null)
                            .setTopicId(topic.topicId()).setIsInternal(false));
                }
            }
        } else {
            request.topics().forEach(t -> names.add(t.name()));
        }
        Map<String, MetadataResponseTopic> missing = new LinkedHashMap<>();
        boolean autoCreate = autoCreation.enabled() && request.allowAutoTopicCreation();
        for (String name : names) {
            Optional<TopicImage> topic = image.topic(name);
            if (!describable(ctx, name) || topic.isEmpty() && autoCreate && !creatable(ctx, name)) {
                // Kafka does not tell whether a topic the caller may not DESCRIBE exists; one it may not create is
                // not auto-created. Both answer TOPIC_AUTHORIZATION_FAILED without an id.
                topics.add(new MetadataResponseTopic().setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                        .setName(name).setTopicId(Uuid.ZERO).setIsInternal(describable(ctx, name)
                                && ClusterView.isInternal(name)));
            } else if (topic.isPresent()) {
                topics.add(topicMetadata(image, topic.get(), ctx.listenerName(), version));
            } else {
                MetadataResponseTopic absent = new MetadataResponseTopic().setName(name).setTopicId(Uuid.ZERO)
                        .setIsInternal(ClusterView.isInternal(name));
                missing.put(name, absent);
                topics.add(absent);
            }
        }
        if (!missing.isEmpty()) {
            answerMissing(ctx, missing, autoCreate);
        }
    }

    /** Whether the caller may DESCRIBE the topic (always, without an authorizer). */
    private static boolean describable(RequestContext ctx, String topic) {
        return ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, topic);
    }

    /** Whether the caller may auto-create the topic: CREATE on the cluster or on the topic. */
    private static boolean creatable(RequestContext ctx, String topic) {
        return ctx.authorizeCluster(AclOperation.CREATE)
                || ctx.authorize(AclOperation.CREATE, AclResourceType.TOPIC, topic);
    }

    /**
     * Kafka's getTopicMetadata for topics the image lacks: auto-create them, or say why they are unknown. As Kafka
     * 4.1's {@code AutoTopicCreationManager} does for Metadata, the CreateTopics goes to the controller in an envelope
     * naming the client (its principal and client id) at the highest CreateTopics version (Kafka: the controller's
     * latest usable one, 7), so the controller counts the new partitions against the client's
     * {@code controller_mutation_rate} strictly (KIP-599): over its quota a topic is not created, the refusal only
     * logged, and the client is not throttled (the Metadata response carries no controller throttle time).
     */
    private void answerMissing(RequestContext ctx, Map<String, MetadataResponseTopic> missing, boolean create) {
        CreateTopicsRequestData creation = new CreateTopicsRequestData();
        for (Map.Entry<String, MetadataResponseTopic> entry : missing.entrySet()) {
            String name = entry.getKey();
            if (TopicNames.validate(name).isPresent()) {
                entry.getValue().setErrorCode(Errors.INVALID_TOPIC_EXCEPTION.code());
            } else if (create) {
                entry.getValue().setErrorCode(Errors.LEADER_NOT_AVAILABLE.code());
                creation.topics().add(autoCreation.creatableTopic(name));
            } else {
                entry.getValue().setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
            }
        }
        if (!creation.topics().isEmpty()) {
            CompletableFuture<CreateTopicsResponseData> created = ControllerCalls.forwardForClient(metadata, ctx,
                    creation, CreateTopicsResponseData.class);
            created.whenComplete((response, failure) -> {
                if (failure != null) {
                    LOGGER.info("Auto-creation of topics {} failed: {}", missing.keySet(), failure.toString());
                    return;
                }
                response.topics().stream().filter(t -> t.errorCode() != Errors.NONE.code()
                        && t.errorCode() != Errors.TOPIC_ALREADY_EXISTS.code()).forEach(t -> LOGGER.info(
                        "Auto-creation of topic {} failed: {} {}", t.name(), Errors.forCode(t.errorCode()),
                        t.errorMessage()));
            });
        }
    }

    private static MetadataResponseTopic topicMetadata(MetadataImage image, TopicImage topic, String listener,
                                                       short version) {
        List<MetadataResponsePartition> partitions = new ArrayList<>(topic.partitions().size());
        for (int index = 0; index < topic.partitions().size(); index++) {
            PartitionRegistration partition = topic.partitions().get(index);
            if (partition != null) {
                partitions.add(partitionMetadata(image, index, partition, listener, version));
            }
        }
        return new MetadataResponseTopic().setErrorCode(Errors.NONE.code()).setName(topic.name())
                .setTopicId(topic.id()).setIsInternal(ClusterView.isInternal(topic.name())).setPartitions(partitions);
    }

    private static MetadataResponsePartition partitionMetadata(MetadataImage image, int index,
            PartitionRegistration partition, String listener, short version) {
        // Kafka's errorUnavailableEndpoints: v0 lists only the replicas a client can reach.
        boolean filterUnavailable = version == 0;
        List<Integer> replicas = ClusterView.replicas(image, partition.replicas(), listener, filterUnavailable);
        List<Integer> isr = ClusterView.replicas(image, partition.isr(), listener, filterUnavailable);
        MetadataResponsePartition result = new MetadataResponsePartition().setPartitionIndex(index)
                .setLeaderEpoch(partition.leaderEpoch()).setReplicaNodes(replicas).setIsrNodes(isr)
                .setOfflineReplicas(ClusterView.offlineReplicas(image, partition, listener));
        Optional<BrokerEndpoint> leader = ClusterView.aliveEndpoint(image, partition.leader(), listener);
        if (leader.isEmpty()) {
            // Kafka: LEADER_NOT_AVAILABLE when the leader is unknown (or none); a known but unreachable leader is
            // LISTENER_NOT_FOUND from v6 on.
            boolean known = image.broker(partition.leader()).isPresent();
            Errors error = known && version >= 6 ? Errors.LISTENER_NOT_FOUND : Errors.LEADER_NOT_AVAILABLE;
            return result.setErrorCode(error.code()).setLeaderId(PartitionRegistration.NO_LEADER);
        }
        Errors error = replicas.size() < partition.replicas().size() ? Errors.REPLICA_NOT_AVAILABLE : Errors.NONE;
        return result.setErrorCode(error.code()).setLeaderId(partition.leader());
    }

    private static List<MetadataResponseBroker> brokers(MetadataImage image, String listener) {
        List<MetadataResponseBroker> brokers = new ArrayList<>();
        for (BrokerRegistration broker : ClusterView.aliveBrokers(image, listener)) {
            BrokerEndpoint endpoint = broker.endpoint(listener).orElseThrow();
            brokers.add(new MetadataResponseBroker().setNodeId(broker.id()).setHost(endpoint.host())
                    .setPort(endpoint.port()).setRack(broker.rack().orElse(null)));
        }
        return brokers;
    }

    /** Kafka's MetadataRequest.getErrorResponse: every requested topic with the error, no brokers. */
    @Override
    public MetadataResponseData errorResponse(RequestContext ctx, MetadataRequestData request, Errors error) {
        MetadataResponseData response = new MetadataResponseData().setThrottleTimeMs(0);
        if (request.topics() != null) {
            for (MetadataRequestData.MetadataRequestTopic topic : request.topics()) {
                response.topics().add(new MetadataResponseTopic().setName(topic.name() == null ? "" : topic.name())
                        .setTopicId(topic.topicId()).setErrorCode(error.code()).setIsInternal(false));
            }
        }
        if (ctx.apiVersion() >= 13) {
            response.setErrorCode(error.code());
        }
        return response;
    }
}
