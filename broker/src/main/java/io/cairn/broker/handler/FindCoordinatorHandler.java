package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.GroupCoordinator;
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
import io.cairn.wire.message.FindCoordinatorRequestData;
import io.cairn.wire.message.FindCoordinatorResponseData;
import io.cairn.wire.message.FindCoordinatorResponseData.Coordinator;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
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
 * created on first use the same way. A SHARE key is INVALID_REQUEST as on a Kafka broker without a share
 * coordinator, and an unknown key type fails the whole request with INVALID_REQUEST. As Kafka, a v4+ key's answer
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
    private final AutoTopicCreation autoCreation;
    private final AtomicBoolean creatingOffsets = new AtomicBoolean();
    private final AtomicBoolean creatingTransactions = new AtomicBoolean();

    /** @param transactions the transaction coordinator, whose partitions answer TRANSACTION keys */
    public FindCoordinatorHandler(MetadataNode metadata, GroupCoordinator groups, TransactionCoordinator transactions,
                                  AutoTopicCreation autoCreation) {
        this.metadata = metadata;
        this.groups = groups;
        this.transactions = transactions;
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
        if (keyType != GROUP) {
            return error(Errors.INVALID_REQUEST);
        }
        if (groups.topic().isEmpty()) {
            createTopic(GroupCoordinator.TOPIC, creatingOffsets);
            return error(Errors.COORDINATOR_NOT_AVAILABLE);
        }
        return leaderOf(ctx, new TopicPartition(GroupCoordinator.TOPIC, groups.partitionFor(key)));
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
            response.topics().stream().filter(t -> t.errorCode() != Errors.NONE.code()
                    && t.errorCode() != Errors.TOPIC_ALREADY_EXISTS.code())
                .forEach(t -> LOGGER.warn("Creation of {} failed: {} {} (replication factor {})", t.name(),
                    Errors.forCode(t.errorCode()), t.errorMessage(), GroupCoordinator.TOPIC.equals(topic)
                        ? autoCreation.offsetsReplication() : autoCreation.transactionReplication()));
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
