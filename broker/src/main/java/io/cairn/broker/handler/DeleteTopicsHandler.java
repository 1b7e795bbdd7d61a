package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.DeleteTopicsRequestData.DeleteTopicState;
import io.cairn.wire.message.DeleteTopicsResponseData;
import io.cairn.wire.message.DeleteTopicsResponseData.DeletableTopicResult;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DeleteTopics v1-v6 (every version Kafka 4.1 has): by name (all versions) or by topic id (v6). Entries naming a
 * topic twice, naming both a name and an id, or neither, get INVALID_REQUEST (Kafka's ControllerApis checks); the
 * rest go to the active controller, which answers UNKNOWN_TOPIC_OR_PARTITION / UNKNOWN_TOPIC_ID for unknown topics and
 * TOPIC_DELETION_DISABLED when {@code delete.topic.enable=false}. A controller that does not answer within
 * {@code timeoutMs} gives REQUEST_TIMED_OUT. Immutable, thread-safe, never blocks.
 */
public final class DeleteTopicsHandler implements ApiHandler<DeleteTopicsRequestData, DeleteTopicsResponseData> {

    private final MetadataNode metadata;

    public DeleteTopicsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DELETE_TOPICS;
    }

    @Override
    public short minVersion() {
        return ApiKey.DELETE_TOPICS.lowestSupportedVersion();
    }

    @Override
    public short maxVersion() {
        return 6;
    }

    /**
     * Kafka's ControllerApis.deleteTopics: DESCRIBE and DELETE on the topic (named, or found by id in the image; an
     * unknown id is left to the controller, which answers UNKNOWN_TOPIC_ID).
     */
    private boolean deletable(RequestContext ctx, DeleteTopicState target) {
        String name = target.name() != null ? target.name()
                : metadata.currentImage().topic(target.topicId()).map(t -> t.name()).orElse(null);
        return name == null || ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, name)
                && ctx.authorize(AclOperation.DELETE, AclResourceType.TOPIC, name);
    }

    @Override
    public CompletionStage<DeleteTopicsResponseData> handle(RequestContext ctx, DeleteTopicsRequestData request) {
        List<DeleteTopicState> targets = targets(ctx, request);
        List<DeletableTopicResult> results = new ArrayList<>(targets.size());
        DeleteTopicsRequestData forward = new DeleteTopicsRequestData().setTimeoutMs(request.timeoutMs());
        List<Integer> forwarded = new ArrayList<>();
        Set<String> names = new HashSet<>();
        Set<Uuid> ids = new HashSet<>();
        Set<String> duplicateNames = new HashSet<>();
        Set<Uuid> duplicateIds = new HashSet<>();
        for (DeleteTopicState target : targets) {
            if (target.name() != null && !names.add(target.name())) {
                duplicateNames.add(target.name());
            }
            if (!Uuid.ZERO.equals(target.topicId()) && !ids.add(target.topicId())) {
                duplicateIds.add(target.topicId());
            }
        }
        Set<Object> answeredDuplicates = new HashSet<>();
        for (DeleteTopicState target : targets) {
            String problem = problem(target, duplicateNames, duplicateIds);
            if (problem != null && problem.startsWith("Duplicate")
                    && !answeredDuplicates.add(target.name() != null ? target.name() : target.topicId())) {
                continue;
            }
            DeletableTopicResult result = new DeletableTopicResult().setName(target.name())
                    .setTopicId(target.topicId());
            results.add(result);
            if (problem != null) {
                result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(problem);
            } else if (!deletable(ctx, target)) {
                result.setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()).setErrorMessage(null);
                if (target.name() == null) {
                    result.setName(null);
                }
            } else {
                forwarded.add(results.size() - 1);
                if (ctx.apiVersion() >= 6) {
                    forward.topics().add(new DeleteTopicState().setName(target.name()).setTopicId(target.topicId()));
                } else {
                    forward.topicNames().add(target.name());
                }
            }
        }
        DeleteTopicsResponseData response = new DeleteTopicsResponseData().setThrottleTimeMs(0).setResponses(results);
        if (forwarded.isEmpty()) {
            return CompletableFuture.completedFuture(response);
        }
        return ControllerCalls.forward(metadata, ctx, forward, DeleteTopicsResponseData.class, request.timeoutMs())
                .handle((answer, failure) -> {
                    if (failure != null) {
                        return errorResponse(ctx, request, ControllerCalls.error(failure, "DeleteTopics"));
                    }
                    for (int i = 0; i < forwarded.size(); i++) {
                        DeletableTopicResult from = answer.responses().get(i);
                        results.get(forwarded.get(i)).setName(from.name()).setTopicId(from.topicId())
                                .setErrorCode(from.errorCode()).setErrorMessage(from.errorMessage());
                    }
                    return response.setThrottleTimeMs(answer.throttleTimeMs());
                });
    }

    /** The entries of the request: v6 {@code topics}, older versions {@code topicNames}. */
    private static List<DeleteTopicState> targets(RequestContext ctx, DeleteTopicsRequestData request) {
        List<DeleteTopicState> targets = new ArrayList<>();
        if (ctx.apiVersion() >= 6) {
            targets.addAll(request.topics());
        } else {
            request.topicNames().forEach(name -> targets.add(new DeleteTopicState().setName(name)));
        }
        return targets;
    }

    /**
     * Kafka's per-entry request checks, or null when the entry is well formed. A duplicated name or id is answered
     * once, with INVALID_REQUEST, and not deleted.
     */
    private static String problem(DeleteTopicState target, Set<String> duplicateNames, Set<Uuid> duplicateIds) {
        boolean hasName = target.name() != null;
        boolean hasId = !Uuid.ZERO.equals(target.topicId());
        if (hasName && hasId) {
            return "You may not specify both topic name and topic id.";
        }
        if (!hasName && !hasId) {
            return "Neither topic name nor id were specified.";
        }
        if (hasName && duplicateNames.contains(target.name())) {
            return "Duplicate topic name.";
        }
        if (hasId && duplicateIds.contains(target.topicId())) {
            return "Duplicate topic id.";
        }
        return null;
    }

    /** Kafka's DeleteTopicsRequest.getErrorResponse: every entry with the error. */
    @Override
    public DeleteTopicsResponseData errorResponse(RequestContext ctx, DeleteTopicsRequestData request,
                                                  Errors error) {
        DeleteTopicsResponseData response = new DeleteTopicsResponseData().setThrottleTimeMs(0);
        for (DeleteTopicState target : targets(ctx, request)) {
            response.responses().add(new DeletableTopicResult().setName(target.name()).setTopicId(target.topicId())
                    .setErrorCode(error.code()).setErrorMessage(error.message()));
        }
        return response;
    }
}
