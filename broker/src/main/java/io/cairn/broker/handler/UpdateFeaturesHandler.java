package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.UpdateFeaturesRequestData;
import io.cairn.wire.message.UpdateFeaturesRequestData.FeatureUpdateKey;
import io.cairn.wire.message.UpdateFeaturesResponseData;
import io.cairn.wire.message.UpdateFeaturesResponseData.UpdatableFeatureResult;
import java.util.concurrent.CompletionStage;

/**
 * UpdateFeatures v0-v2 (Kafka 4.1's range; {@code kafka-features upgrade/downgrade/disable}), forwarded to the active
 * controller as Kafka's broker forwards it: a v0 request's {@code AllowDowngrade} becomes the safe-downgrade type of
 * v1+. The controller's answer is a top-level error (INVALID_UPDATE_VERSION with Kafka's messages) repeated for every
 * feature; a v2 response has no per-feature results (the codec drops them, as the field ends at v1). A controller
 * that does not answer within {@code timeoutMs} gives REQUEST_TIMED_OUT. Immutable, thread-safe, never blocks.
 */
public final class UpdateFeaturesHandler implements ApiHandler<UpdateFeaturesRequestData, UpdateFeaturesResponseData> {

    private static final byte UPGRADE = 1;
    private static final byte SAFE_DOWNGRADE = 2;

    private final MetadataNode metadata;

    public UpdateFeaturesHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.UPDATE_FEATURES;
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
    public CompletionStage<UpdateFeaturesResponseData> handle(RequestContext ctx, UpdateFeaturesRequestData request) {
        UpdateFeaturesRequestData forward = new UpdateFeaturesRequestData().setTimeoutMs(request.timeoutMs())
                .setValidateOnly(request.validateOnly());
        for (FeatureUpdateKey update : request.featureUpdates()) {
            byte type = ctx.apiVersion() == 0 ? (update.allowDowngrade() ? SAFE_DOWNGRADE : UPGRADE)
                    : update.upgradeType();
            forward.featureUpdates().add(new FeatureUpdateKey().setFeature(update.feature())
                    .setMaxVersionLevel(update.maxVersionLevel()).setUpgradeType(type));
        }
        return ControllerCalls.withTimeout(metadata.submit(forward), request.timeoutMs())
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "UpdateFeatures"))
                        : ((UpdateFeaturesResponseData) answer).setThrottleTimeMs(0));
    }

    /** Kafka's UpdateFeaturesResponse.createWithErrors: the top-level error, and for v0-v1 each feature with it. */
    @Override
    public UpdateFeaturesResponseData errorResponse(RequestContext ctx, UpdateFeaturesRequestData request,
                                                   Errors error) {
        UpdateFeaturesResponseData response = new UpdateFeaturesResponseData().setThrottleTimeMs(0)
                .setErrorCode(error.code()).setErrorMessage(error.message());
        for (FeatureUpdateKey update : request.featureUpdates()) {
            response.results().add(new UpdatableFeatureResult().setFeature(update.feature())
                    .setErrorCode(error.code()).setErrorMessage(error.message()));
        }
        return response;
    }
}
