package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.UnregisterBrokerRequestData;
import io.cairn.wire.message.UnregisterBrokerResponseData;
import java.util.concurrent.CompletionStage;

/**
 * UnregisterBroker v0 ({@code kafka-cluster unregister --id}, {@code Admin.unregisterBroker}): forwarded to the
 * active controller as Kafka's broker forwards it. The controller removes the broker's registration (fencing it and
 * moving its leaderships first when it is not fenced yet, as Kafka's {@code handleBrokerUnregistered} takes it out
 * of every ISR) or answers BROKER_ID_NOT_REGISTERED; like Kafka it does not refuse a live broker, which registers
 * again with its next heartbeat. A controller that does not answer within 30 s gives REQUEST_TIMED_OUT. Immutable,
 * thread-safe, never blocks.
 */
public final class UnregisterBrokerHandler
        implements ApiHandler<UnregisterBrokerRequestData, UnregisterBrokerResponseData> {

    private final MetadataNode metadata;

    public UnregisterBrokerHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.UNREGISTER_BROKER;
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
    public CompletionStage<UnregisterBrokerResponseData> handle(RequestContext ctx,
                                                               UnregisterBrokerRequestData request) {
        return ControllerCalls.withTimeout(metadata.unregisterBroker(request), ControllerCalls.FORWARD_TIMEOUT_MS)
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "UnregisterBroker"))
                        : answer.setThrottleTimeMs(0));
    }

    /** Kafka's {@code UnregisterBrokerRequest.getErrorResponse}: the code alone. */
    @Override
    public UnregisterBrokerResponseData errorResponse(RequestContext ctx, UnregisterBrokerRequestData request,
                                                      Errors error) {
        return new UnregisterBrokerResponseData().setErrorCode(error.code());
    }

    @Override
    public void countErrors(UnregisterBrokerResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
