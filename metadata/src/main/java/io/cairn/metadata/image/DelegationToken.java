package io.cairn.metadata.image;

import java.util.List;

/**
 * One delegation token as the metadata quorum holds it (Kafka's {@code TokenInformation} without the HMAC, which
 * every node derives from the token id and {@code delegation.token.secret.key}). Principals are in Kafka's
 * {@code type:name} form. Immutable, thread-safe.
 *
 * @param tokenId             the token id (a random UUID string)
 * @param owner               the owner, e.g. {@code User:alice}
 * @param requester           the principal that created it
 * @param renewers            the principals that may renew or expire it (besides the owner)
 * @param issueTimestamp      when it was issued (epoch ms)
 * @param maxTimestamp        after this it cannot be renewed (epoch ms)
 * @param expirationTimestamp it expires at this time unless renewed (epoch ms)
 */
public record DelegationToken(String tokenId, String owner, String requester, List<String> renewers,
                              long issueTimestamp, long maxTimestamp, long expirationTimestamp) {

    public DelegationToken {
        renewers = List.copyOf(renewers);
    }

    /** Kafka's {@code ownerOrRenewer}: the owner, the requester or a renewer. */
    public boolean ownerOrRenewer(String principal) {
        return owner.equals(principal) || requester.equals(principal) || renewers.contains(principal);
    }

    /** Kafka's {@code allowedToRenew}: the owner or a renewer. */
    public boolean ownerOrListedRenewer(String principal) {
        return owner.equals(principal) || renewers.contains(principal);
    }

    /** True when the token is past its expiry or its maximum lifetime at {@code nowMs}. */
    public boolean expired(long nowMs) {
        return maxTimestamp < nowMs || expirationTimestamp < nowMs;
    }

    /** The type of a {@code type:name} principal. */
    public static String principalType(String principal) {
        int colon = principal.indexOf(':');
        return colon < 0 ? "" : principal.substring(0, colon);
    }

    /** The name of a {@code type:name} principal. */
    public static String principalName(String principal) {
        int colon = principal.indexOf(':');
        return colon < 0 ? principal : principal.substring(colon + 1);
    }
}
