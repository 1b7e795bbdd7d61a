package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.txn.ProducerIdManager;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.broker.txn.TransactionManager.ProducerIdAndEpoch;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.InitProducerIdRequestData;
import io.cairn.wire.message.InitProducerIdResponseData;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * InitProducerId v0-v5, as Kafka 4.1.1's {@code KafkaApis} and {@code TransactionCoordinator} answer it
 * (v6 adds two-phase commit and is unstable in 4.1.1, so Kafka does not advertise it). A producer id with an epoch
 * but not the other (v3+) is INVALID_REQUEST. An idempotent producer ({@code transactional_id} null) always gets a
 * new producer id with epoch 0, whatever id and epoch it names: Kafka's idempotent producer bumps its epoch
 * itself and asks for a new id only when the epoch would overflow or its id is unknown (KIP-360). For a
 * transactional id the {@link TransactionCoordinator} answers (an empty id is INVALID_REQUEST, a transaction timeout
 * outside (0, {@code transaction.max.timeout.ms}] INVALID_TRANSACTION_TIMEOUT, KIP-360 recovery with the named id and
 * epoch; NOT_COORDINATOR when the id's {@code __transaction_state} partition is not led here); PRODUCER_FENCED is
 * INVALID_PRODUCER_EPOCH before v4. Immutable, thread-safe, never blocks.
 */
public final class InitProducerIdHandler implements ApiHandler<InitProducerIdRequestData, InitProducerIdResponseData> {

    /** Kafka's {@code RecordBatch.NO_PRODUCER_ID}. */
    static final long NO_PRODUCER_ID = -1L;
    /** Kafka's {@code RecordBatch.NO_PRODUCER_EPOCH}. */
    static final short NO_PRODUCER_EPOCH = -1;

    private final ProducerIdManager producerIds;
    private final TransactionCoordinator transactions;

    /**
     * @param producerIds  where new producer ids of idempotent producers come from
     * @param transactions the transaction coordinator, which answers transactional ids
     */
    public InitProducerIdHandler(ProducerIdManager producerIds, TransactionCoordinator transactions) {
        this.producerIds = producerIds;
        this.transactions = transactions;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.INIT_PRODUCER_ID;
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
    public CompletionStage<InitProducerIdResponseData> handle(RequestContext ctx, InitProducerIdRequestData request) {
        // Kafka's checks first: WRITE on the transactional id, or for an idempotent producer IDEMPOTENT_WRITE on the
        // cluster or WRITE on some topic.
        if (request.transactionalId() != null) {
            if (!ctx.authorize(AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, request.transactionalId())) {
                return completedFuture(errorResponse(ctx, request, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
            }
        } else if (!ctx.authorizeCluster(AclOperation.IDEMPOTENT_WRITE)
                && !ctx.authorizeByResourceType(AclOperation.WRITE, AclResourceType.TOPIC)) {
            return completedFuture(errorResponse(ctx, request, Errors.CLUSTER_AUTHORIZATION_FAILED));
        }
        boolean noId = request.producerId() == NO_PRODUCER_ID;
        boolean noEpoch = request.producerEpoch() == NO_PRODUCER_EPOCH;
        if (noId != noEpoch) {
            return completedFuture(errorResponse(ctx, request, Errors.INVALID_REQUEST));
        }
        String transactionalId = request.transactionalId();
        if (transactionalId == null) {
            return producerIds.generateProducerId().handle((id, error) -> error == null
                    ? new InitProducerIdResponseData().setThrottleTimeMs(0).setErrorCode(Errors.NONE.code())
                            .setProducerId(id).setProducerEpoch((short) 0)
                    : errorResponse(ctx, request, Errors.forException(error)));
        }
        Optional<ProducerIdAndEpoch> expected = noId ? Optional.empty()
                : Optional.of(new ProducerIdAndEpoch(request.producerId(), request.producerEpoch()));
        return transactions.initProducerId(transactionalId, request.transactionTimeoutMs(), expected)
                .thenApply(result -> result.error() != Errors.NONE
                        ? errorResponse(ctx, request, result.error())
                        : new InitProducerIdResponseData().setThrottleTimeMs(0).setErrorCode(Errors.NONE.code())
                                .setProducerId(result.producerId()).setProducerEpoch(result.producerEpoch()));
    }

    @Override
    public InitProducerIdResponseData errorResponse(RequestContext ctx, InitProducerIdRequestData request,
            Errors error) {
        Errors mapped = error == Errors.PRODUCER_FENCED && ctx.apiVersion() < 4 ? Errors.INVALID_PRODUCER_EPOCH : error;
        return new InitProducerIdResponseData().setThrottleTimeMs(0).setErrorCode(mapped.code())
                .setProducerId(NO_PRODUCER_ID).setProducerEpoch(NO_PRODUCER_EPOCH);
    }
}
