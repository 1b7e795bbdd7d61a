package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsRequestData.CreatePartitionsTopic;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreatePartitionsResponseData.CreatePartitionsTopicResult;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * CreatePartitions v0-v3 (every version Kafka 4.1 has; {@code kafka-topics --alter --partitions}): a topic named
 * twice gets INVALID_REQUEST ("Duplicate topic name.", answered once, as Kafka's ControllerApis does); the rest go
 * to the active controller, which answers UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (no increase),
 * INVALID_REPLICA_ASSIGNMENT or INVALID_REPLICATION_FACTOR with Kafka's messages, and honours {@code validateOnly}.
 * A controller that does not answer within {@code timeoutMs} gives REQUEST_TIMED_OUT. Immutable, thread-safe,
 * never blocks.
 */
public final class CreatePartitionsHandler
        implements ApiHandler<CreatePartitionsRequestData, CreatePartitionsResponseData> {

    private final MetadataNode metadata;

    public CreatePartitionsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.CREATE_PARTITIONS;
    }

    @Override
    public short minVersion() {
        return ApiKey.CREATE_PARTITIONS.lowestSupportedVersion();
    }

    @Override
    public short maxVersion() {
        return 3;
    }

    @Override
    public CompletionStage<CreatePartitionsResponseData> handle(RequestContext ctx,
                                                                CreatePartitionsRequestData request) {
        Set<String> seen = new HashSet<>();
        Set<String> duplicates = new HashSet<>();
        for (CreatePartitionsTopic topic : request.topics()) {
            if (!seen.add(topic.name())) {
                duplicates.add(topic.name());
            }
        }
        CreatePartitionsRequestData forward = new CreatePartitionsRequestData().setTimeoutMs(request.timeoutMs())
                .setValidateOnly(request.validateOnly());
        List<CreatePartitionsTopicResult> results = new ArrayList<>();
        List<Integer> forwarded = new ArrayList<>();
        Set<String> answeredDuplicates = new HashSet<>();
        for (CreatePartitionsTopic topic : request.topics()) {
            if (duplicates.contains(topic.name())) {
                if (answeredDuplicates.add(topic.name())) {
                    results.add(new CreatePartitionsTopicResult().setName(topic.name())
                            .setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("Duplicate topic name."));
                }
                continue;
            }
            if (!ctx.authorize(AclOperation.ALTER, AclResourceType.TOPIC, topic.name())) {
                // Kafka's getAlterAuthorizedTopics: ALTER on the topic.
                results.add(new CreatePartitionsTopicResult().setName(topic.name())
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()).setErrorMessage(null));
                continue;
            }
            forwarded.add(results.size());
            results.add(new CreatePartitionsTopicResult().setName(topic.name()));
            forward.topics().add(topic);
        }
        CreatePartitionsResponseData response = new CreatePartitionsResponseData().setThrottleTimeMs(0)
                .setResults(results);
        if (forwarded.isEmpty()) {
            return CompletableFuture.completedFuture(response);
        }
        return ControllerCalls.forward(metadata, ctx, forward, CreatePartitionsResponseData.class,
                        request.timeoutMs()).handle((answer, failure) -> {
                    if (failure != null) {
                        return errorResponse(ctx, request, ControllerCalls.error(failure, "CreatePartitions"));
                    }
                    for (int i = 0; i < forwarded.size(); i++) {
                        CreatePartitionsTopicResult from = answer.results().get(i);
                        results.get(forwarded.get(i)).setErrorCode(from.errorCode())
                                .setErrorMessage(from.errorCode() == Errors.NONE.code() ? null : from.errorMessage());
                    }
                    return response.setThrottleTimeMs(answer.throttleTimeMs());
                });
    }

    /** Kafka's CreatePartitionsRequest.getErrorResponse: every topic with the error and its message. */
    @Override
    public CreatePartitionsResponseData errorResponse(RequestContext ctx, CreatePartitionsRequestData request,
                                                      Errors error) {
        CreatePartitionsResponseData response = new CreatePartitionsResponseData().setThrottleTimeMs(0);
        for (CreatePartitionsTopic topic : request.topics()) {
            response.results().add(new CreatePartitionsTopicResult().setName(topic.name())
                    .setErrorCode(error.code()).setErrorMessage(error.message()));
        }
        return response;
    }
}
