package io.cairn.broker.handler;

import io.cairn.broker.fetch.FetchResponses;
import io.cairn.broker.fetch.FetchService;
import io.cairn.broker.quota.RequestQuotas;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.FetchableTopicResponse;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Fetch v4-18 (every version Kafka 4.1.1 serves): consumers and followers read records, with incremental fetch
 * sessions (KIP-227), long polls by {@code max_wait_ms}/{@code min_bytes}, byte limits, isolation levels and topic
 * ids (v13+). The work is {@link FetchService}'s; the response's records are file slices that the network layer
 * sends with zero copy, released through {@link #releaseResponse}.
 *
 * <p>Stateless and thread-safe.
 */
public final class FetchHandler implements ApiHandler<FetchRequestData, FetchResponseData> {

    static final short MIN_VERSION = 4;
    static final short MAX_VERSION = 18;

    private final FetchService service;
    private final RequestQuotas quotas;

    public FetchHandler(FetchService service) {
        this(service, RequestQuotas.NONE);
    }

    /** A handler whose consumer fetches return at most what the client's {@code consumer_byte_rate} allows. */
    public FetchHandler(FetchService service, RequestQuotas quotas) {
        this.service = service;
        this.quotas = quotas;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.FETCH;
    }

    @Override
    public short minVersion() {
        return MIN_VERSION;
    }

    @Override
    public short maxVersion() {
        return MAX_VERSION;
    }

    @Override
    public CompletionStage<FetchResponseData> handle(RequestContext ctx, FetchRequestData request) {
        FetchService.Authorization authorization = ctx.authorizer().enabled()
                ? new FetchService.Authorization(ctx.authorizeCluster(AclOperation.CLUSTER_ACTION),
                        topic -> ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic))
                : FetchService.Authorization.ALLOW_ALL;
        if (request.isolationLevel() != 0 && request.isolationLevel() != 1) {
            // Kafka's request parser rejects it (IsolationLevel.forId throws) and the whole request fails with
            // UNKNOWN_SERVER_ERROR: Kafka's code, answered here without the unexpected-error log (a client's input).
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.UNKNOWN_SERVER_ERROR));
        }
        int replicaId = ctx.apiVersion() >= 15 ? request.replicaState().replicaId() : request.replicaId();
        if (replicaId < 0) {
            // Kafka's cap: a response never larger than the consumer's quota allows in one window.
            int quotaBytes = quotas.fetchMaxBytes(ctx.connection().principal().name(), ctx.clientId());
            if (quotaBytes < request.maxBytes()) {
                request.setMaxBytes(quotaBytes);
            }
        }
        return service.fetch(ctx.apiVersion(), ctx.clientId(), ctx.listenerName(), request, authorization);
    }

    /** Kafka's {@code FetchRequest.getErrorResponse}: the error at the top level and on every partition asked for. */
    @Override
    public FetchResponseData errorResponse(RequestContext ctx, FetchRequestData request, Errors error) {
        List<FetchableTopicResponse> topics = new ArrayList<>();
        for (FetchRequestData.FetchTopic topic : request.topics()) {
            List<PartitionData> partitions = new ArrayList<>();
            for (FetchRequestData.FetchPartition p : topic.partitions()) {
                partitions.add(new PartitionData().setPartitionIndex(p.partition()).setErrorCode(error.code())
                    .setHighWatermark(-1L).setLastStableOffset(-1L).setLogStartOffset(-1L)
                    .setAbortedTransactions(null).setRecords(Unpooled.EMPTY_BUFFER));
            }
            topics.add(new FetchableTopicResponse().setTopic(topic.topic()).setTopicId(topic.topicId())
                .setPartitions(partitions));
        }
        return new FetchResponseData().setErrorCode(error.code()).setSessionId(request.sessionId())
            .setResponses(topics);
    }

    /** The records of a response are file slices; they go back when the response is written or dropped. */
    /** Kafka's {@code FetchResponse.errorCounts}: the top-level code, then one per partition. */
    @Override
    public void countErrors(FetchResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
        List<FetchableTopicResponse> topics = response.responses();
        for (int t = 0; t < topics.size(); t++) {
            List<PartitionData> partitions = topics.get(t).partitions();
            for (int p = 0; p < partitions.size(); p++) {
                counter.count(partitions.get(p).errorCode());
            }
        }
    }

    @Override
    public void releaseResponse(FetchResponseData response) {
        FetchResponses.release(response);
    }
}
