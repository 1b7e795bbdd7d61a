package io.cairn.broker.handler;

import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.broker.group.share.ShareGroupConfigs;
import io.cairn.metadata.MetadataNode;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.AlterConfigsRequestData;
import io.cairn.wire.message.AlterConfigsResponseData;
import io.cairn.wire.message.AlterConfigsResponseData.AlterConfigsResourceResponse;
import io.cairn.wire.protocol.ApiMessage;
import java.util.List;

/**
 * The legacy AlterConfigs v0-v2 (deprecated, still sent by some UIs): every config of a resource is replaced by
 * the given ones (keys not given are deleted). Checked here as Kafka's broker does ({@link ConfigAlterations}; no
 * BROKER_LOGGER, as in Kafka), then the rest forwarded to the active controller, which validates topic configs and
 * stores the changes (or only validates them with {@code validate_only}); the answer keeps the request's order.
 * The path is the one it shares with IncrementalAlterConfigs ({@link ConfigAlterationHandler}); this class adapts
 * its generated types. Immutable, thread-safe, never blocks.
 */
public final class AlterConfigsHandler
        extends ConfigAlterationHandler<AlterConfigsRequestData, AlterConfigsResponseData> {

    public AlterConfigsHandler(MetadataNode metadata, int nodeId) {
        this(metadata, nodeId, null);
    }

    /**
     * @param reconfigurables what the broker applies live (thread pools, connection limits), whose checks a broker
     *     change must pass; null for none
     */
    public AlterConfigsHandler(MetadataNode metadata, int nodeId, BrokerReconfigurable reconfigurables) {
        this(metadata, nodeId, reconfigurables, null);
    }

    /**
     * @param reconfigurables what the broker applies live, whose checks a broker change must pass; null for none
     * @param groupConfigs    the group-level configs' defaults and checks; null for Kafka's defaults
     */
    public AlterConfigsHandler(MetadataNode metadata, int nodeId, BrokerReconfigurable reconfigurables,
            ShareGroupConfigs groupConfigs) {
        super(metadata, nodeId, reconfigurables, groupConfigs, true);
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ALTER_CONFIGS;
    }

    @Override
    public short maxVersion() {
        return 2;
    }

    @Override
    boolean validateOnly(AlterConfigsRequestData request) {
        return request.validateOnly();
    }

    @Override
    List<ConfigAlterations.Resource> resources(AlterConfigsRequestData request) {
        return request.resources().stream().map(r -> new ConfigAlterations.Resource(r.resourceType(),
                r.resourceName(), r.configs().stream().map(c -> new ConfigAlterations.Op(c.name(),
                        ConfigAlterations.SET, c.value())).toList())).toList();
    }

    @Override
    AlterConfigsRequestData forward(AlterConfigsRequestData request, List<Integer> indexes) {
        AlterConfigsRequestData forwarded = new AlterConfigsRequestData()
                .setValidateOnly(request.validateOnly());
        indexes.forEach(i -> forwarded.resources().add(request.resources().get(i)));
        return forwarded;
    }

    @Override
    List<Result> results(ApiMessage answer) {
        return ((AlterConfigsResponseData) answer).responses().stream()
                .map(r -> new Result(r.resourceType(), r.resourceName(), r.errorCode(), r.errorMessage())).toList();
    }

    @Override
    AlterConfigsResponseData response(List<Result> results) {
        AlterConfigsResponseData response = new AlterConfigsResponseData().setThrottleTimeMs(0);
        results.forEach(r -> response.responses().add(new AlterConfigsResourceResponse()
                .setResourceType(r.resourceType()).setResourceName(r.resourceName())
                .setErrorCode(r.errorCode()).setErrorMessage(r.errorMessage())));
        return response;
    }
}
