package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterClientQuotasRequestData;
import io.cairn.wire.message.AlterClientQuotasResponseData;
import io.cairn.wire.message.ApiKey;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * AlterClientQuotas v0-1 ({@code kafka-configs --alter --add-config producer_byte_rate=... --entity-type users},
 * {@code Admin.alterClientQuotas}): forwarded to the active controller as a KRaft broker forwards it; the controller
 * validates each entity and key with Kafka's rules and commits {@code ClientQuotaRecord}s ({@code
 * io.cairn.metadata.controller.ClientQuotaCommands}), none with {@code validate_only}; the response has one entry per
 * entity. More than {@link #MAX_ENTRIES} entities fail whole with POLICY_VIOLATION. A controller that does not answer
 * within 30 s gives REQUEST_TIMED_OUT for every entity. Needs ALTER_CONFIGS on the cluster when an authorizer is
 * configured (registered through {@link ClusterAuthorizedHandler}). Immutable, thread-safe, never blocks.
 */
public final class AlterClientQuotasHandler
        implements ApiHandler<AlterClientQuotasRequestData, AlterClientQuotasResponseData> {

    /**
     * The most entities one request may alter: Kafka's bound on the records of one operator request
     * ({@code MAX_RECORDS_PER_USER_OP}), applied to the entities before the request goes to the controller, so a
     * request of a million entities is refused here, whole, with POLICY_VIOLATION.
     */
    static final int MAX_ENTRIES = 10_000;

    private final MetadataNode metadata;

    public AlterClientQuotasHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ALTER_CLIENT_QUOTAS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    @Override
    public CompletionStage<AlterClientQuotasResponseData> handle(RequestContext ctx,
            AlterClientQuotasRequestData request) {
        if (request.entries().size() > MAX_ENTRIES) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.POLICY_VIOLATION));
        }
        if (request.entries().isEmpty()) {
            // Kafka's controller answers an empty request at once, without a write.
            return CompletableFuture.completedFuture(new AlterClientQuotasResponseData());
        }
        return ControllerCalls.withTimeout(metadata.submit(request), ControllerCalls.FORWARD_TIMEOUT_MS)
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "AlterClientQuotas"))
                        : ((AlterClientQuotasResponseData) answer).setThrottleTimeMs(0));
    }

    /** Kafka's AlterClientQuotasRequest.getErrorResponse: every entry's entity, as sent, with the error. */
    @Override
    public AlterClientQuotasResponseData errorResponse(RequestContext ctx, AlterClientQuotasRequestData request,
                                                       Errors error) {
        AlterClientQuotasResponseData response = new AlterClientQuotasResponseData().setThrottleTimeMs(0);
        request.entries().forEach(entry -> {
            AlterClientQuotasResponseData.EntryData data = new AlterClientQuotasResponseData.EntryData()
                    .setErrorCode(error.code()).setErrorMessage(error.message());
            entry.entity().forEach(e -> data.entity().add(new AlterClientQuotasResponseData.EntityData()
                    .setEntityType(e.entityType()).setEntityName(e.entityName())));
            response.entries().add(data);
        });
        return response;
    }

    @Override
    public void countErrors(AlterClientQuotasResponseData response, ErrorCounter counter) {
        response.entries().forEach(entry -> counter.count(entry.errorCode()));
    }
}
