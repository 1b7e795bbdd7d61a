package io.cairn.broker.security.oauth;

import io.cairn.broker.config.OAuthBearerSettings;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * Kafka's {@code OAuthBearerValidatorCallbackHandler} (KIP-768) with its default {@code BrokerJwtValidator}: a token
 * is a JWS-signed JWT whose signature verifies with a key of the JWKS ({@link JwsAlgorithm}: RS, PS and ES with
 * 256/384/512; {@code alg=none}, HMAC and unknown algorithms are refused, and so is a {@code crit} header, since no
 * extension is understood). The key is the one named by the header's {@code kid}, or any key of the algorithm's type
 * when there is no {@code kid}; an unknown {@code kid} brings a JWKS refresh forward and waits for it at most
 * {@link #UNKNOWN_KID_WAIT_MS}. The claims are checked as Kafka's jose4j consumer checks them: {@code exp} and
 * {@code iat} required; the token is refused once now minus {@code sasl.oauthbearer.clock.skew.seconds} reaches
 * {@code exp}, and before {@code nbf} minus the skew; {@code iss} must equal {@code sasl.oauthbearer.expected.issuer}
 * when set; {@code aud} must name one of {@code sasl.oauthbearer.expected.audience} when set, and, as in Kafka, a
 * token naming an audience is refused when none is expected; the subject claim
 * ({@code sasl.oauthbearer.sub.claim.name}) is a non-blank string and becomes the principal. A token longer than
 * {@link #MAX_TOKEN_CHARS} characters is refused before it is decoded.
 *
 * <p>Thread-safe; {@link #validate} may wait (bounded) for a refresh, so it runs on a request-handler thread.
 */
final class SecuredTokenValidator implements TokenValidator {

    static final int MAX_TOKEN_CHARS = 64 * 1024;
    static final long UNKNOWN_KID_WAIT_MS = 2_000L;

    private final OAuthBearerSettings.Secured settings;
    private final JwksSource keys;
    private final LongSupplier clockMs;

    SecuredTokenValidator(OAuthBearerSettings.Secured settings, JwksSource keys, LongSupplier clockMs) {
        this.settings = settings;
        this.keys = keys;
        this.clockMs = clockMs;
    }

    @Override
    public OAuthBearerToken validate(String token) throws TokenValidationException {
        if (token.length() > MAX_TOKEN_CHARS) {
            throw new TokenValidationException("The access token is " + token.length() + " characters long, more "
                    + "than the " + MAX_TOKEN_CHARS + " Cairn accepts");
        }
        Jws jws = Jws.parse(token);
        verifySignature(jws);
        Map<String, Object> claims = jws.claims();
        long now = clockMs.getAsLong();
        long skewMs = settings.clockSkewSeconds() * 1000L;
        Long exp = Claims.numericDateMs(claims, "exp");
        Long iat = Claims.numericDateMs(claims, "iat");
        Long nbf = Claims.numericDateMs(claims, "nbf");
        if (exp == null) {
            throw new TokenValidationException("No Expiration Time (exp) claim present.");
        }
        if (iat == null) {
            throw new TokenValidationException("No Issued At (iat) claim present.");
        }
        if (now - skewMs >= exp) {
            throw new TokenValidationException("The JWT is no longer valid - the evaluation time " + now
                    + " ms is on or after the Expiration Time (exp=" + exp + " ms) claim value (even when providing "
                    + settings.clockSkewSeconds() + " seconds of leeway to account for clock skew).");
        }
        if (nbf != null && now + skewMs < nbf) {
            throw new TokenValidationException("The JWT is not yet valid as the evaluation time " + now
                    + " ms is before the Not Before (nbf=" + nbf + " ms) claim time (even when providing "
                    + settings.clockSkewSeconds() + " seconds of leeway to account for clock skew).");
        }
        checkIssuer(claims);
        checkAudience(claims);
        Set<String> scope = Claims.scope(claims, settings.scopeClaimName(), false);
        String subject = Claims.requiredString(claims, settings.subClaimName());
        return new OAuthBearerToken(subject, scope, exp, iat);
    }

    private void verifySignature(Jws jws) throws TokenValidationException {
        Object algValue = jws.header().get("alg");
        if (!(algValue instanceof String alg)) {
            throw new TokenValidationException("The JWS header has no algorithm (alg)");
        }
        JwsAlgorithm algorithm = JwsAlgorithm.forName(alg);
        if (algorithm == null) {
            throw new TokenValidationException("The JWS algorithm (alg) " + Json.shorten(alg) + " is not permitted"
                    + ("none".equals(alg) ? " (unsecured tokens are refused by the secured validator)" : ""));
        }
        if (jws.header().containsKey("crit")) {
            throw new TokenValidationException("The JWS header has critical (crit) extensions, which are not "
                    + "understood");
        }
        Object kidValue = jws.header().get("kid");
        if (kidValue != null && !(kidValue instanceof String)) {
            throw new TokenValidationException("The JWS key id (kid) is not a string");
        }
        String kid = (String) kidValue;
        Jwks jwks = keys.current();
        if (kid != null && !jwks.hasKid(kid)) {
            jwks = refreshed(kid);
        }
        List<Jwks.Key> candidates = jwks.candidates(algorithm, kid);
        if (candidates.isEmpty()) {
            throw new TokenValidationException("Unable to find a suitable verification key for JWS w/ header {alg="
                    + alg + ", kid=" + (kid == null ? null : Json.shorten(kid)) + "} among the "
                    + jwks.keys().size() + " keys of the JWKS");
        }
        for (Jwks.Key key : candidates) {
            if (algorithm.verify(key.publicKey(), jws.signingInput(), jws.signature())) {
                return;
            }
        }
        throw new TokenValidationException("JWS signature is invalid (alg=" + alg + ", kid="
                + (kid == null ? null : Json.shorten(kid)) + ")");
    }

    /** The keys after a refresh brought forward for {@code kid}, waited for a bounded time. */
    private Jwks refreshed(String kid) {
        CompletableFuture<Jwks> refresh = keys.refreshForUnknownKid(kid);
        if (refresh == null) {
            return keys.current();
        }
        try {
            return refresh.get(UNKNOWN_KID_WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // keep the current keys
        }
        return keys.current();
    }

    private void checkIssuer(Map<String, Object> claims) throws TokenValidationException {
        String expected = settings.expectedIssuer();
        if (expected == null) {
            return;
        }
        Object iss = claims.get("iss");
        if (iss == null || iss == Json.NULL) {
            throw new TokenValidationException("No Issuer (iss) claim present but was expecting " + expected);
        }
        if (!expected.equals(iss)) {
            throw new TokenValidationException("Issuer (iss) claim value (" + Json.shorten(String.valueOf(iss))
                    + ") doesn't match expected value of " + expected);
        }
    }

    private void checkAudience(Map<String, Object> claims) throws TokenValidationException {
        Object aud = claims.get("aud");
        List<String> expected = settings.expectedAudience();
        if (aud == null || aud == Json.NULL) {
            if (!expected.isEmpty()) {
                throw new TokenValidationException("No Audience (aud) claim present.");
            }
            return;
        }
        List<?> audiences = aud instanceof List<?> list ? list : List.of(aud);
        for (Object audience : audiences) {
            if (!(audience instanceof String)) {
                throw new TokenValidationException("The Audience (aud) claim is not a string or an array of "
                        + "strings");
            }
        }
        for (Object audience : audiences) {
            if (expected.contains(audience)) {
                return;
            }
        }
        throw new TokenValidationException("Audience (aud) claim " + Json.shorten(audiences.toString())
                + (expected.isEmpty() ? " present in the JWT but no expected audience value(s) were provided (set "
                + OAuthBearerSettings.EXPECTED_AUDIENCE + ")" : " doesn't contain an acceptable identifier. Expected "
                + String.join(" or ", expected) + " as an aud value."));
    }

    @Override
    public void close() {
        keys.close();
    }
}
