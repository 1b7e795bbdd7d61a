package io.cairn.broker.handler;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.OffsetManager;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * TxnOffsetCommit v0-v5 with the transaction verification of KIP-890 (Kafka's
 * {@code GroupCoordinatorService.commitTransactionalOffsets} over {@code scheduleTransactionalWriteOperation}): before
 * the offsets are written, the group's {@code __consumer_offsets} partition starts a verification for the producer
 * ({@link GroupCoordinator#startTransactionVerification}); unless its transaction is already ongoing there, the
 * transaction coordinator is asked through {@link TransactionVerifier} whether the partition is in the transaction
 * (v0-v4, only when transaction.partition.verification.enable is on) or to add it (v5, which a producer at
 * transaction.version 2 sends instead of AddOffsetsToTxn: Kafka's
 * {@code txnOffsetCommitRequestVersionToTransactionSupportedOperation}), and the write carries the guard, so that a
 * commit of a transaction the coordinator ended meanwhile gets INVALID_TXN_STATE from the log. A refused
 * verification answers every partition with its error: TRANSACTION_ABORTABLE stays itself from v4 and is
 * INVALID_TXN_STATE before; the coordinator's retriable answers become COORDINATOR_NOT_AVAILABLE, which the producer
 * retries, as Kafka's group coordinator maps the produce path's NOT_ENOUGH_REPLICAS; a broker that does not lead the
 * partition answers NOT_COORDINATOR. Immutable, thread-safe; the verified write continues on the verifier's thread
 * and runs on the group's shard.
 */
final class TxnOffsetCommitHandler implements ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> {

    /** The write of a request on its group's shard, carrying the verification guard. */
    @FunctionalInterface
    interface VerifiedCommit {
        CompletableFuture<TxnOffsetCommitResponseData> commit(TxnOffsetCommitRequestData request,
                                                              VerificationGuard verification);
    }

    /** v4+ clients understand TRANSACTION_ABORTABLE (Kafka's {@code genericErrorSupported}). */
    private static final short ABORTABLE_VERSION = 4;
    private static final short ADD_PARTITION_VERSION = 5;
    private static final Set<Errors> RETRIABLE = Set.of(Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION,
            Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR);

    private final ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> commit;
    private final GroupCoordinator groups;
    private final VerifiedCommit verifiedCommit;
    private final TransactionVerifier verifier;

    TxnOffsetCommitHandler(ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> commit,
                           GroupCoordinator groups, VerifiedCommit verifiedCommit, TransactionVerifier verifier) {
        this.commit = commit;
        this.groups = groups;
        this.verifiedCommit = verifiedCommit;
        this.verifier = verifier;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.TXN_OFFSET_COMMIT;
    }

    @Override
    public short minVersion() {
        return commit.minVersion();
    }

    @Override
    public short maxVersion() {
        return commit.maxVersion();
    }

    @Override
    public CompletionStage<TxnOffsetCommitResponseData> handle(RequestContext ctx,
                                                               TxnOffsetCommitRequestData request) {
        // Kafka's handleTxnOffsetCommitRequest: WRITE on the transactional id first (the group's READ follows).
        if (request.transactionalId() != null
                && !ctx.authorize(AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, request.transactionalId())) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request,
                Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
        }
        // Then READ on the group, and READ on each topic: the others answer TOPIC_AUTHORIZATION_FAILED.
        if (!ctx.authorize(AclOperation.READ, AclResourceType.GROUP, request.groupId() == null ? ""
                : request.groupId())) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.GROUP_AUTHORIZATION_FAILED));
        }
        List<TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic> readable = new ArrayList<>();
        List<TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic> unreadable = new ArrayList<>();
        for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic topic : request.topics()) {
            (ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic.name()) ? readable : unreadable)
                .add(topic);
        }
        if (unreadable.isEmpty()) {
            return handleAuthorized(ctx, request);
        }
        TxnOffsetCommitResponseData refused = GroupHandlers.txnOffsetCommitError(
            new TxnOffsetCommitRequestData().setTopics(unreadable), Errors.TOPIC_AUTHORIZATION_FAILED);
        return handleAuthorized(ctx, new TxnOffsetCommitRequestData().setTransactionalId(request.transactionalId())
            .setGroupId(request.groupId()).setProducerId(request.producerId())
            .setProducerEpoch(request.producerEpoch()).setGenerationId(request.generationId())
            .setMemberId(request.memberId()).setGroupInstanceId(request.groupInstanceId()).setTopics(readable))
            .thenApply(response -> {
                List<TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic> all = new ArrayList<>(response.topics());
                all.addAll(refused.topics());
                return response.setTopics(all);
            });
    }

    private CompletionStage<TxnOffsetCommitResponseData> handleAuthorized(RequestContext ctx,
                                                                          TxnOffsetCommitRequestData request) {
        String groupId = request.groupId();
        boolean add = ctx.apiVersion() >= ADD_PARTITION_VERSION;
        if (groupId == null || groupId.isEmpty() || request.transactionalId() == null
                || (!add && !verifier.verificationEnabled())) {
            return commit.handle(ctx, request);
        }
        VerificationGuard guard;
        try {
            guard = groups.startTransactionVerification(groupId, request.producerId(), request.producerEpoch(), add);
        } catch (ApiException e) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request,
                OffsetManager.txnCommitError(e)));
        }
        if (guard == VerificationGuard.SENTINEL) {
            return verifiedCommit.commit(request, guard);
        }
        TopicPartition offsets = new TopicPartition(GroupCoordinator.TOPIC, groups.partitionFor(groupId));
        CompletableFuture<Map<TopicPartition, Errors>> verified = verifier.verifyOrAdd(request.transactionalId(),
                request.producerId(), request.producerEpoch(), List.of(offsets),
                ctx.apiVersion() >= ABORTABLE_VERSION, add);
        return verified.thenCompose(errors -> {
            Errors error = errors.getOrDefault(offsets, Errors.NONE);
            if (error == Errors.NONE) {
                return verifiedCommit.commit(request, guard);
            }
            return CompletableFuture.completedFuture(errorResponse(ctx, request,
                    RETRIABLE.contains(error) ? Errors.COORDINATOR_NOT_AVAILABLE : error));
        });
    }

    @Override
    public TxnOffsetCommitResponseData errorResponse(RequestContext ctx, TxnOffsetCommitRequestData request,
                                                     Errors error) {
        return commit.errorResponse(ctx, request, error);
    }

    @Override
    public void countErrors(TxnOffsetCommitResponseData response, ErrorCounter counter) {
        commit.countErrors(response, counter);
    }
}
