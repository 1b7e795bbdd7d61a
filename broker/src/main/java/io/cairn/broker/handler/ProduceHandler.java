package io.cairn.broker.handler;

import io.cairn.broker.produce.ProduceService;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceResponseData;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Produce v3-v13, advertised from v0 as Kafka 4.x does (KAFKA-18659): Kafka's {@code handleProduceRequest} as far as
 * the API goes (the caller's WRITE on the transactional id and on each topic, asked of the authorizer; only Kafka's
 * admin client may write internal topics), then the {@link ProduceService}, which checks, verifies and appends the
 * batches and answers when the acks allow.
 *
 * <p>Two-phase, and called on a request-handler thread (never on the event loop, {@link #runsOn()}); the service's
 * first stage completes with the last append, its second with the response (never for acks=0, where an error closes
 * the connection instead).
 *
 * <p>Stateless; thread-safe.
 */
public final class ProduceHandler implements TwoPhaseApiHandler<ProduceRequestData, ProduceResponseData> {

    private static final short MIN_VERSION = 3;
    private static final short MAX_VERSION = 13;
    /** Kafka's {@code AdminUtils.ADMIN_CLIENT_ID}: the only client allowed to append to internal topics. */
    private static final String ADMIN_CLIENT_ID = "__admin_client";

    private final ProduceService service;

    public ProduceHandler(ProduceService service) {
        this.service = service;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.PRODUCE;
    }

    @Override
    public short minVersion() {
        return MIN_VERSION;
    }

    @Override
    public short maxVersion() {
        return MAX_VERSION;
    }

    /** Kafka's {@code ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION}. */
    @Override
    public short advertisedMinVersion() {
        return 0;
    }

    @Override
    public boolean expectsResponse(ProduceRequestData request) {
        return request.acks() != 0;
    }

    @Override
    public Stages<ProduceResponseData> dispatch(RequestContext ctx, ProduceRequestData request) {
        ProduceService.Appending appending = service.produce(ctx.apiVersion(), ctx.clientId(), ctx.correlationId(),
                ctx.listenerName(), ADMIN_CLIENT_ID.equals(ctx.clientId()), request, authorization(ctx));
        return new Stages<>(appending.appended(), appending.response());
    }

    /** The caller's WRITE on topics (asked once per topic, as Kafka's filterByAuthorized) and transactional ids. */
    private static ProduceService.Authorization authorization(RequestContext ctx) {
        if (!ctx.authorizer().enabled()) {
            return ProduceService.Authorization.ALLOW_ALL;
        }
        Map<String, Boolean> decided = new HashMap<>();
        return new ProduceService.Authorization(
                topic -> decided.computeIfAbsent(topic,
                        t -> ctx.authorize(AclOperation.WRITE, AclResourceType.TOPIC, t)),
                id -> id != null && ctx.authorize(AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID, id));
    }

    /** Kafka's {@code ProduceResponse.errorCounts}: one code per partition. */
    @Override
    public void countErrors(ProduceResponseData response, ErrorCounter counter) {
        List<ProduceResponseData.TopicProduceResponse> topics = response.responses();
        for (int t = 0; t < topics.size(); t++) {
            List<ProduceResponseData.PartitionProduceResponse> partitions = topics.get(t).partitionResponses();
            for (int p = 0; p < partitions.size(); p++) {
                counter.count(partitions.get(p).errorCode());
            }
        }
    }

    @Override
    public ProduceResponseData errorResponse(RequestContext ctx, ProduceRequestData request, Errors error) {
        return ProduceService.errorResponse(ctx.apiVersion(), request, error);
    }
}
