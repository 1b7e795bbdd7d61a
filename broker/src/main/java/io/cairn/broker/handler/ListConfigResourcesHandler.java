package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ListConfigResourcesRequestData;
import io.cairn.wire.message.ListConfigResourcesResponseData;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * ListConfigResources v0-1 (KIP-1142; v0 was KIP-714's ListClientMetricsResources), as Kafka 4.1's
 * {@code handleListConfigResources}: the resources of the asked types (none asked: every type the version supports,
 * v0 only CLIENT_METRICS, v1 also TOPIC, BROKER, BROKER_LOGGER and GROUP), in Kafka's order: groups with a dynamic
 * config, client-metrics resources, then each live broker (on the request's listener) as a broker logger and as a
 * broker, then every topic. A type the version does not support is UNSUPPORTED_VERSION with no resources. The GROUP
 * list is the groups with share configs in the metadata; Cairn stores no CLIENT_METRICS configs, so that list is
 * empty.
 *
 * <p>Stateless and thread-safe; answers from one metadata image.
 */
public final class ListConfigResourcesHandler
        implements ApiHandler<ListConfigResourcesRequestData, ListConfigResourcesResponseData> {

    /** Kafka's {@code ConfigResource.Type} ids. */
    static final byte TOPIC = 2;
    static final byte BROKER = 4;
    static final byte BROKER_LOGGER = 8;
    static final byte CLIENT_METRICS = 16;
    static final byte GROUP = 32;

    private final MetadataNode metadata;

    public ListConfigResourcesHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.LIST_CONFIG_RESOURCES;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    /** Kafka's {@code ListConfigResourcesRequest.supportedResourceTypes}. */
    static Set<Byte> supportedTypes(short version) {
        return version == 0 ? Set.of(CLIENT_METRICS) : Set.of(TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP);
    }

    @Override
    public CompletionStage<ListConfigResourcesResponseData> handle(RequestContext ctx,
                                                                  ListConfigResourcesRequestData request) {
        Set<Byte> supported = supportedTypes(ctx.apiVersion());
        Set<Byte> wanted = request.resourceTypes().isEmpty() ? supported : new HashSet<>(request.resourceTypes());
        if (!supported.containsAll(wanted)) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.UNSUPPORTED_VERSION));
        }
        MetadataImage image = metadata.currentImage();
        List<ListConfigResourcesResponseData.ConfigResource> resources = new ArrayList<>();
        for (byte type : new byte[] {GROUP, CLIENT_METRICS}) {
            if (wanted.contains(type)) {
                configured(image, type).forEach(name -> add(resources, name, type));
            }
        }
        List<BrokerRegistration> brokers = ClusterView.aliveBrokers(image, ctx.listenerName());
        for (byte type : new byte[] {BROKER_LOGGER, BROKER}) {
            if (wanted.contains(type)) {
                brokers.forEach(b -> add(resources, Integer.toString(b.id()), type));
            }
        }
        if (wanted.contains(TOPIC)) {
            new TreeSet<>(image.topicIds().keySet()).forEach(name -> add(resources, name, TOPIC));
        }
        return CompletableFuture.completedFuture(new ListConfigResourcesResponseData().setThrottleTimeMs(0)
                .setErrorCode(Errors.NONE.code()).setConfigResources(resources));
    }

    /** The names of the resources of {@code type} that have at least one dynamic config. */
    private static Set<String> configured(MetadataImage image, byte type) {
        Set<String> names = new TreeSet<>();
        for (Map.Entry<ConfigResource, Map<String, String>> e : image.configs().entrySet()) {
            if (e.getKey().type() == type && !e.getValue().isEmpty()) {
                names.add(e.getKey().name());
            }
        }
        return names;
    }

    private static void add(List<ListConfigResourcesResponseData.ConfigResource> resources, String name, byte type) {
        resources.add(new ListConfigResourcesResponseData.ConfigResource().setResourceName(name)
                .setResourceType(type));
    }

    @Override
    public void countErrors(ListConfigResourcesResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }

    /** Kafka's {@code ListConfigResourcesRequest.getErrorResponse}: the code and no resources. */
    @Override
    public ListConfigResourcesResponseData errorResponse(RequestContext ctx, ListConfigResourcesRequestData request,
                                                         Errors error) {
        return new ListConfigResourcesResponseData().setErrorCode(error.code());
    }
}
