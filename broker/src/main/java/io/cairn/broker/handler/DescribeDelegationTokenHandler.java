package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.DelegationTokenSettings;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.DelegationToken;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeDelegationTokenRequestData;
import io.cairn.wire.message.DescribeDelegationTokenRequestData.DescribeDelegationTokenOwner;
import io.cairn.wire.message.DescribeDelegationTokenResponseData;
import io.cairn.wire.message.DescribeDelegationTokenResponseData.DescribedDelegationToken;
import io.cairn.wire.message.DescribeDelegationTokenResponseData.DescribedDelegationTokenRenewer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * DescribeDelegationToken v1-3 ({@code Admin.describeDelegationToken}, {@code kafka-delegation-tokens --describe}),
 * answered from this broker's metadata image as Kafka's {@code KafkaApis.handleDescribeTokensRequest} answers it from
 * its token cache: DELEGATION_TOKEN_REQUEST_NOT_ALLOWED where {@link DelegationTokenRequests#allowed} says so,
 * DELEGATION_TOKEN_AUTH_DISABLED without {@code delegation.token.secret.key}, nothing for an empty owner list, else
 * Kafka's {@code DelegationTokenManager.filterToken}: tokens of the named owners (an owner counts when it owns,
 * requested or may renew the token; a null list names everyone), each visible when the requester owns, requested or
 * may renew it, or may DESCRIBE the {@code DelegationToken} resource of its id, or DESCRIBE_TOKENS on the
 * {@code User} resource of its owner. Each token comes with its HMAC. Stateless, thread-safe.
 */
public final class DescribeDelegationTokenHandler
        implements ApiHandler<DescribeDelegationTokenRequestData, DescribeDelegationTokenResponseData> {

    private final MetadataNode metadata;
    private final DelegationTokenSettings settings;

    public DescribeDelegationTokenHandler(MetadataNode metadata, DelegationTokenSettings settings) {
        this.metadata = metadata;
        this.settings = settings;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_DELEGATION_TOKEN;
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
    public CompletionStage<DescribeDelegationTokenResponseData> handle(RequestContext ctx,
            DescribeDelegationTokenRequestData request) {
        if (!DelegationTokenRequests.allowed(ctx)) {
            return completedFuture(errorResponse(ctx, request, Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED));
        }
        if (!settings.enabled()) {
            return completedFuture(errorResponse(ctx, request, Errors.DELEGATION_TOKEN_AUTH_DISABLED));
        }
        DescribeDelegationTokenResponseData response = new DescribeDelegationTokenResponseData()
                .setErrorCode(Errors.NONE.code()).setThrottleTimeMs(0);
        if (request.owners() != null && request.owners().isEmpty()) {
            return completedFuture(response);
        }
        List<String> owners = null;
        if (request.owners() != null) {
            owners = new ArrayList<>();
            for (DescribeDelegationTokenOwner owner : request.owners()) {
                owners.add(owner.principalType() + ":" + owner.principalName());
            }
        }
        String requester = ctx.connection().principal().toString();
        List<DelegationToken> tokens = new ArrayList<>(metadata.currentImage().delegationTokens().values());
        tokens.sort(Comparator.comparing(DelegationToken::tokenId));
        for (DelegationToken token : tokens) {
            if (visible(ctx, requester, owners, token)) {
                response.tokens().add(described(ctx, token));
            }
        }
        return completedFuture(response);
    }

    /** Kafka's {@code DelegationTokenManager.filterToken}. */
    private static boolean visible(RequestContext ctx, String requester, List<String> owners,
                                   DelegationToken token) {
        if (owners != null && owners.stream().noneMatch(token::ownerOrRenewer)) {
            return false;
        }
        return token.ownerOrRenewer(requester)
                || ctx.authorize(AclOperation.DESCRIBE, AclResourceType.DELEGATION_TOKEN, token.tokenId())
                || ctx.authorize(AclOperation.DESCRIBE_TOKENS, AclResourceType.USER, token.owner());
    }

    private DescribedDelegationToken described(RequestContext ctx, DelegationToken token) {
        DescribedDelegationToken described = new DescribedDelegationToken()
                .setPrincipalType(DelegationToken.principalType(token.owner()))
                .setPrincipalName(DelegationToken.principalName(token.owner()))
                .setIssueTimestamp(token.issueTimestamp()).setExpiryTimestamp(token.expirationTimestamp())
                .setMaxTimestamp(token.maxTimestamp()).setTokenId(token.tokenId())
                .setHmac(settings.hmac(token.tokenId()));
        if (ctx.apiVersion() >= 3) {
            described.setTokenRequesterPrincipalType(DelegationToken.principalType(token.requester()))
                    .setTokenRequesterPrincipalName(DelegationToken.principalName(token.requester()));
        }
        for (String renewer : token.renewers()) {
            described.renewers().add(new DescribedDelegationTokenRenewer()
                    .setPrincipalType(DelegationToken.principalType(renewer))
                    .setPrincipalName(DelegationToken.principalName(renewer)));
        }
        return described;
    }

    @Override
    public DescribeDelegationTokenResponseData errorResponse(RequestContext ctx,
            DescribeDelegationTokenRequestData request, Errors error) {
        return new DescribeDelegationTokenResponseData().setErrorCode(error.code()).setThrottleTimeMs(0);
    }

    @Override
    public void countErrors(DescribeDelegationTokenResponseData response, ErrorCounter counter) {
        counter.count(response.errorCode());
    }
}
