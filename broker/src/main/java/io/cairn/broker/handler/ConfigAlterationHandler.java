package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.broker.group.share.ShareGroupConfigs;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The one path of AlterConfigs and IncrementalAlterConfigs, which differ only in their generated types (what a
 * subclass adapts) and in whether the given configs replace all of a resource's: the broker's checks
 * ({@link ConfigAlterations}), Kafka's {@code authorizeAlterResource} (ALTER_CONFIGS on the cluster, topic or group
 * of each resource still undecided), the rest forwarded to the active controller (REQUEST_TIMED_OUT for them when it
 * does not answer within {@value ControllerCalls#FORWARD_TIMEOUT_MS} ms), and the answers merged back in the
 * request's order. Immutable, thread-safe, never blocks.
 *
 * @param <Q> the request
 * @param <S> the response
 */
abstract class ConfigAlterationHandler<Q extends ApiMessage, S extends ApiMessage> implements ApiHandler<Q, S> {

    /** The answer for one resource, as the response carries it. */
    record Result(byte resourceType, String resourceName, short errorCode, String errorMessage) {
    }

    private final MetadataNode metadata;
    private final ConfigAlterations alterations;
    private final boolean legacy;

    /**
     * @param reconfigurables what the broker applies live (thread pools, connection limits), whose checks a broker
     *     change must pass; null for none
     * @param groupConfigs    the group-level configs' defaults and checks; null for Kafka's defaults
     * @param legacy          AlterConfigs: every config of a resource is replaced by the given ones
     */
    ConfigAlterationHandler(MetadataNode metadata, int nodeId, BrokerReconfigurable reconfigurables,
                            ShareGroupConfigs groupConfigs, boolean legacy) {
        this.metadata = metadata;
        this.alterations = new ConfigAlterations(nodeId, metadata::currentImage, reconfigurables,
                groupConfigs == null ? ShareGroupConfigs.defaults() : groupConfigs);
        this.legacy = legacy;
    }

    abstract boolean validateOnly(Q request);

    /** The request's resources, with their changes (SET for the legacy API). */
    abstract List<ConfigAlterations.Resource> resources(Q request);

    /** A request like {@code request} with only the resources at {@code indexes}. */
    abstract Q forward(Q request, List<Integer> indexes);

    /** The controller's answer (a response of this API), resource by resource. */
    abstract List<Result> results(ApiMessage answer);

    /** A response of {@code results}, throttle time 0. */
    abstract S response(List<Result> results);

    @Override
    public final short minVersion() {
        return 0;
    }

    @Override
    public final CompletionStage<S> handle(RequestContext ctx, Q request) {
        List<ConfigAlterations.Resource> resources = resources(request);
        ConfigAlterations.Outcome[] outcomes = alterations.preprocess(resources, legacy, validateOnly(request));
        List<Integer> kept = new ArrayList<>();
        for (int i = 0; i < outcomes.length; i++) {
            if (outcomes[i] == null) {
                ConfigAlterations.Resource r = resources.get(i);
                Errors denied = ConfigAuthorization.denied(ctx, AclOperation.ALTER_CONFIGS, r.type(), r.name());
                if (denied != null) {
                    outcomes[i] = new ConfigAlterations.Outcome(denied, null);
                } else {
                    kept.add(i);
                }
            }
        }
        if (kept.isEmpty()) {
            return completedFuture(merge(resources, outcomes, List.of()));
        }
        return ControllerCalls.withTimeout(metadata.submit(forward(request, kept)),
                ControllerCalls.FORWARD_TIMEOUT_MS).handle((answer, failure) -> {
                    if (failure != null) {
                        Errors error = ControllerCalls.error(failure, apiKey().messageName());
                        List<Result> failed = new ArrayList<>();
                        kept.forEach(i -> failed.add(result(resources.get(i), error, error.message())));
                        return merge(resources, outcomes, failed);
                    }
                    return merge(resources, outcomes, results(answer));
                });
    }

    /** Every resource of {@code request} failed with {@code error}. */
    @Override
    public final S errorResponse(RequestContext ctx, Q request, Errors error) {
        List<Result> results = new ArrayList<>();
        resources(request).forEach(r -> results.add(result(r, error, error.message())));
        return response(results);
    }

    /** The preprocessed verdicts and the controller's answers (in forwarded order), in the request's order. */
    private S merge(List<ConfigAlterations.Resource> resources, ConfigAlterations.Outcome[] outcomes,
                    List<Result> forwarded) {
        List<Result> results = new ArrayList<>();
        int next = 0;
        for (int i = 0; i < outcomes.length; i++) {
            ConfigAlterations.Resource r = resources.get(i);
            if (outcomes[i] != null) {
                results.add(result(r, outcomes[i].error(), outcomes[i].message()));
            } else if (next < forwarded.size()) {
                results.add(forwarded.get(next++));
            } else {
                results.add(result(r, Errors.UNKNOWN_SERVER_ERROR, null));
            }
        }
        return response(results);
    }

    private static Result result(ConfigAlterations.Resource r, Errors error, String message) {
        return new Result(r.type(), r.name(), error.code(), error == Errors.NONE ? null : message);
    }
}
