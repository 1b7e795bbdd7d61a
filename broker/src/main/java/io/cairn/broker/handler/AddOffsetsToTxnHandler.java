package io.cairn.broker.handler;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddOffsetsToTxnRequestData;
import io.cairn.wire.message.AddOffsetsToTxnResponseData;
import io.cairn.wire.message.ApiKey;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * AddOffsetsToTxn v0-v4 (Kafka's {@code handleAddOffsetsToTxnRequest}): adds the group's {@code __consumer_offsets}
 * partition to the producer's transaction, so that its markers reach the offsets TxnOffsetCommit writes there.
 * PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2. Immutable, thread-safe.
 */
public final class AddOffsetsToTxnHandler implements ApiHandler<AddOffsetsToTxnRequestData,
        AddOffsetsToTxnResponseData> {

    private final TransactionCoordinator coordinator;
    private final GroupCoordinator groups;

    public AddOffsetsToTxnHandler(TransactionCoordinator coordinator, GroupCoordinator groups) {
        this.coordinator = coordinator;
        this.groups = groups;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ADD_OFFSETS_TO_TXN;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 4;
    }

    @Override
    public CompletionStage<AddOffsetsToTxnResponseData> handle(RequestContext ctx,
                                                               AddOffsetsToTxnRequestData request) {
        // Kafka: WRITE on the transactional id, then READ on the group.
        if (!ctx.authorize(AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, request.transactionalId())) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request,
                    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
        }
        if (!ctx.authorize(AclOperation.READ, AclResourceType.GROUP, request.groupId())) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.GROUP_AUTHORIZATION_FAILED));
        }
        TopicPartition offsets = new TopicPartition(GroupCoordinator.TOPIC, groups.partitionFor(request.groupId()));
        return coordinator.addPartitions(request.transactionalId(), request.producerId(), request.producerEpoch(),
                Set.of(offsets), (short) 0).thenApply(error -> errorResponse(ctx, request, error));
    }

    @Override
    public AddOffsetsToTxnResponseData errorResponse(RequestContext ctx, AddOffsetsToTxnRequestData request,
                                                     Errors error) {
        return new AddOffsetsToTxnResponseData().setThrottleTimeMs(0)
                .setErrorCode(TransactionErrors.forVersion(error, ctx.apiVersion()).code());
    }

    @Override
    public void countErrors(AddOffsetsToTxnResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
