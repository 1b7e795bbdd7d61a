package io.cairn.broker.handler;

import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.EndTxnRequestData;
import io.cairn.wire.message.EndTxnResponseData;
import java.util.concurrent.CompletionStage;

/**
 * EndTxn v0-v4 (Kafka's {@code handleEndTxnRequest} at transaction.version 1): commits or aborts the producer's
 * transaction; the answer comes once PrepareCommit/PrepareAbort is written, the markers follow. v5 is
 * transaction.version 2 (an epoch bump on every commit, the new producer id and epoch in the answer), which Cairn
 * does not serve. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2. Immutable, thread-safe.
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
        return 4;
    }

    @Override
    public CompletionStage<EndTxnResponseData> handle(RequestContext ctx, EndTxnRequestData request) {
        return coordinator.endTransaction(request.transactionalId(), request.producerId(), request.producerEpoch(),
                request.committed()).thenApply(error -> errorResponse(ctx, request, error));
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
