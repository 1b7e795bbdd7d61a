package io.cairn.broker.handler;

import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.broker.txn.TransactionMetadata;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.EndTxnRequestData;
import io.cairn.wire.message.EndTxnResponseData;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * EndTxn v0-v5 (Kafka's {@code handleEndTxnRequest}): commits or aborts the producer's transaction; the answer comes
 * once PrepareCommit/PrepareAbort is written, the markers follow. v5 is the client's transaction.version 2 (KIP-890
 * part 2: the epoch goes up on every commit and abort, and the answer names the producer id and epoch of the next
 * transaction), v0-v4 its transaction.version 0. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2. Immutable,
 * thread-safe.
 */
public final class EndTxnHandler implements ApiHandler<EndTxnRequestData, EndTxnResponseData> {

    private final TransactionCoordinator coordinator;

    public EndTxnHandler(TransactionCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.END_TXN;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 5;
    }

    @Override
    public CompletionStage<EndTxnResponseData> handle(RequestContext ctx, EndTxnRequestData request) {
        if (!ctx.authorize(AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, request.transactionalId())) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request,
                    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
        }
        short clientVersion = ctx.apiVersion() >= 5 ? TransactionMetadata.TV_2 : 0;
        return coordinator.endTransaction(request.transactionalId(), request.producerId(), request.producerEpoch(),
                request.committed(), clientVersion).thenApply(result -> errorResponse(ctx, request, result.error())
                        .setProducerId(result.producerId()).setProducerEpoch(result.producerEpoch()));
    }

    @Override
    public EndTxnResponseData errorResponse(RequestContext ctx, EndTxnRequestData request, Errors error) {
        return new EndTxnResponseData().setThrottleTimeMs(0)
                .setErrorCode(TransactionErrors.forVersion(error, ctx.apiVersion()).code());
    }

    @Override
    public void countErrors(EndTxnResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
