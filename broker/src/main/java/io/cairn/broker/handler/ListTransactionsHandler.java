package io.cairn.broker.handler;

import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ListTransactionsRequestData;
import io.cairn.wire.message.ListTransactionsResponseData;
import java.util.ArrayList;
import java.util.concurrent.CompletionStage;

/**
 * ListTransactions v0-v2 (KIP-664): the transactions this broker coordinates, filtered by state (unknown state
 * names are reported back), producer id, v1+ duration (KIP-994: running longer than it) and v2+ transactional id
 * regular expression (KIP-1152: INVALID_REGULAR_EXPRESSION when it does not compile). COORDINATOR_LOAD_IN_PROGRESS
 * while a partition loads. Immutable, thread-safe.
 */
public final class ListTransactionsHandler implements ApiHandler<ListTransactionsRequestData,
        ListTransactionsResponseData> {

    private final TransactionCoordinator coordinator;

    public ListTransactionsHandler(TransactionCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.LIST_TRANSACTIONS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 2;
    }

    @Override
    public CompletionStage<ListTransactionsResponseData> handle(RequestContext ctx,
                                                                ListTransactionsRequestData request) {
        // Kafka: only the transactional ids the caller may DESCRIBE.
        return coordinator.list(request).thenApply(response -> {
            if (ctx.authorizer().enabled()) {
                response.setTransactionStates(new ArrayList<>(response.transactionStates().stream().filter(state ->
                        ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TRANSACTIONAL_ID,
                                state.transactionalId())).toList()));
            }
            return response;
        });
    }

    @Override
    public ListTransactionsResponseData errorResponse(RequestContext ctx, ListTransactionsRequestData request,
                                                      Errors error) {
        return new ListTransactionsResponseData().setThrottleTimeMs(0).setErrorCode(error.code());
    }

    @Override
    public void countErrors(ListTransactionsResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
