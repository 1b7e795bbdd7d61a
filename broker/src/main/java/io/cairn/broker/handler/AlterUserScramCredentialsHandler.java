package io.cairn.broker.handler;

import io.cairn.metadata.MetadataNode;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import io.cairn.wire.message.ApiKey;
import java.util.TreeSet;
import java.util.concurrent.CompletionStage;

/**
 * AlterUserScramCredentials v0 ({@code kafka-configs --entity-type users --alter --add-config
 * 'SCRAM-SHA-256=[...]'} / {@code --delete-config}, {@code Admin.alterUserScramCredentials}): forwarded to the active
 * controller as a KRaft broker forwards it; the controller validates each user's alteration with Kafka's rules and
 * commits the credential records ({@code io.cairn.metadata.controller.ScramCommands}), and the response has one
 * result per user. The client sends a salt and a salted password, never the password. A controller that does not
 * answer within 30 s gives REQUEST_TIMED_OUT for every user. Cairn has no authorizer yet, so Kafka's ALTER on
 * CLUSTER check is not made. Immutable, thread-safe, never blocks.
 */
public final class AlterUserScramCredentialsHandler
        implements ApiHandler<AlterUserScramCredentialsRequestData, AlterUserScramCredentialsResponseData> {

    private final MetadataNode metadata;

    public AlterUserScramCredentialsHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ALTER_USER_SCRAM_CREDENTIALS;
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
    public CompletionStage<AlterUserScramCredentialsResponseData> handle(RequestContext ctx,
            AlterUserScramCredentialsRequestData request) {
        return ControllerCalls.withTimeout(metadata.submit(request), ControllerCalls.FORWARD_TIMEOUT_MS)
                .handle((answer, failure) -> failure != null
                        ? errorResponse(ctx, request, ControllerCalls.error(failure, "AlterUserScramCredentials"))
                        : ((AlterUserScramCredentialsResponseData) answer).setThrottleTimeMs(0));
    }

    /** Kafka's AlterUserScramCredentialsRequest.getErrorResponse: every user of the request, sorted, with the error. */
    @Override
    public AlterUserScramCredentialsResponseData errorResponse(RequestContext ctx,
            AlterUserScramCredentialsRequestData request, Errors error) {
        TreeSet<String> users = new TreeSet<>();
        request.deletions().forEach(d -> users.add(d.name()));
        request.upsertions().forEach(u -> users.add(u.name()));
        AlterUserScramCredentialsResponseData response = new AlterUserScramCredentialsResponseData()
                .setThrottleTimeMs(0);
        users.forEach(user -> response.results().add(new AlterUserScramCredentialsResult().setUser(user)
                .setErrorCode(error.code()).setErrorMessage(error.message())));
        return response;
    }

    @Override
    public void countErrors(AlterUserScramCredentialsResponseData response, ErrorCounter counter) {
        response.results().forEach(result -> counter.count(result.errorCode()));
    }
}
