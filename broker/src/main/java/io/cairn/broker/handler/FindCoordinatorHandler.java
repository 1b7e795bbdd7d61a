package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.share.ShareCoordinator;
import io.cairn.broker.share.SharePartitionKey;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.FindCoordinatorRequestData;
import io.cairn.wire.message.FindCoordinatorResponseData;
import io.cairn.wire.message.FindCoordinatorResponseData.Coordinator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * FindCoordinator v0-v6 (Kafka's {@code getCoordinator}): the coordinator of a group is the leader of the group's
 * {@code __consumer_offsets} partition, answered with its endpoint on the request's listener. Before the topic
 * exists every request asks the controller to create it (as Kafka does, whatever {@code auto.create.topics.enable}
 * says; one creation in flight at a time) and the answer is COORDINATOR_NOT_AVAILABLE, so a client retrying gets its
 * coordinator as soon as a creation succeeds (one the controller refused, e.g. too few brokers registered, is asked
 * again by the next request) and the partition has a live leader; v4+ answers a batch of keys one by one.
 *
 * <p>The coordinator of a transactional id is the leader of its {@code __transaction_state} partition, the topic
 * created on first use the same way. The coordinator of a SHARE key ({@code "groupId:topicId:partition"}, v6+
 * only: INVALID_REQUEST before) is the leader of its {@code __share_group_state} partition, created on first use
 * too; as Kafka, only a caller with CLUSTER_ACTION on the cluster may ask (else the whole request fails with
 * CLUSTER_AUTHORIZATION_FAILED) and a key that does not parse is INVALID_REQUEST. An unknown key type fails the whole
 * request with INVALID_REQUEST. As Kafka, a v4+ key's answer
 * carries no error message and a v0-3 answer the error's default one. Thread-safe, never blocks.
 */
public final class FindCoordinatorHandler
        implements ApiHandler<FindCoordinatorRequestData, FindCoordinatorResponseData> {

    private static final Logger LOGGER = LogManager.getLogger(FindCoordinatorHandler.class);
    private static final byte GROUP = 0;
    private static final byte TRANSACTION = 1;
    private static final byte SHARE = 2;

    private final MetadataNode metadata;
    private final GroupCoordinator groups;
    private final TransactionCoordinator transactions;
    private final ShareCoordinator shares;
    private final AutoTopicCreation autoCreation;
    private final AtomicBoolean creatingOffsets = new AtomicBoolean();
    private final AtomicBoolean creatingTransactions = new AtomicBoolean();
    private final AtomicBoolean creatingShareState = new AtomicBoolean();
    /**
     * Per internal topic, the controller's last refusal to create it: a client asks again about every 100 ms while it
     * is refused (a cluster smaller than the topic's replication factor), so a refusal is logged at WARN once, and
     * again only when it changes or after the topic was created.
     */
    private final Map<String, String> lastRefusal = new ConcurrentHashMap<>();

    /** Without a share coordinator: a SHARE key is INVALID_REQUEST, as on a Kafka broker without one. */
    public FindCoordinatorHandler(MetadataNode metadata, GroupCoordinator groups, TransactionCoordinator transactions,
                                  AutoTopicCreation autoCreation) {
        this(metadata, groups, transactions, null, autoCreation);
    }

    /**
     * @param transactions the transaction coordinator, whose partitions answer TRANSACTION keys
     * @param shares       the share coordinator, whose partitions answer SHARE keys (null: none)
     */
    public FindCoordinatorHandler(MetadataNode metadata, GroupCoordinator groups, TransactionCoordinator transactions,
                                  ShareCoordinator shares, AutoTopicCreation autoCreation) {
        this.metadata = metadata;
        this.groups = groups;
        this.transactions = transactions;
        this.shares = shares;
        this.autoCreation = autoCreation;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.FIND_COORDINATOR;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 6;
    }

    @Override
    public CompletionStage<FindCoordinatorResponseData> handle(RequestContext ctx, FindCoordinatorRequestData request) {
        FindCoordinatorResponseData response = new FindCoordinatorResponseData().setThrottleTimeMs(0);
        if (ctx.apiVersion() >= 4) {
            if (request.keyType() != GROUP && request.keyType() != TRANSACTION && request.keyType() != SHARE) {
                return completedFuture(errorResponse(ctx, request, Errors.INVALID_REQUEST));
            }
            // Kafka's authorizeClusterOperation throws for the first SHARE key of an unauthorized caller.
            if (request.keyType() == SHARE && shares != null && ctx.apiVersion() >= 6
                    && !ctx.authorize(AclOperation.CLUSTER_ACTION, AclResourceType.CLUSTER,
                    AclResourceType.CLUSTER_NAME)) {
                return completedFuture(errorResponse(ctx, request, Errors.CLUSTER_AUTHORIZATION_FAILED));
            }
            for (String key : request.coordinatorKeys()) {
                response.coordinators().add(find(ctx, request.keyType(), key).setKey(key));
            }
            return completedFuture(response);
        }
        Coordinator found = find(ctx, request.keyType(), request.key());
        return completedFuture(response.setErrorCode(found.errorCode())
            .setErrorMessage(Errors.forCode(found.errorCode()).message())
            .setNodeId(found.nodeId()).setHost(found.host()).setPort(found.port()));
    }

    private Coordinator find(RequestContext ctx, byte keyType, String key) {
        // Kafka's getCoordinator: DESCRIBE on the group or transactional id before anything else.
        if (keyType == GROUP && !ctx.authorize(AclOperation.DESCRIBE, AclResourceType.GROUP, key)) {
            return error(Errors.GROUP_AUTHORIZATION_FAILED);
        }
        if (keyType == TRANSACTION && !ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TRANSACTIONAL_ID, key)) {
            return error(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
        }
        if (keyType == TRANSACTION) {
            if (transactions.topic().isEmpty()) {
                createTopic(TransactionCoordinator.TOPIC, creatingTransactions);
                return error(Errors.COORDINATOR_NOT_AVAILABLE);
            }
            return leaderOf(ctx, new TopicPartition(TransactionCoordinator.TOPIC, transactions.partitionFor(key)));
        }
        if (keyType == SHARE) {
            return findShare(ctx, key);
        }
        if (keyType != GROUP) {
            return error(Errors.INVALID_REQUEST);
        }
        if (groups.topic().isEmpty()) {
            createTopic(GroupCoordinator.TOPIC, creatingOffsets);
            return error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        return leaderOf(ctx, new TopicPartition(GroupCoordinator.TOPIC, groups.partitionFor(key)));
    }

    private Coordinator findShare(RequestContext ctx, String key) {
        if (shares == null || ctx.apiVersion() < 6) {
            return error(Errors.INVALID_REQUEST);
        }
        SharePartitionKey shareKey;
        try {
            shareKey = SharePartitionKey.parse(key);
        } catch (IllegalArgumentException e) {
            LOGGER.error("Share coordinator key is invalid: {}", e.getMessage());
            return error(Errors.INVALID_REQUEST);
        }
        if (shares.topic().isEmpty()) {
            createTopic(ShareCoordinator.TOPIC, creatingShareState);
            return error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        return leaderOf(ctx, new TopicPartition(ShareCoordinator.TOPIC, shares.partitionFor(shareKey)));
    }

    private Coordinator leaderOf(RequestContext ctx, TopicPartition partition) {
        MetadataImage image = metadata.currentImage();
        Optional<PartitionRegistration> registration = image.partition(partition);
        Optional<BrokerEndpoint> leader = registration.flatMap(r ->
            ClusterView.aliveEndpoint(image, r.leader(), ctx.listenerName()));
        if (leader.isEmpty()) {
            return error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        return new Coordinator().setErrorCode(Errors.NONE.code()).setErrorMessage(null)
            .setNodeId(registration.get().leader()).setHost(leader.get().host()).setPort(leader.get().port());
    }

    /** A key's failed answer: no node and, as Kafka's per-key answers, no message. */
    private static Coordinator error(Errors error) {
        return new Coordinator().setErrorCode(error.code()).setErrorMessage(null).setNodeId(-1).setHost("").setPort(-1);
    }

    /** Asks the controller to create an internal topic, one request at a time. */
    private void createTopic(String topic, AtomicBoolean creating) {
        if (!creating.compareAndSet(false, true)) {
            return;
        }
        CreateTopicsRequestData creation = new CreateTopicsRequestData().setTimeoutMs(30_000);
        creation.topics().add(autoCreation.creatableTopic(topic));
        metadata.createTopics(creation).whenComplete((response, failure) -> {
            creating.set(false);
            if (failure != null) {
                LOGGER.info("Creation of {} failed: {}", topic, failure.toString());
                return;
            }
            for (CreateTopicsResponseData.CreatableTopicResult t : response.topics()) {
                if (t.errorCode() == Errors.NONE.code() || t.errorCode() == Errors.TOPIC_ALREADY_EXISTS.code()) {
                    lastRefusal.remove(t.name());
                    continue;
                }
                String refusal = Errors.forCode(t.errorCode()) + " " + t.errorMessage() + " (replication factor "
                    + (GroupCoordinator.TOPIC.equals(topic) ? autoCreation.offsetsReplication()
                        : autoCreation.transactionReplication()) + ")";
                if (refusal.equals(lastRefusal.put(t.name(), refusal))) {
                    LOGGER.debug("Creation of {} failed again: {}", t.name(), refusal);
                } else {
                    LOGGER.warn("Creation of {} failed: {}; logged again only if the answer changes", t.name(),
                        refusal);
                }
            }
        });
    }

    @Override
    public FindCoordinatorResponseData errorResponse(RequestContext ctx, FindCoordinatorRequestData request,
                                                     Errors error) {
        FindCoordinatorResponseData response = new FindCoordinatorResponseData().setThrottleTimeMs(0);
        if (ctx.apiVersion() >= 4) {
            request.coordinatorKeys().forEach(key -> response.coordinators().add(error(error)
                .setErrorMessage(error.message()).setKey(key)));
            return response;
        }
        return response.setErrorCode(error.code()).setErrorMessage(error.message()).setNodeId(-1).setHost("")
            .setPort(-1);
    }
}
