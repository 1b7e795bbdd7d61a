package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterConfigsRequestData;
import io.cairn.wire.message.AlterConfigsRequestData.AlterConfigsResource;
import io.cairn.wire.message.AlterConfigsResponseData;
import io.cairn.wire.message.AlterConfigsResponseData.AlterConfigsResourceResponse;
import io.cairn.wire.message.ApiKey;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The legacy AlterConfigs v0-v2 (deprecated, still sent by some UIs): every config of a resource is replaced by
 * the given ones (keys not given are deleted). Checked here as Kafka's broker does ({@link ConfigAlterations}; no
 * BROKER_LOGGER, as in Kafka), then the rest forwarded to the active controller, which validates topic configs and
 * stores the changes (or only validates them with {@code validate_only}); the answer keeps the request's order. A
 * controller that does not answer within {@value ControllerCalls#FORWARD_TIMEOUT_MS} ms gives REQUEST_TIMED_OUT
 * for the forwarded resources. Immutable, thread-safe, never blocks.
 */
public final class AlterConfigsHandler
        implements ApiHandler<AlterConfigsRequestData, AlterConfigsResponseData> {

    private final MetadataNode metadata;
    private final ConfigAlterations alterations;

    public AlterConfigsHandler(MetadataNode metadata, int nodeId) {
        this(metadata, nodeId, null);
    }

    /**
     * @param reconfigurables what the broker applies live (thread pools, connection limits), whose checks a broker
     *     change must pass; null for none
     */
    public AlterConfigsHandler(MetadataNode metadata, int nodeId, BrokerReconfigurable reconfigurables) {
        this.metadata = metadata;
        this.alterations = new ConfigAlterations(nodeId, metadata::currentImage, reconfigurables);
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ALTER_CONFIGS;
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
    public CompletionStage<AlterConfigsResponseData> handle(RequestContext ctx,
                                                                       AlterConfigsRequestData request) {
        List<ConfigAlterations.Resource> resources = new ArrayList<>();
        for (AlterConfigsResource r : request.resources()) {
            List<ConfigAlterations.Op> ops = new ArrayList<>();
            r.configs().forEach(c -> ops.add(new ConfigAlterations.Op(c.name(), ConfigAlterations.SET, c.value())));
            resources.add(new ConfigAlterations.Resource(r.resourceType(), r.resourceName(), ops));
        }
        ConfigAlterations.Outcome[] outcomes = alterations.preprocess(resources, true, request.validateOnly());
        // Kafka's authorizeAlterResource: ALTER_CONFIGS on the cluster, topic or group of each resource.
        for (int i = 0; i < outcomes.length; i++) {
            if (outcomes[i] == null) {
                Errors denied = ConfigAuthorization.denied(ctx, AclOperation.ALTER_CONFIGS,
                        request.resources().get(i).resourceType(), request.resources().get(i).resourceName());
                if (denied != null) {
                    outcomes[i] = new ConfigAlterations.Outcome(denied, null);
                }
            }
        }
        AlterConfigsRequestData forwarded = new AlterConfigsRequestData()
                .setValidateOnly(request.validateOnly());
        for (int i = 0; i < outcomes.length; i++) {
            if (outcomes[i] == null) {
                forwarded.resources().add(request.resources().get(i));
            }
        }
        if (forwarded.resources().isEmpty()) {
            return completedFuture(merge(request, outcomes, List.of()));
        }
        return ControllerCalls.withTimeout(metadata.submit(forwarded), ControllerCalls.FORWARD_TIMEOUT_MS)
                .handle((answer, failure) -> {
                    if (failure != null) {
                        Errors error = ControllerCalls.error(failure, "AlterConfigs");
                        List<AlterConfigsResourceResponse> failed = new ArrayList<>();
                        forwarded.resources().forEach(r -> failed.add(result(r, error, error.message())));
                        return merge(request, outcomes, failed);
                    }
                    return merge(request, outcomes, ((AlterConfigsResponseData) answer).responses());
                });
    }

    /** The preprocessed verdicts and the controller's answers (in forwarded order), in the request's order. */
    private static AlterConfigsResponseData merge(AlterConfigsRequestData request,
                                                             ConfigAlterations.Outcome[] outcomes,
                                                             List<AlterConfigsResourceResponse> forwarded) {
        AlterConfigsResponseData response = new AlterConfigsResponseData().setThrottleTimeMs(0);
        int next = 0;
        for (int i = 0; i < outcomes.length; i++) {
            AlterConfigsResource r = request.resources().get(i);
            if (outcomes[i] != null) {
                response.responses().add(result(r, outcomes[i].error(), outcomes[i].message()));
            } else if (next < forwarded.size()) {
                response.responses().add(forwarded.get(next++));
            } else {
                response.responses().add(result(r, Errors.UNKNOWN_SERVER_ERROR, null));
            }
        }
        return response;
    }

    private static AlterConfigsResourceResponse result(AlterConfigsResource r, Errors error, String message) {
        return new AlterConfigsResourceResponse().setResourceType(r.resourceType())
                .setResourceName(r.resourceName()).setErrorCode(error.code())
                .setErrorMessage(error == Errors.NONE ? null : message);
    }

    @Override
    public AlterConfigsResponseData errorResponse(RequestContext ctx,
                                                             AlterConfigsRequestData request,
                                                             Errors error) {
        AlterConfigsResponseData response = new AlterConfigsResponseData().setThrottleTimeMs(0);
        request.resources().forEach(r -> response.responses().add(result(r, error, error.message())));
        return response;
    }
}
