package io.cairn.broker.handler;

import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeTransactionsRequestData;
import io.cairn.wire.message.DescribeTransactionsResponseData;
import io.cairn.wire.message.DescribeTransactionsResponseData.TransactionState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DescribeTransactions v0 (KIP-664): the state of each transactional id from its coordinator, in request order
 * (NOT_COORDINATOR for an id whose partition this broker does not lead, TRANSACTIONAL_ID_NOT_FOUND for an unknown
 * one, INVALID_REQUEST for an empty one). Immutable, thread-safe.
 */
public final class DescribeTransactionsHandler implements ApiHandler<DescribeTransactionsRequestData,
        DescribeTransactionsResponseData> {

    private final TransactionCoordinator coordinator;

    public DescribeTransactionsHandler(TransactionCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_TRANSACTIONS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 0;
    }

    @Override
    public CompletionStage<DescribeTransactionsResponseData> handle(RequestContext ctx,
                                                                    DescribeTransactionsRequestData request) {
        List<CompletableFuture<TransactionState>> states = new ArrayList<>();
        // Kafka: DESCRIBE on each transactional id, and only the topics the caller may DESCRIBE.
        request.transactionalIds().forEach(id -> states.add(
                ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TRANSACTIONAL_ID, id) ? coordinator.describe(id)
                : CompletableFuture.completedFuture(new TransactionState().setTransactionalId(id)
                        .setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code()))));
        return CompletableFuture.allOf(states.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            DescribeTransactionsResponseData response = new DescribeTransactionsResponseData().setThrottleTimeMs(0);
            states.forEach(state -> {
                TransactionState described = state.join();
                if (ctx.authorizer().enabled()) {
                    described.setTopics(new ArrayList<>(described.topics().stream().filter(t -> ctx.authorize(
                            AclOperation.DESCRIBE, AclResourceType.TOPIC, t.topic())).toList()));
                }
                response.transactionStates().add(described);
            });
            return response;
        });
    }

    @Override
    public DescribeTransactionsResponseData errorResponse(RequestContext ctx, DescribeTransactionsRequestData request,
                                                          Errors error) {
        DescribeTransactionsResponseData response = new DescribeTransactionsResponseData().setThrottleTimeMs(0);
        request.transactionalIds().forEach(id -> response.transactionStates().add(new TransactionState()
                .setTransactionalId(id).setErrorCode(error.code())));
        return response;
    }

    @Override
    public void countErrors(DescribeTransactionsResponseData response, ErrorCounter counter) {
        for (TransactionState state : response.transactionStates()) {
            counter.count(state.errorCode());
        }
    }
}
