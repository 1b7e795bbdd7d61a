package io.cairn.broker.handler;

import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.broker.group.share.ShareGroupConfigs;
import io.cairn.metadata.MetadataNode;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsResponseData;
import io.cairn.wire.message.IncrementalAlterConfigsResponseData.AlterConfigsResourceResponse;
import io.cairn.wire.protocol.ApiMessage;
import java.util.List;

/**
 * IncrementalAlterConfigs v0-v1 ({@code kafka-configs --alter}, {@code Admin.incrementalAlterConfigs}, and what
 * {@code kafka-reassign-partitions} sets and clears throttles with): checked here as Kafka's broker does
 * ({@link ConfigAlterations}), then the rest forwarded to the active controller, which validates topic configs and
 * stores the changes (or only validates them with {@code validate_only}); the answer keeps the request's order.
 * The path is the one it shares with AlterConfigs ({@link ConfigAlterationHandler}); this class adapts its generated
 * types. Immutable, thread-safe, never blocks.
 */
public final class IncrementalAlterConfigsHandler
        extends ConfigAlterationHandler<IncrementalAlterConfigsRequestData, IncrementalAlterConfigsResponseData> {

    public IncrementalAlterConfigsHandler(MetadataNode metadata, int nodeId) {
        this(metadata, nodeId, null);
    }

    /**
     * @param reconfigurables what the broker applies live (thread pools, connection limits), whose checks a broker
     *     change must pass; null for none
     */
    public IncrementalAlterConfigsHandler(MetadataNode metadata, int nodeId, BrokerReconfigurable reconfigurables) {
        this(metadata, nodeId, reconfigurables, null);
    }

    /**
     * @param reconfigurables what the broker applies live, whose checks a broker change must pass; null for none
     * @param groupConfigs    the group-level configs' defaults and checks; null for Kafka's defaults
     */
    public IncrementalAlterConfigsHandler(MetadataNode metadata, int nodeId, BrokerReconfigurable reconfigurables,
            ShareGroupConfigs groupConfigs) {
        super(metadata, nodeId, reconfigurables, groupConfigs, false);
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.INCREMENTAL_ALTER_CONFIGS;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    @Override
    boolean validateOnly(IncrementalAlterConfigsRequestData request) {
        return request.validateOnly();
    }

    @Override
    List<ConfigAlterations.Resource> resources(IncrementalAlterConfigsRequestData request) {
        return request.resources().stream().map(r -> new ConfigAlterations.Resource(r.resourceType(),
                r.resourceName(), r.configs().stream().map(c -> new ConfigAlterations.Op(c.name(),
                        c.configOperation(), c.value())).toList())).toList();
    }

    @Override
    IncrementalAlterConfigsRequestData forward(IncrementalAlterConfigsRequestData request, List<Integer> indexes) {
        IncrementalAlterConfigsRequestData forwarded = new IncrementalAlterConfigsRequestData()
                .setValidateOnly(request.validateOnly());
        indexes.forEach(i -> forwarded.resources().add(request.resources().get(i)));
        return forwarded;
    }

    @Override
    List<Result> results(ApiMessage answer) {
        return ((IncrementalAlterConfigsResponseData) answer).responses().stream()
                .map(r -> new Result(r.resourceType(), r.resourceName(), r.errorCode(), r.errorMessage())).toList();
    }

    @Override
    IncrementalAlterConfigsResponseData response(List<Result> results) {
        IncrementalAlterConfigsResponseData response = new IncrementalAlterConfigsResponseData().setThrottleTimeMs(0);
        results.forEach(r -> response.responses().add(new AlterConfigsResourceResponse()
                .setResourceType(r.resourceType()).setResourceName(r.resourceName())
                .setErrorCode(r.errorCode()).setErrorMessage(r.errorMessage())));
        return response;
    }
}
