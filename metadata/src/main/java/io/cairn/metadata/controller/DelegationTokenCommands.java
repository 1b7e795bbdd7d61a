package io.cairn.metadata.controller;

import io.cairn.metadata.image.DelegationToken;
import io.cairn.metadata.image.ImageRecords;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.RemoveDelegationTokenRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.CreateDelegationTokenRequestData;
import io.cairn.wire.message.CreateDelegationTokenRequestData.CreatableRenewers;
import io.cairn.wire.message.CreateDelegationTokenResponseData;
import io.cairn.wire.message.ExpireDelegationTokenRequestData;
import io.cairn.wire.message.ExpireDelegationTokenResponseData;
import io.cairn.wire.message.RenewDelegationTokenRequestData;
import io.cairn.wire.message.RenewDelegationTokenResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Delegation tokens as Kafka's {@code DelegationTokenControlManager} (KIP-48, KIP-373, KIP-900) decides them on the
 * active controller: CreateDelegationToken, RenewDelegationToken and ExpireDelegationToken (forwarded by a broker with
 * the requesting principal, see {@link ForwardedRequest}) and the periodic removal of expired tokens. The clock and
 * the new token id come in as arguments, so the functions stay pure. Each token is one {@code DelegationTokenRecord};
 * expiring one at once and the sweep write a {@code RemoveDelegationTokenRecord}.
 *
 * <p>Kafka's rules: without {@code delegation.token.secret.key} every command is DELEGATION_TOKEN_AUTH_DISABLED. A new
 * token's owner is the request's owner when named, else the requester; its maximum lifetime is the smaller of the
 * request's (when positive) and {@code delegation.token.max.lifetime.ms}; it expires after
 * {@code delegation.token.expiry.time.ms} (never after its maximum); renewers must be {@code User} principals
 * (INVALID_PRINCIPAL_TYPE). Renew and expire find the token by HMAC (DELEGATION_TOKEN_NOT_FOUND) and are allowed to its
 * owner and renewers (DELEGATION_TOKEN_OWNER_MISMATCH); renewing an expired token is DELEGATION_TOKEN_EXPIRED; a
 * negative expiry period removes the token at once. Beyond Kafka, Cairn bounds what a client can make the quorum hold:
 * at most {@value #MAX_RENEWERS} renewers per token and {@value #MAX_TOKENS} tokens (INVALID_REQUEST and
 * POLICY_VIOLATION).
 *
 * <p>Stateless, thread-safe.
 */
public final class DelegationTokenCommands {

    /** The most renewers one token may name. */
    public static final int MAX_RENEWERS = 100;
    /** The most tokens the cluster holds at once. */
    public static final int MAX_TOKENS = 10_000;

    private static final String USER_TYPE = "User";

    private DelegationTokenCommands() {
    }

    /** CreateDelegationToken for {@code requester} at {@code nowMs}, the new token named {@code tokenId}. */
    public static ControllerResult<CreateDelegationTokenResponseData> create(MetadataImage image,
            DelegationTokenSettings settings, CreateDelegationTokenRequestData request, String requester,
            long nowMs, String tokenId) {
        String owner = request.ownerPrincipalName() == null || request.ownerPrincipalName().isEmpty() ? requester
                : request.ownerPrincipalType() + ":" + request.ownerPrincipalName();
        CreateDelegationTokenResponseData response = new CreateDelegationTokenResponseData()
                .setPrincipalType(DelegationToken.principalType(owner))
                .setPrincipalName(DelegationToken.principalName(owner))
                .setTokenRequesterPrincipalType(DelegationToken.principalType(requester))
                .setTokenRequesterPrincipalName(DelegationToken.principalName(requester))
                .setHmac(new byte[0]).setTokenId("");
        if (!settings.enabled()) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_AUTH_DISABLED.code()));
        }
        Set<String> renewers = new LinkedHashSet<>();
        for (CreatableRenewers renewer : request.renewers()) {
            if (!USER_TYPE.equals(renewer.principalType())) {
                return ControllerResult.of(response.setErrorCode(Errors.INVALID_PRINCIPAL_TYPE.code()));
            }
            renewers.add(renewer.principalType() + ":" + renewer.principalName());
        }
        if (renewers.size() > MAX_RENEWERS) {
            return ControllerResult.of(response.setErrorCode(Errors.INVALID_REQUEST.code()));
        }
        if (image.delegationTokens().size() >= MAX_TOKENS) {
            return ControllerResult.of(response.setErrorCode(Errors.POLICY_VIOLATION.code()));
        }
        long maxLifetime = settings.maxLifetimeMs();
        if (request.maxLifetimeMs() > 0) {
            maxLifetime = Math.min(maxLifetime, request.maxLifetimeMs());
        }
        long maxTimestamp = sum(nowMs, maxLifetime);
        long expiryTimestamp = Math.min(maxTimestamp, sum(nowMs, settings.expiryTimeMs()));
        DelegationToken token = new DelegationToken(tokenId, owner, requester, new ArrayList<>(renewers), nowMs,
                maxTimestamp, expiryTimestamp);
        response.setErrorCode(Errors.NONE.code()).setIssueTimestampMs(nowMs).setExpiryTimestampMs(expiryTimestamp)
                .setMaxTimestampMs(maxTimestamp).setTokenId(tokenId).setHmac(settings.hmac(tokenId));
        return new ControllerResult<>(List.of(ImageRecords.delegationTokenRecord(token)), response);
    }

    /** RenewDelegationToken for {@code requester} at {@code nowMs}. */
    public static ControllerResult<RenewDelegationTokenResponseData> renew(MetadataImage image,
            DelegationTokenSettings settings, RenewDelegationTokenRequestData request, String requester,
            long nowMs) {
        RenewDelegationTokenResponseData response = new RenewDelegationTokenResponseData();
        if (!settings.enabled()) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_AUTH_DISABLED.code()));
        }
        DelegationToken token = byHmac(image, settings, request.hmac());
        if (token == null) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_NOT_FOUND.code()));
        }
        if (token.expired(nowMs)) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_EXPIRED.code()));
        }
        if (!token.ownerOrListedRenewer(requester)) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_OWNER_MISMATCH.code()));
        }
        long renewLifetime = settings.expiryTimeMs();
        if (request.renewPeriodMs() > 0) {
            renewLifetime = Math.min(renewLifetime, request.renewPeriodMs());
        }
        long expiryTimestamp = Math.min(token.maxTimestamp(), sum(nowMs, renewLifetime));
        return new ControllerResult<>(List.of(ImageRecords.delegationTokenRecord(withExpiry(token, expiryTimestamp))),
                response.setErrorCode(Errors.NONE.code()).setExpiryTimestampMs(expiryTimestamp));
    }

    /** ExpireDelegationToken for {@code requester} at {@code nowMs}. */
    public static ControllerResult<ExpireDelegationTokenResponseData> expire(MetadataImage image,
            DelegationTokenSettings settings, ExpireDelegationTokenRequestData request, String requester,
            long nowMs) {
        ExpireDelegationTokenResponseData response = new ExpireDelegationTokenResponseData();
        if (!settings.enabled()) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_AUTH_DISABLED.code()));
        }
        DelegationToken token = byHmac(image, settings, request.hmac());
        if (token == null) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_NOT_FOUND.code()));
        }
        if (!token.ownerOrListedRenewer(requester)) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_OWNER_MISMATCH.code()));
        }
        if (request.expiryTimePeriodMs() < 0) {
            return new ControllerResult<>(List.of(new RemoveDelegationTokenRecord().setTokenId(token.tokenId())),
                    response.setErrorCode(Errors.NONE.code()).setExpiryTimestampMs(nowMs));
        }
        if (token.expired(nowMs)) {
            return ControllerResult.of(response.setErrorCode(Errors.DELEGATION_TOKEN_EXPIRED.code()));
        }
        long expiryTimestamp = Math.min(token.maxTimestamp(), sum(nowMs, request.expiryTimePeriodMs()));
        return new ControllerResult<>(List.of(ImageRecords.delegationTokenRecord(withExpiry(token, expiryTimestamp))),
                response.setErrorCode(Errors.NONE.code()).setExpiryTimestampMs(expiryTimestamp));
    }

    /** Kafka's {@code sweepExpiredDelegationTokens}: a removal for every token expired at {@code nowMs}. */
    public static List<ApiMessage> sweepExpired(MetadataImage image, long nowMs) {
        List<ApiMessage> records = new ArrayList<>();
        image.delegationTokens().values().stream().filter(t -> t.expired(nowMs))
                .sorted(Comparator.comparing(DelegationToken::tokenId))
                .forEach(t -> records.add(new RemoveDelegationTokenRecord().setTokenId(t.tokenId())));
        return records;
    }

    /** The token whose HMAC is {@code hmac}, or null; compared in constant time. */
    public static DelegationToken byHmac(MetadataImage image, DelegationTokenSettings settings, byte[] hmac) {
        if (hmac == null || !settings.enabled()) {
            return null;
        }
        for (DelegationToken token : image.delegationTokens().values()) {
            if (MessageDigest.isEqual(settings.hmac(token.tokenId()), hmac)) {
                return token;
            }
        }
        return null;
    }

    private static DelegationToken withExpiry(DelegationToken token, long expiryTimestamp) {
        return new DelegationToken(token.tokenId(), token.owner(), token.requester(), token.renewers(),
                token.issueTimestamp(), token.maxTimestamp(), expiryTimestamp);
    }

    private static long sum(long now, long duration) {
        return now > Long.MAX_VALUE - duration ? Long.MAX_VALUE : now + duration;
    }
}
