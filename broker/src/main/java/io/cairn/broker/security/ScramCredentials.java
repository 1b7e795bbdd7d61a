package io.cairn.broker.security;

import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;

/**
 * Where the SCRAM server finds a user's credential: in the broker, the current metadata image (the credentials the
 * controller committed from AlterUserScramCredentials or {@code cairn-storage format --add-scram}). Implementations
 * are thread-safe and never block (a volatile read of the image).
 */
@FunctionalInterface
public interface ScramCredentials {

    /** None: every SCRAM authentication fails as an unknown user's does. */
    ScramCredentials NONE = (user, mechanism) -> null;

    /** The credential of {@code user} for {@code mechanism}, or null when there is none. */
    ScramCredential credential(String user, ScramMechanism mechanism);

    /**
     * The credential derived from the delegation token {@code tokenId} for {@code mechanism} (Kafka's
     * {@code DelegationTokenCache}), or null when there is no such token (or tokens are disabled).
     */
    default TokenCredential tokenCredential(String tokenId, ScramMechanism mechanism) {
        return null;
    }

    /**
     * What a SCRAM login with a delegation token is checked against.
     *
     * @param ownerName           the token owner's name: the principal of a connection that logs in with it
     * @param expirationTimestamp the token's expiry (epoch ms)
     * @param maxTimestamp        the token's maximum lifetime (epoch ms)
     * @param credential          the SCRAM credential whose password is the token's base64 HMAC
     */
    record TokenCredential(String ownerName, long expirationTimestamp, long maxTimestamp,
                           ScramCredential credential) {

        /** True when the token is past its expiry or maximum lifetime at {@code nowMs}. */
        public boolean expired(long nowMs) {
            return expirationTimestamp < nowMs || maxTimestamp < nowMs;
        }
    }
}
