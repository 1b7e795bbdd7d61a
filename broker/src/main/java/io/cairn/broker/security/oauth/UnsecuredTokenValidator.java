package io.cairn.broker.security.oauth;

import io.cairn.broker.config.OAuthBearerSettings;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Kafka's {@code OAuthBearerUnsecuredValidatorCallbackHandler} (KIP-255), for development only and only when a
 * listener names it: the token is an unsecured JWS ({@code alg} "none", empty signature) whose claims hold the
 * principal ({@code unsecuredValidatorPrincipalClaimName}, default {@code sub}, a non-blank string), a numeric
 * {@code exp} (refused once now minus {@code unsecuredValidatorAllowableClockSkewMs} reaches it), an optional
 * {@code iat} (refused when after now plus the skew, or not before {@code exp}) and a scope
 * ({@code unsecuredValidatorScopeClaimName}, a space-delimited string or an array) that must hold every scope of
 * {@code unsecuredValidatorRequiredScope} (else {@code insufficient_scope}, as in Kafka). Anybody can make such a
 * token for any principal.
 *
 * <p>Immutable and thread-safe.
 */
final class UnsecuredTokenValidator implements TokenValidator {

    private final OAuthBearerSettings.Unsecured settings;
    private final LongSupplier clockMs;

    UnsecuredTokenValidator(OAuthBearerSettings.Unsecured settings, LongSupplier clockMs) {
        this.settings = settings;
        this.clockMs = clockMs;
    }

    @Override
    public OAuthBearerToken validate(String token) throws TokenValidationException {
        if (token.length() > SecuredTokenValidator.MAX_TOKEN_CHARS) {
            throw new TokenValidationException("The access token is " + token.length() + " characters long, more "
                    + "than the " + SecuredTokenValidator.MAX_TOKEN_CHARS + " Cairn accepts");
        }
        if (token.contains("..")) {
            throw new TokenValidationException("Malformed compact serialization contains '..'");
        }
        Jws jws = Jws.parse(token);
        if (!"none".equals(jws.header().get("alg"))) {
            throw new TokenValidationException("Unsecured JWS must have 'none' for an algorithm");
        }
        if (jws.signature().length != 0) {
            throw new TokenValidationException("Unsecured JWS must not contain a digital signature");
        }
        Map<String, Object> claims = jws.claims();
        Object principal = claims.get(settings.principalClaimName());
        if (!(principal instanceof String name) || name.isBlank()) {
            throw new TokenValidationException(principal == null ? "Required claim missing: "
                    + settings.principalClaimName() : "No principal name in JWT claim: "
                    + settings.principalClaimName());
        }
        Long exp = Claims.numericDateMs(claims, "exp");
        Long iat = Claims.numericDateMs(claims, "iat");
        if (exp == null) {
            throw new TokenValidationException("No expiration time in JWT");
        }
        long now = clockMs.getAsLong();
        long skew = settings.allowableClockSkewMs();
        if (iat != null && iat > now + skew) {
            throw new TokenValidationException("The Issued At value (" + iat + " ms) was after the indicated time ("
                    + now + " ms) plus allowable clock skew (" + skew + " ms)");
        }
        if (now - skew >= exp) {
            throw new TokenValidationException("The indicated time (" + now + " ms) minus allowable clock skew ("
                    + skew + " ms) was on or after the Expiration Time value (" + exp + " ms)");
        }
        if (iat != null && exp <= iat) {
            throw new TokenValidationException("The Expiration Time time (" + exp + " ms) was not after the Issued "
                    + "At time (" + iat + " ms)");
        }
        Set<String> scope = Claims.scope(claims, settings.scopeClaimName(), true);
        for (String required : settings.requiredScope()) {
            if (!scope.contains(required)) {
                throw new TokenValidationException("The provided scope (" + scope + ") was missing a required scope ("
                        + required + ").  All required scope elements: " + settings.requiredScope(),
                        TokenValidationException.INSUFFICIENT_SCOPE, settings.requiredScope().toString());
            }
        }
        return new OAuthBearerToken(name, scope, exp, iat);
    }
}
