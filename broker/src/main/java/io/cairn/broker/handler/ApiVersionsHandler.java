package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.ApiVersionsResponseData.ApiVersion;
import io.cairn.wire.message.ApiVersionsResponseData.FinalizedFeatureKey;
import io.cairn.wire.message.ApiVersionsResponseData.SupportedFeatureKey;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * ApiVersions v0-v4 as Kafka answers it: the table of the listener's {@link HandlerRegistry}, throttle time 0, and
 * from v3 the client software name and version validated (invalid: INVALID_REQUEST with an empty table, Kafka's
 * {@code ApiVersionsRequest.isValid}) and recorded on the connection, and the features (KIP-584): the ranges this
 * node supports ({@link Features#advertised()}; to a v3 request without those whose lowest level is 0, as Kafka's
 * fix of KAFKA-17011 does for older clients), the levels finalized in the current metadata image (each as min and
 * max level) and, as their epoch, the image's offset, or -1 before any feature is finalized.
 *
 * <p>Immutable and thread-safe: each response reads the image once (a volatile read, no lock).
 */
final class ApiVersionsHandler implements ApiHandler<ApiVersionsRequestData, ApiVersionsResponseData> {

    static final short MIN_VERSION = 0;
    static final short MAX_VERSION = 4;

    /** KIP-511's rule for client_software_name and client_software_version. */
    private static final Pattern SOFTWARE_NAME_OR_VERSION =
            Pattern.compile("[a-zA-Z0-9](?:[a-zA-Z0-9\\-.]*[a-zA-Z0-9])?");

    private final List<ApiVersion> table;
    private final Supplier<MetadataImage> image;

    ApiVersionsHandler(List<ApiVersion> table, Supplier<MetadataImage> image) {
        this.table = List.copyOf(table);
        this.image = image;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.API_VERSIONS;
    }

    @Override
    public short minVersion() {
        return MIN_VERSION;
    }

    @Override
    public short maxVersion() {
        return MAX_VERSION;
    }

    /** Answered from the in-memory ApiVersions table; the network thread never waits for it. */
    @Override
    public RunsOn runsOn() {
        return RunsOn.NETWORK_THREAD;
    }

    @Override
    public CompletionStage<ApiVersionsResponseData> handle(RequestContext ctx, ApiVersionsRequestData request) {
        if (ctx.apiVersion() >= 3 && !validSoftware(request)) {
            return completedFuture(errorResponse(ctx, request, Errors.INVALID_REQUEST));
        }
        if (ctx.apiVersion() >= 3) {
            ctx.connection().registerClientSoftware(new ClientConnection.ClientSoftware(
                    request.clientSoftwareName(), request.clientSoftwareVersion()));
        }
        ApiVersionsResponseData response = new ApiVersionsResponseData()
                .setErrorCode(Errors.NONE.code())
                .setApiKeys(apiVersions())
                .setThrottleTimeMs(0)
                .setFinalizedFeaturesEpoch(-1L)
                .setZkMigrationReady(false);
        if (ctx.apiVersion() >= 3) {
            addFeatures(response, image.get(), ctx.apiVersion() >= 4);
        }
        return completedFuture(response);
    }

    private static void addFeatures(ApiVersionsResponseData response, MetadataImage image, boolean levelZero) {
        Features.advertised().forEach((name, range) -> {
            if (levelZero || range.min() > 0) {
                response.supportedFeatures().add(new SupportedFeatureKey().setName(name)
                        .setMinVersion(range.min()).setMaxVersion(range.max()));
            }
        });
        if (image.features().isEmpty()) {
            return;
        }
        new TreeMap<>(image.features()).forEach((name, level) -> response.finalizedFeatures()
                .add(new FinalizedFeatureKey().setName(name).setMinVersionLevel(level).setMaxVersionLevel(level)));
        response.setFinalizedFeaturesEpoch(image.offset());
    }

    private static boolean validSoftware(ApiVersionsRequestData request) {
        return request.clientSoftwareName() != null && request.clientSoftwareVersion() != null
                && SOFTWARE_NAME_OR_VERSION.matcher(request.clientSoftwareName()).matches()
                && SOFTWARE_NAME_OR_VERSION.matcher(request.clientSoftwareVersion()).matches();
    }

    /**
     * Kafka's error response: the code and throttle time 0; only for UNSUPPORTED_VERSION does the table hold one
     * entry, ApiVersions' own range, so the client can pick a version it shares with us (KIP-511).
     */
    @Override
    public ApiVersionsResponseData errorResponse(RequestContext ctx, ApiVersionsRequestData request, Errors error) {
        ApiVersionsResponseData response = new ApiVersionsResponseData()
                .setErrorCode(error.code())
                .setThrottleTimeMs(0);
        if (error == Errors.UNSUPPORTED_VERSION) {
            response.setApiKeys(ownRange());
        }
        return response;
    }

    ApiVersionsResponseData unsupportedVersionResponse() {
        return new ApiVersionsResponseData()
                .setErrorCode(Errors.UNSUPPORTED_VERSION.code())
                .setApiKeys(ownRange());
    }

    private static List<ApiVersion> ownRange() {
        List<ApiVersion> keys = new ArrayList<>(1);
        keys.add(new ApiVersion().setApiKey(ApiKey.API_VERSIONS.id()).setMinVersion(MIN_VERSION)
                .setMaxVersion(MAX_VERSION));
        return keys;
    }

    /** A fresh copy of the table: generated messages are mutable, so each response gets its own objects. */
    List<ApiVersion> apiVersions() {
        List<ApiVersion> copy = new ArrayList<>(table.size());
        for (ApiVersion version : table) {
            copy.add(new ApiVersion().setApiKey(version.apiKey()).setMinVersion(version.minVersion())
                    .setMaxVersion(version.maxVersion()));
        }
        return copy;
    }
}
