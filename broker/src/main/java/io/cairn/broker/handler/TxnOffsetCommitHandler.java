package io.cairn.broker.handler;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * TxnOffsetCommit v0-v5 with KIP-890 part 2: a v5 request comes from a producer at transaction.version 2, which sends
 * no AddOffsetsToTxn, so the group's {@code __consumer_offsets} partition is first added to its transaction through
 * the coordinator (Kafka's {@code txnOffsetCommitRequestVersionToTransactionSupportedOperation}: v5 adds), then the
 * offsets are written by the group handler ({@link GroupHandlers#txnOffsetCommit}). An add that fails answers every
 * partition with its error; the coordinator's retriable answers become COORDINATOR_NOT_AVAILABLE, which the producer
 * retries, as Kafka's group coordinator maps the produce path's NOT_ENOUGH_REPLICAS. Immutable, thread-safe.
 */
final class TxnOffsetCommitHandler implements ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> {

    private static final short ADD_PARTITION_VERSION = 5;
    private static final Set<Errors> RETRIABLE = Set.of(Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION,
            Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR);

    private final ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> commit;
    private final GroupCoordinator groups;
    private final TransactionVerifier verifier;

    TxnOffsetCommitHandler(ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> commit,
                           GroupCoordinator groups, TransactionVerifier verifier) {
        this.commit = commit;
        this.groups = groups;
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
        String groupId = request.groupId();
        if (ctx.apiVersion() < ADD_PARTITION_VERSION || groupId == null || groupId.isEmpty()) {
            return commit.handle(ctx, request);
        }
        TopicPartition offsets = new TopicPartition(GroupCoordinator.TOPIC, groups.partitionFor(groupId));
        CompletableFuture<Map<TopicPartition, Errors>> added = verifier.verifyOrAdd(request.transactionalId(),
                request.producerId(), request.producerEpoch(), List.of(offsets), true, true);
        return added.thenCompose(errors -> {
            Errors error = errors.getOrDefault(offsets, Errors.NONE);
            if (error == Errors.NONE) {
                return commit.handle(ctx, request);
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
