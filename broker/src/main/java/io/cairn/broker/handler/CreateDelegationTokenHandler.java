package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.DelegationTokenCommands;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateDelegationTokenRequestData;
import io.cairn.wire.message.CreateDelegationTokenRequestData.CreatableRenewers;
import io.cairn.wire.message.CreateDelegationTokenResponseData;
import java.util.concurrent.CompletionStage;

/**
 * CreateDelegationToken v1-3 ({@code Admin.createDelegationToken}, {@code kafka-delegation-tokens --create}), as
 * Kafka's {@code KafkaApis.handleCreateTokenRequest}: refused with DELEGATION_TOKEN_REQUEST_NOT_ALLOWED where
 * {@link DelegationTokenRequests#allowed} says so, with DELEGATION_TOKEN_AUTHORIZATION_FAILED when the token is for
 * another owner (KIP-373) and the requester lacks CREATE_TOKENS on that {@code User} resource, with
 * INVALID_PRINCIPAL_TYPE for a renewer that is not a {@code User}; otherwise forwarded to the active controller with
 * the requester ({@link DelegationTokenCommands#create}), which answers DELEGATION_TOKEN_AUTH_DISABLED without
 * {@code delegation.token.secret.key}. The requester fields exist from v3 on. Stateless, thread-safe.
 */
public final class CreateDelegationTokenHandler
        implements ApiHandler<CreateDelegationTokenRequestData, CreateDelegationTokenResponseData> {

    private final MetadataNode metadata;

    public CreateDelegationTokenHandler(MetadataNode metadata) {
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.CREATE_DELEGATION_TOKEN;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 3;
    }

    @Override
    public CompletionStage<CreateDelegationTokenResponseData> handle(RequestContext ctx,
            CreateDelegationTokenRequestData request) {
        KafkaPrincipal requester = ctx.connection().principal();
        boolean ownerNamed = request.ownerPrincipalName() != null && !request.ownerPrincipalName().isEmpty();
        if (ownerNamed && request.ownerPrincipalType() == null) {
            // v3 makes both nullable; a name without a type names no principal (Kafka fails the request too).
            return completedFuture(refusal(ctx, Errors.INVALID_REQUEST, KafkaPrincipal.ANONYMOUS, requester));
        }
        KafkaPrincipal owner = ownerNamed
                ? new KafkaPrincipal(request.ownerPrincipalType(), request.ownerPrincipalName()) : requester;
        if (!DelegationTokenRequests.allowed(ctx)) {
            return completedFuture(refusal(ctx, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, owner, requester));
        }
        if (!owner.equals(requester)
                && !ctx.authorize(AclOperation.CREATE_TOKENS, AclResourceType.USER, owner.toString())) {
            return completedFuture(refusal(ctx, Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED, owner, requester));
        }
        for (CreatableRenewers renewer : request.renewers()) {
            if (!KafkaPrincipal.USER_TYPE.equals(renewer.principalType())) {
                return completedFuture(refusal(ctx, Errors.INVALID_PRINCIPAL_TYPE, owner, requester));
            }
        }
        if (request.renewers().size() > DelegationTokenCommands.MAX_RENEWERS) {
            return completedFuture(refusal(ctx, Errors.INVALID_REQUEST, owner, requester));
        }
        return DelegationTokenRequests.forward(metadata, ctx, request).handle((answer, failure) -> failure != null
                ? errorResponse(ctx, request, ControllerCalls.error(failure, "CreateDelegationToken"))
                : forVersion(ctx, ((CreateDelegationTokenResponseData) answer).setThrottleTimeMs(0)));
    }

    /** Kafka's {@code CreateDelegationTokenResponse.prepareResponse} for a refusal: no token, timestamps -1. */
    private static CreateDelegationTokenResponseData refusal(RequestContext ctx, Errors error, KafkaPrincipal owner,
                                                             KafkaPrincipal requester) {
        return forVersion(ctx, new CreateDelegationTokenResponseData().setErrorCode(error.code()).setThrottleTimeMs(0)
                .setPrincipalType(owner.principalType()).setPrincipalName(owner.name())
                .setTokenRequesterPrincipalType(requester.principalType())
                .setTokenRequesterPrincipalName(requester.name()).setIssueTimestampMs(-1L)
                .setExpiryTimestampMs(-1L).setMaxTimestampMs(-1L).setTokenId("").setHmac(new byte[0]));
    }

    /** The requester exists from v3 on (Kafka sets it only for version > 2). */
    private static CreateDelegationTokenResponseData forVersion(RequestContext ctx,
                                                                CreateDelegationTokenResponseData response) {
        if (ctx.apiVersion() < 3) {
            response.setTokenRequesterPrincipalType("").setTokenRequesterPrincipalName("");
        }
        return response;
    }

    /** Kafka's {@code getErrorResponse}: the error with an anonymous owner and requester. */
    @Override
    public CreateDelegationTokenResponseData errorResponse(RequestContext ctx, CreateDelegationTokenRequestData request,
                                                           Errors error) {
        return refusal(ctx, error, KafkaPrincipal.ANONYMOUS, KafkaPrincipal.ANONYMOUS);
    }

    @Override
    public void countErrors(CreateDelegationTokenResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
