package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeClusterRequestData;
import io.cairn.wire.message.DescribeClusterResponseData;
import io.cairn.wire.message.DescribeClusterResponseData.DescribeClusterBroker;
import java.util.Comparator;
import java.util.concurrent.CompletionStage;

/**
 * DescribeCluster v0-v2 as Kafka's broker answers it from its metadata cache
 * ({@code KafkaApis.handleDescribeCluster}, {@code AuthHelper.computeDescribeClusterResponse}): the cluster id, a
 * live broker as "controller" (as Metadata, KRaft brokers never expose the controllers), the brokers with an
 * endpoint on the listener the request came in on (the fenced ones too, flagged, when v2's
 * {@code IncludeFencedBrokers} asks), and the cluster's authorized operations when asked. A broker serves the BROKER
 * endpoint type (1): CONTROLLER (2) gets MISMATCHED_ENDPOINT_TYPE and any other value UNSUPPORTED_ENDPOINT_TYPE, with
 * Kafka's messages.
 *
 * <p>Reads one image per request (a volatile read); never blocks. Immutable, thread-safe.
 */
public final class DescribeClusterHandler
        implements ApiHandler<DescribeClusterRequestData, DescribeClusterResponseData> {

    /** Kafka's {@code EndpointType.BROKER}. */
    private static final byte BROKER_ENDPOINT = 1;
    /** Kafka's {@code EndpointType.CONTROLLER}. */
    private static final byte CONTROLLER_ENDPOINT = 2;

    private final MetadataNode metadata;

    public DescribeClusterHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_CLUSTER;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 2;
    }

    /** Answered from the in-memory metadata image. */
    @Override
    public RunsOn runsOn() {
        return RunsOn.NETWORK_THREAD;
    }

    @Override
    public CompletionStage<DescribeClusterResponseData> handle(RequestContext ctx, DescribeClusterRequestData request) {
        byte endpointType = request.endpointType();
        if (endpointType == CONTROLLER_ENDPOINT) {
            return completedFuture(errorResponse(request, Errors.MISMATCHED_ENDPOINT_TYPE, "The request was sent to "
                    + "an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"));
        }
        if (endpointType != BROKER_ENDPOINT) {
            return completedFuture(errorResponse(request, Errors.UNSUPPORTED_ENDPOINT_TYPE,
                    "Unsupported endpoint type " + endpointType));
        }
        MetadataImage image = metadata.currentImage();
        String listener = ctx.listenerName();
        DescribeClusterResponseData response = new DescribeClusterResponseData().setThrottleTimeMs(0)
                .setErrorCode(Errors.NONE.code()).setEndpointType(endpointType).setClusterId(metadata.clusterId())
                .setControllerId(ClusterView.randomAliveBroker(image, listener));
        image.brokers().values().stream().sorted(Comparator.comparingInt(BrokerRegistration::id))
                .filter(broker -> !broker.fenced() || request.includeFencedBrokers())
                .forEach(broker -> broker.endpoint(listener).ifPresent(endpoint -> response.brokers()
                        .add(broker(broker, endpoint))));
        if (request.includeClusterAuthorizedOperations()) {
            response.setClusterAuthorizedOperations(ctx.authorizedOperations(AclResourceType.CLUSTER,
                    AclResourceType.CLUSTER_NAME, ClusterView.CLUSTER_OPERATIONS));
        }
        return completedFuture(response);
    }

    private static DescribeClusterBroker broker(BrokerRegistration broker, BrokerEndpoint endpoint) {
        return new DescribeClusterBroker().setBrokerId(broker.id()).setHost(endpoint.host()).setPort(endpoint.port())
                .setRack(broker.rack().orElse(null)).setIsFenced(broker.fenced());
    }

    @Override
    public DescribeClusterResponseData errorResponse(RequestContext ctx, DescribeClusterRequestData request,
                                                     Errors error) {
        return errorResponse(request, error, error.message());
    }

    private static DescribeClusterResponseData errorResponse(DescribeClusterRequestData request, Errors error,
                                                             String message) {
        return new DescribeClusterResponseData().setThrottleTimeMs(0).setErrorCode(error.code())
                .setErrorMessage(message).setEndpointType(request.endpointType()).setClusterId("");
    }
}
