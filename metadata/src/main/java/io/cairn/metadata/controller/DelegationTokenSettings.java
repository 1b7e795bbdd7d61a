package io.cairn.metadata.controller;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The {@code delegation.token.*} configs (KIP-48), with Kafka's names and defaults, and the token HMAC they define.
 * Immutable, thread-safe.
 *
 * @param secretKey               delegation.token.secret.key (or the deprecated delegation.token.master.key); null
 *                                or empty disables delegation tokens (DELEGATION_TOKEN_AUTH_DISABLED)
 * @param maxLifetimeMs           delegation.token.max.lifetime.ms (7 days): the longest a token can be renewed for
 * @param expiryTimeMs            delegation.token.expiry.time.ms (1 day): how long a token lives per renewal
 * @param expiryCheckIntervalMs   delegation.token.expiry.check.interval.ms (1 h): how often the active controller
 *                                removes expired tokens
 */
public record DelegationTokenSettings(String secretKey, long maxLifetimeMs, long expiryTimeMs,
                                      long expiryCheckIntervalMs) {

    /** Kafka's defaults without a secret key: delegation tokens disabled. */
    public static final DelegationTokenSettings DISABLED =
            new DelegationTokenSettings(null, 604_800_000L, 86_400_000L, 3_600_000L);

    /** Kafka's {@code tokenAuthEnabled}: a non-empty secret key. */
    public boolean enabled() {
        return secretKey != null && !secretKey.isEmpty();
    }

    /** Kafka's token HMAC: HmacSHA512 of the token id (UTF-8) keyed by the secret key (UTF-8). */
    public byte[] hmac(String tokenId) {
        if (!enabled()) {
            throw new IllegalStateException("Delegation tokens are disabled");
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA512");
            mac.init(new SecretKeySpec(secretKey.getBytes(StandardCharsets.UTF_8), mac.getAlgorithm()));
            return mac.doFinal(tokenId.getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA512 is not available", e);
        }
    }

    @Override
    public String toString() {
        return "DelegationTokenSettings[enabled=" + enabled() + ", maxLifetimeMs=" + maxLifetimeMs
                + ", expiryTimeMs=" + expiryTimeMs + ", expiryCheckIntervalMs=" + expiryCheckIntervalMs + "]";
    }
}
