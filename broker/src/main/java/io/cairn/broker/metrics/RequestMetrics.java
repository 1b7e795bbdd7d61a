package io.cairn.broker.metrics;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.protocol.ApiMessage;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The request meters of every API, in an array indexed by api key (created on an API's first request), and Kafka's
 * split of Fetch into {@code FetchConsumer} and {@code FetchFollower}: a Fetch is recorded under both {@code Fetch}
 * and one of these, as Kafka's {@code RequestChannel} records it.
 *
 * <p>Thread-safe.
 */
public final class RequestMetrics {

    public static final String FETCH_CONSUMER = "FetchConsumer";
    public static final String FETCH_FOLLOWER = "FetchFollower";

    private final MeterRegistry registry;
    private final MillisSummaries summaries;
    private final AtomicReferenceArray<ApiRequestMetrics> byApiKey;
    private final ApiRequestMetrics fetchConsumer;
    private final ApiRequestMetrics fetchFollower;

    RequestMetrics(MeterRegistry registry, MillisSummaries summaries) {
        this.registry = registry;
        this.summaries = summaries;
        int maxId = 0;
        for (ApiKey key : ApiKey.values()) {
            maxId = Math.max(maxId, key.id());
        }
        this.byApiKey = new AtomicReferenceArray<>(maxId + 1);
        this.fetchConsumer = new ApiRequestMetrics(registry, summaries, FETCH_CONSUMER);
        this.fetchFollower = new ApiRequestMetrics(registry, summaries, FETCH_FOLLOWER);
    }

    /** The meters of {@code key} ({@code request} = Kafka's api name, e.g. {@code Produce}). */
    public ApiRequestMetrics forApi(ApiKey key) {
        ApiRequestMetrics metrics = byApiKey.get(key.id());
        if (metrics == null) {
            synchronized (this) {
                metrics = byApiKey.get(key.id());
                if (metrics == null) {
                    metrics = new ApiRequestMetrics(registry, summaries, key.messageName());
                    byApiKey.set(key.id(), metrics);
                }
            }
        }
        return metrics;
    }

    /** For a Fetch, its {@code FetchConsumer} or {@code FetchFollower} meters; null for every other request. */
    public ApiRequestMetrics fetchSplit(ApiKey key, short version, ApiMessage body) {
        if (key != ApiKey.FETCH || !(body instanceof FetchRequestData)) {
            return null;
        }
        FetchRequestData fetch = (FetchRequestData) body;
        int replicaId = version >= 15 ? fetch.replicaState().replicaId() : fetch.replicaId();
        return replicaId >= 0 ? fetchFollower : fetchConsumer;
    }
}
