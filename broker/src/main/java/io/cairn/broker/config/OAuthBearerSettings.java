package io.cairn.broker.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * How a SASL listener that enables OAUTHBEARER validates tokens, resolved from Kafka's keys: the server callback
 * handler named by {@code listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class} (Kafka requires the
 * listener and mechanism prefixes on this key) chooses between
 * <ul>
 *   <li>{@link Secured}: Kafka's {@code OAuthBearerValidatorCallbackHandler} (KIP-768): JWS-signed JWTs checked
 *       against the keys of {@code sasl.oauthbearer.jwks.endpoint.url}, with the {@code sasl.oauthbearer.*} keys
 *       (each may be prefixed with {@code listener.name.<listener>.}, which wins);</li>
 *   <li>{@link Unsecured}: Kafka's {@code OAuthBearerUnsecuredValidatorCallbackHandler} (KIP-255): unsigned
 *       ({@code alg=none}) tokens, with the {@code unsecuredValidator*} options of the listener's
 *       {@code OAuthBearerLoginModule} JAAS config. For development only.</li>
 * </ul>
 * Kafka falls back to the unsecured validator when no handler is configured; Cairn refuses to start instead, so that
 * unsigned tokens are accepted only when asked for by name. {@code sasl.oauthbearer.jwt.validator.class} may name
 * Kafka's {@code DefaultJwtValidator} (the default) or {@code BrokerJwtValidator}: both mean Cairn's checks, the
 * latter's. (Kafka 4.1.1's handler builds its default validator without the JWKS, which then falls back to the
 * client-side checks and verifies no signature; {@code BrokerJwtValidator} must be named there to get them.)
 *
 * <p>Immutable and thread-safe.
 */
public sealed interface OAuthBearerSettings {

    String MECHANISM = "OAUTHBEARER";
    String SERVER_CALLBACK_HANDLER_CLASS = "sasl.server.callback.handler.class";
    String VALIDATOR_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler";
    String UNSECURED_VALIDATOR_HANDLER = "org.apache.kafka.common.security.oauthbearer.internals.unsecured."
            + "OAuthBearerUnsecuredValidatorCallbackHandler";
    String JWKS_ENDPOINT_URL = "sasl.oauthbearer.jwks.endpoint.url";
    String JWKS_ENDPOINT_REFRESH_MS = "sasl.oauthbearer.jwks.endpoint.refresh.ms";
    String JWKS_ENDPOINT_RETRY_BACKOFF_MS = "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms";
    String JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS = "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms";
    String EXPECTED_AUDIENCE = "sasl.oauthbearer.expected.audience";
    String EXPECTED_ISSUER = "sasl.oauthbearer.expected.issuer";
    String SCOPE_CLAIM_NAME = "sasl.oauthbearer.scope.claim.name";
    String SUB_CLAIM_NAME = "sasl.oauthbearer.sub.claim.name";
    String CLOCK_SKEW_SECONDS = "sasl.oauthbearer.clock.skew.seconds";
    String JWT_VALIDATOR_CLASS = "sasl.oauthbearer.jwt.validator.class";
    String DEFAULT_JWT_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator";
    String BROKER_JWT_VALIDATOR = "org.apache.kafka.common.security.oauthbearer.BrokerJwtValidator";

    /**
     * Kafka's secured validator (KIP-768).
     *
     * @param jwksEndpoint where the verification keys come from: an {@code http}, {@code https} or {@code file} URL
     * @param refreshMs how often the keys are fetched again
     * @param retryBackoffMs the first wait before a failed fetch is retried
     * @param retryBackoffMaxMs the longest wait between retries of a fetch
     * @param expectedAudience the audiences a token must name one of (empty: a token must name none, as in Kafka)
     * @param expectedIssuer the issuer a token must name, or null
     * @param scopeClaimName the claim holding the token's scope
     * @param subClaimName the claim holding the principal name
     * @param clockSkewSeconds the clock difference allowed when {@code exp} and {@code nbf} are checked
     */
    record Secured(URI jwksEndpoint, long refreshMs, long retryBackoffMs, long retryBackoffMaxMs,
            List<String> expectedAudience, String expectedIssuer, String scopeClaimName, String subClaimName,
            int clockSkewSeconds) implements OAuthBearerSettings {
    }

    /**
     * Kafka's unsecured validator (KIP-255), options from the JAAS config.
     *
     * @param principalClaimName {@code unsecuredValidatorPrincipalClaimName} (default {@code sub})
     * @param scopeClaimName {@code unsecuredValidatorScopeClaimName} (default {@code scope})
     * @param requiredScope {@code unsecuredValidatorRequiredScope}, space-delimited (default none)
     * @param allowableClockSkewMs {@code unsecuredValidatorAllowableClockSkewMs} (default 0)
     */
    record Unsecured(String principalClaimName, String scopeClaimName, List<String> requiredScope,
            int allowableClockSkewMs) implements OAuthBearerSettings {
    }

    /**
     * Resolves the OAUTHBEARER settings of listener {@code listenerName}.
     *
     * @param jaas the listener's OAUTHBEARER login module
     * @throws ConfigException in one line naming the key when the handler is missing or unknown or a value is bad
     */
    static OAuthBearerSettings forListener(Map<String, String> props, String listenerName, JaasConfig jaas) {
        String prefix = SslSettings.listenerPrefix(listenerName);
        String handlerKey = prefix + MECHANISM.toLowerCase(Locale.ROOT) + "." + SERVER_CALLBACK_HANDLER_CLASS;
        String handler = props.get(handlerKey);
        if (handler == null || handler.isBlank()) {
            throw ConfigException.invalid(handlerKey, null, "the SASL listener " + listenerName + " enables "
                    + MECHANISM + " without a server callback handler: set " + handlerKey + "=" + VALIDATOR_HANDLER
                    + " (signed tokens, with " + JWKS_ENDPOINT_URL + ") or, for development only, ="
                    + UNSECURED_VALIDATOR_HANDLER + " (Kafka falls back to the unsecured validator; Cairn accepts "
                    + "unsigned tokens only when configured by name)");
        }
        handler = handler.trim();
        if (handler.equals(UNSECURED_VALIDATOR_HANDLER)) {
            return unsecured(jaas, prefix);
        }
        if (!handler.equals(VALIDATOR_HANDLER)) {
            throw ConfigException.invalid(handlerKey, handler, "Cairn implements the server callback handlers "
                    + VALIDATOR_HANDLER + " and " + UNSECURED_VALIDATOR_HANDLER + " (no custom classes)");
        }
        return secured(props, prefix);
    }

    private static Secured secured(Map<String, String> props, String prefix) {
        String validatorKey = keyOf(props, prefix, JWT_VALIDATOR_CLASS);
        String validator = props.get(validatorKey);
        if (validator != null && !validator.isBlank() && !validator.trim().equals(DEFAULT_JWT_VALIDATOR)
                && !validator.trim().equals(BROKER_JWT_VALIDATOR)) {
            throw ConfigException.invalid(validatorKey, validator, "Cairn validates tokens with "
                    + BROKER_JWT_VALIDATOR + "'s checks, which " + DEFAULT_JWT_VALIDATOR + " (the default) also "
                    + "means; other classes are refused (no plugins, and the client-side validator checks no "
                    + "signature)");
        }
        String urlKey = keyOf(props, prefix, JWKS_ENDPOINT_URL);
        String url = props.get(urlKey);
        if (url == null || url.isBlank()) {
            throw ConfigException.invalid(urlKey, null, "must be set: " + VALIDATOR_HANDLER
                    + " checks token signatures against the keys at this URL (http, https or file)");
        }
        URI jwks;
        try {
            jwks = new URI(url.trim());
        } catch (URISyntaxException e) {
            throw ConfigException.invalid(urlKey, url, "not a URL: " + e.getMessage());
        }
        String scheme = jwks.getScheme() == null ? "" : jwks.getScheme().toLowerCase(Locale.ROOT);
        if (!List.of("http", "https", "file").contains(scheme) || (!scheme.equals("file") && jwks.getHost() == null)) {
            throw ConfigException.invalid(urlKey, url, "must be an http, https or file URL");
        }
        if (scheme.equals("file") && (jwks.isOpaque() || jwks.getPath() == null || jwks.getPath().isEmpty()
                || (jwks.getAuthority() != null && !jwks.getAuthority().isEmpty()))) {
            throw ConfigException.invalid(urlKey, url, "a file URL needs an absolute path and no host, e.g. "
                    + "file:///etc/kafka/jwks.json");
        }
        long refreshMs = longOf(props, prefix, JWKS_ENDPOINT_REFRESH_MS, 3_600_000L, 1L);
        long backoffMs = longOf(props, prefix, JWKS_ENDPOINT_RETRY_BACKOFF_MS, 100L, 0L);
        long backoffMaxMs = longOf(props, prefix, JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS, 10_000L, 0L);
        List<String> audience = new ArrayList<>();
        String audienceValue = props.get(keyOf(props, prefix, EXPECTED_AUDIENCE));
        if (audienceValue != null) {
            for (String entry : audienceValue.split(",")) {
                if (!entry.isBlank()) {
                    audience.add(entry.trim());
                }
            }
        }
        String issuer = props.get(keyOf(props, prefix, EXPECTED_ISSUER));
        issuer = issuer == null || issuer.isBlank() ? null : issuer.trim();
        String scopeClaim = nameOf(props, prefix, SCOPE_CLAIM_NAME, "scope");
        String subClaim = nameOf(props, prefix, SUB_CLAIM_NAME, "sub");
        int skew = (int) longOf(props, prefix, CLOCK_SKEW_SECONDS, 30L, 0L);
        return new Secured(jwks, refreshMs, backoffMs, backoffMaxMs, List.copyOf(audience), issuer, scopeClaim,
                subClaim, skew);
    }

    private static Unsecured unsecured(JaasConfig jaas, String prefix) {
        String principal = jaas.option("unsecuredValidatorPrincipalClaimName");
        String scope = jaas.option("unsecuredValidatorScopeClaimName");
        String required = jaas.option("unsecuredValidatorRequiredScope");
        String skew = jaas.option("unsecuredValidatorAllowableClockSkewMs");
        int skewMs = 0;
        if (skew != null && !skew.isBlank()) {
            try {
                skewMs = Integer.parseInt(skew.trim());
            } catch (NumberFormatException e) {
                skewMs = -1;
            }
            if (skewMs < 0) {
                throw ConfigException.invalid(prefix + "oauthbearer.sasl.jaas.config", "[hidden]",
                        "unsecuredValidatorAllowableClockSkewMs must be a non-negative number of milliseconds, not "
                        + skew);
            }
        }
        List<String> requiredScope = new ArrayList<>();
        if (required != null) {
            for (String item : required.trim().split(" ")) {
                if (!item.isEmpty()) {
                    requiredScope.add(item);
                }
            }
        }
        return new Unsecured(principal == null || principal.isBlank() ? "sub" : principal.trim(),
                scope == null || scope.isBlank() ? "scope" : scope.trim(), List.copyOf(requiredScope), skewMs);
    }

    /** The listener-prefixed key when it is set, else the bare key (Kafka's prefix override). */
    private static String keyOf(Map<String, String> props, String prefix, String key) {
        return props.containsKey(prefix + key) ? prefix + key : key;
    }

    private static String nameOf(Map<String, String> props, String prefix, String key, String defaultValue) {
        String from = keyOf(props, prefix, key);
        String value = props.get(from);
        if (value == null) {
            return defaultValue;
        }
        if (value.isBlank()) {
            throw ConfigException.invalid(from, value, "must be a claim name, not blank");
        }
        return value.trim();
    }

    private static long longOf(Map<String, String> props, String prefix, String key, long defaultValue, long min) {
        String from = keyOf(props, prefix, key);
        String value = props.get(from);
        if (value == null || value.isBlank()) {
            return defaultValue;
        }
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw ConfigException.invalid(from, value, "not a number");
        }
        if (parsed < min || (key.equals(CLOCK_SKEW_SECONDS) && parsed > Integer.MAX_VALUE)) {
            throw ConfigException.invalid(from, value, "must be at least " + min);
        }
        return parsed;
    }
}
