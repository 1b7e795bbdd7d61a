package io.cairn.broker.handler;

import io.cairn.broker.quota.RequestQuotas;
import io.cairn.broker.security.Authorizer;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.ApiVersionsResponseData.ApiVersion;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;

/**
 * The handlers one listener serves, in an array indexed by API key, and the ApiVersions table derived from exactly
 * that array, so the advertised versions can never disagree with the code that serves them.
 *
 * <p>Built once at startup; immutable and thread-safe.
 */
public final class HandlerRegistry {

    /** Kafka's api keys are small and dense (0..~90); a plain array lookup is the whole dispatch. */
    private final ApiHandler<?, ?>[] handlers;
    private final ApiVersionsHandler apiVersionsHandler;
    private final Authorizer authorizer;
    private final RequestQuotas quotas;

    private HandlerRegistry(ApiHandler<?, ?>[] handlers, ApiVersionsHandler apiVersionsHandler,
            Authorizer authorizer, RequestQuotas quotas) {
        this.handlers = handlers;
        this.apiVersionsHandler = apiVersionsHandler;
        this.authorizer = authorizer;
        this.quotas = quotas;
    }

    /** This registry with requests authorized by {@code value} (the broker's authorizer). */
    public HandlerRegistry withAuthorizer(Authorizer value) {
        return new HandlerRegistry(handlers, apiVersionsHandler, value, quotas);
    }

    /** This registry with answered requests counted against the client quotas of {@code value}. */
    public HandlerRegistry withQuotas(RequestQuotas value) {
        return new HandlerRegistry(handlers, apiVersionsHandler, authorizer, value);
    }

    /** The client quotas answered requests count against ({@link RequestQuotas#NONE} when none are kept). */
    public RequestQuotas quotas() {
        return quotas;
    }

    /** The authorizer every request of the listener is checked with ({@link Authorizer#NONE} when none is set). */
    public Authorizer authorizer() {
        return authorizer;
    }

    /**
     * Registers {@code apiHandlers} plus the ApiVersions handler, keeping only the APIs that a broker listener
     * (or, when {@code controllerListener}, a controller listener) serves according to Kafka's schemas.
     *
     * @throws IllegalArgumentException when two handlers serve one API, a handler claims versions the generated
     *     codec does not have, or advertises a lowest version above the one it serves
     */
    public static HandlerRegistry forListener(List<? extends ApiHandler<?, ?>> apiHandlers,
            boolean controllerListener) {
        return forListener(apiHandlers, controllerListener, () -> MetadataImage.EMPTY);
    }

    /**
     * As {@link #forListener(List, boolean)}, with ApiVersions publishing the features finalized in {@code image}
     * (the node's current metadata image).
     */
    public static HandlerRegistry forListener(List<? extends ApiHandler<?, ?>> apiHandlers,
            boolean controllerListener, Supplier<MetadataImage> image) {
        List<ApiHandler<?, ?>> selected = new ArrayList<>();
        for (ApiHandler<?, ?> handler : apiHandlers) {
            ApiKey key = handler.apiKey();
            if (controllerListener ? key.controllerListener() : key.brokerListener()) {
                selected.add(handler);
            }
        }
        List<ApiVersion> table = new ArrayList<>();
        table.add(versionOf(ApiKey.API_VERSIONS, ApiVersionsHandler.MIN_VERSION, ApiVersionsHandler.MAX_VERSION));
        for (ApiHandler<?, ?> handler : selected) {
            table.add(versionOf(handler.apiKey(), handler.advertisedMinVersion(), handler.maxVersion()));
        }
        table.sort(Comparator.comparingInt(ApiVersion::apiKey));
        ApiVersionsHandler apiVersions = new ApiVersionsHandler(table, image);
        selected.add(apiVersions);
        int size = 0;
        for (ApiHandler<?, ?> handler : selected) {
            size = Math.max(size, handler.apiKey().id() + 1);
        }
        ApiHandler<?, ?>[] array = new ApiHandler<?, ?>[size];
        for (ApiHandler<?, ?> handler : selected) {
            validate(handler);
            int id = handler.apiKey().id();
            if (array[id] != null) {
                throw new IllegalArgumentException("Two handlers serve " + handler.apiKey() + ": "
                        + array[id].getClass().getSimpleName() + " and " + handler.getClass().getSimpleName());
            }
            array[id] = handler;
        }
        return new HandlerRegistry(array, apiVersions, Authorizer.NONE, RequestQuotas.NONE);
    }

    private static void validate(ApiHandler<?, ?> handler) {
        ApiKey key = handler.apiKey();
        if (handler.minVersion() < key.lowestSupportedVersion() || handler.maxVersion() > key.highestSupportedVersion()
                || handler.minVersion() > handler.maxVersion()) {
            throw new IllegalArgumentException(handler.getClass().getSimpleName() + " serves " + key + " v"
                    + handler.minVersion() + "-" + handler.maxVersion() + " but the codec has v"
                    + key.lowestSupportedVersion() + "-" + key.highestSupportedVersion());
        }
        if (handler.advertisedMinVersion() < 0 || handler.advertisedMinVersion() > handler.minVersion()) {
            throw new IllegalArgumentException(handler.getClass().getSimpleName() + " advertises " + key + " from v"
                    + handler.advertisedMinVersion() + " but serves it from v" + handler.minVersion());
        }
    }

    private static ApiVersion versionOf(ApiKey key, short min, short max) {
        return new ApiVersion().setApiKey(key.id()).setMinVersion(min).setMaxVersion(max);
    }

    /** The handler registered for {@code apiKey}, or null when this listener does not serve it. */
    public ApiHandler<?, ?> handler(int apiKey) {
        return apiKey >= 0 && apiKey < handlers.length ? handlers[apiKey] : null;
    }

    /**
     * KIP-511: the body for an ApiVersions request at a version newer than ours. The dispatcher writes it at v0
     * with a v0 response header, whatever version was asked, so any client can read it and retry.
     */
    public ApiVersionsResponseData unsupportedApiVersionsResponse() {
        return apiVersionsHandler.unsupportedVersionResponse();
    }

    /** The advertised table, sorted by api key (a copy). */
    public List<ApiVersion> apiVersions() {
        return apiVersionsHandler.apiVersions();
    }
}
