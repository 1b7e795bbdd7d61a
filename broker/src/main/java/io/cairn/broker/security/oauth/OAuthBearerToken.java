package io.cairn.broker.security.oauth;

import java.util.Set;

/**
 * A validated OAUTHBEARER token: what Kafka's {@code OAuthBearerToken} exposes to the broker.
 *
 * <p>Immutable and thread-safe.
 *
 * @param principalName the subject the connection authenticates as ({@code User:<principalName>})
 * @param scope the token's scope
 * @param lifetimeMs when the token expires, in epoch milliseconds (its {@code exp} claim)
 * @param startTimeMs when it was issued, in epoch milliseconds (its {@code iat} claim), or null
 */
public record OAuthBearerToken(String principalName, Set<String> scope, long lifetimeMs, Long startTimeMs) {
}
