package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopic;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.CreateTopicsResponseData.CreatableTopicResult;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * CreateTopics v2-v7 (every version Kafka 4.1 has): the request goes to the active controller, which validates
 * names, partitions, replication factors, assignments and configs with Kafka's errors and messages and commits the
 * topics (or only validates, with {@code validateOnly}); {@code -1} partitions or replication factor take the
 * broker defaults. From v5 each created topic's result carries its partitions, replication factor and effective
 * configs; v7 adds the topic id. The request goes in an envelope naming its client, whose controller mutation quota
 * (KIP-599) the controller applies: its throttle time comes back in the response. A controller that does not answer
 * within {@code timeoutMs} gives REQUEST_TIMED_OUT for every topic. Immutable, thread-safe, never blocks.
 */
public final class CreateTopicsHandler implements ApiHandler<CreateTopicsRequestData, CreateTopicsResponseData> {

    private final MetadataNode metadata;

    public CreateTopicsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.CREATE_TOPICS;
    }

    @Override
    public short minVersion() {
        return ApiKey.CREATE_TOPICS.lowestSupportedVersion();
    }

    @Override
    public short maxVersion() {
        return 7;
    }

    @Override
    public CompletionStage<CreateTopicsResponseData> handle(RequestContext ctx, CreateTopicsRequestData request) {
        if (request.topics().isEmpty()) {
            return CompletableFuture.completedFuture(new CreateTopicsResponseData().setThrottleTimeMs(0));
        }
        // Kafka's ControllerApis.createTopics: CREATE on the cluster, or on each topic (else TOPIC_AUTHORIZATION_FAILED
        // and the topic is not created).
        List<String> refused = new ArrayList<>();
        if (!ctx.authorizeCluster(AclOperation.CREATE)) {
            CreateTopicsRequestData allowed = new CreateTopicsRequestData().setTimeoutMs(request.timeoutMs())
                    .setValidateOnly(request.validateOnly());
            for (CreatableTopic topic : request.topics()) {
                if (ctx.authorize(AclOperation.CREATE, AclResourceType.TOPIC, topic.name())) {
                    allowed.topics().add(topic);
                } else if (!refused.contains(topic.name())) {
                    refused.add(topic.name());
                }
            }
            if (!refused.isEmpty()) {
                return createAuthorized(ctx, allowed, refused);
            }
        }
        return createAuthorized(ctx, request, refused);
    }

    private CompletionStage<CreateTopicsResponseData> createAuthorized(RequestContext ctx,
            CreateTopicsRequestData request, List<String> refused) {
        if (request.topics().isEmpty()) {
            return CompletableFuture.completedFuture(withRefused(new CreateTopicsResponseData().setThrottleTimeMs(0),
                    refused));
        }
        Map<String, Map<String, String>> requestedConfigs = new HashMap<>();
        for (CreatableTopic topic : request.topics()) {
            Map<String, String> configs = new LinkedHashMap<>();
            topic.configs().forEach(c -> configs.put(c.name(), c.value()));
            requestedConfigs.putIfAbsent(topic.name(), configs);
        }
        CompletableFuture<CreateTopicsResponseData> created = ControllerCalls.forward(metadata, ctx, request,
                CreateTopicsResponseData.class, request.timeoutMs());
        short version = ctx.apiVersion();
        return created.handle((response, failure) -> {
            if (failure != null) {
                return errorResponse(ctx, request, ControllerCalls.error(failure, "CreateTopics"));
            }
            for (CreatableTopicResult result : response.topics()) {
                completeResult(result, requestedConfigs.getOrDefault(result.name(), Map.of()), version,
                        ctx.authorize(AclOperation.DESCRIBE_CONFIGS, AclResourceType.TOPIC, result.name()));
            }
            return withRefused(response, refused);
        });
    }

    /** The topics refused for want of CREATE, with Kafka's message, after the others. */
    private static CreateTopicsResponseData withRefused(CreateTopicsResponseData response, List<String> refused) {
        for (String name : refused) {
            response.topics().add(new CreatableTopicResult().setName(name)
                    .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()).setErrorMessage("Authorization failed.")
                    .setNumPartitions(-1).setReplicationFactor((short) -1).setTopicId(Uuid.ZERO));
        }
        return response;
    }

    /**
     * Kafka's result shape: the v5+ details for created topics, the defaults for failed ones; a caller without
     * DESCRIBE_CONFIGS on the topic gets no configs and TOPIC_AUTHORIZATION_FAILED as the topic's config error.
     */
    private static void completeResult(CreatableTopicResult result, Map<String, String> configs, short version,
                                       boolean describable) {
        if (result.errorCode() != Errors.NONE.code()) {
            result.setNumPartitions(-1).setReplicationFactor((short) -1).setTopicId(Uuid.ZERO);
            if (result.errorMessage() == null) {
                result.setErrorMessage(Errors.forCode(result.errorCode()).message());
            }
            return;
        }
        result.setErrorMessage(null);
        if (version >= 5 && describable) {
            result.setConfigs(TopicConfigDefaults.effective(configs));
        } else if (version >= 5) {
            result.setTopicConfigErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code());
        }
    }

    /** Kafka's CreateTopicsRequest.getErrorResponse: every topic with the error and its message. */
    @Override
    public CreateTopicsResponseData errorResponse(RequestContext ctx, CreateTopicsRequestData request,
                                                  Errors error) {
        CreateTopicsResponseData response = new CreateTopicsResponseData().setThrottleTimeMs(0);
        for (CreatableTopic topic : request.topics()) {
            response.topics().add(new CreatableTopicResult().setName(topic.name()).setErrorCode(error.code())
                    .setErrorMessage(error.message()));
        }
        return response;
    }
}
