package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.ScramCommands;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeUserScramCredentialsRequestData;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import java.util.concurrent.CompletionStage;

/**
 * DescribeUserScramCredentials v0 ({@code kafka-configs --entity-type users --describe},
 * {@code Admin.describeUserScramCredentials}): answered by this broker from its metadata image, as a KRaft broker
 * answers it from its metadata cache ({@link ScramCommands#describe}): each user's mechanisms and iterations, never a
 * salt or a key; RESOURCE_NOT_FOUND for a user without credentials and DUPLICATE_RESOURCE for a user named twice.
 * Cairn has no authorizer yet, so Kafka's DESCRIBE on CLUSTER check is not made. Stateless, thread-safe, answers
 * from memory on the network thread.
 */
public final class DescribeUserScramCredentialsHandler
        implements ApiHandler<DescribeUserScramCredentialsRequestData, DescribeUserScramCredentialsResponseData> {

    private final MetadataNode metadata;

    public DescribeUserScramCredentialsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 0;
    }

    @Override
    public RunsOn runsOn() {
        return RunsOn.NETWORK_THREAD;
    }

    @Override
    public CompletionStage<DescribeUserScramCredentialsResponseData> handle(RequestContext ctx,
            DescribeUserScramCredentialsRequestData request) {
        return completedFuture(ScramCommands.describe(metadata.currentImage(), request).setThrottleTimeMs(0));
    }

    /** Kafka's DescribeUserScramCredentialsRequest.getErrorResponse: the error at the top and once per user. */
    @Override
    public DescribeUserScramCredentialsResponseData errorResponse(RequestContext ctx,
            DescribeUserScramCredentialsRequestData request, Errors error) {
        DescribeUserScramCredentialsResponseData response = new DescribeUserScramCredentialsResponseData()
                .setThrottleTimeMs(0).setErrorCode(error.code()).setErrorMessage(error.message());
        if (request.users() != null) {
            request.users().forEach(user -> response.results().add(new DescribeUserScramCredentialsResult()
                    .setErrorCode(error.code()).setErrorMessage(error.message())));
        }
        return response;
    }

    @Override
    public void countErrors(DescribeUserScramCredentialsResponseData response, ErrorCounter counter) {
        if (response.errorCode() != Errors.NONE.code()) {
            counter.count(response.errorCode());
        }
        response.results().forEach(result -> counter.count(result.errorCode()));
    }
}
