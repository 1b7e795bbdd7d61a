package io.cairn.broker.security.oauth;

import io.cairn.broker.config.OAuthBearerSettings;
import java.io.IOException;

/**
 * Checks a bearer token and says who it authenticates: Kafka's {@code OAuthBearerValidatorCallbackHandler}
 * ({@link SecuredTokenValidator}, signed JWTs checked against a JWKS) or
 * {@code OAuthBearerUnsecuredValidatorCallbackHandler} ({@link UnsecuredTokenValidator}, {@code alg=none} tokens,
 * for development only). Implementations are thread-safe; {@link #close()} stops any background work.
 */
public interface TokenValidator extends AutoCloseable {

    /**
     * Validates {@code token}. May wait a bounded time for a JWKS refresh, so it is called on a request-handler
     * thread, never on a network thread.
     */
    OAuthBearerToken validate(String token) throws TokenValidationException;

    @Override
    default void close() {
    }

    /**
     * The validator {@code settings} describe, started: the secured one has fetched its JWKS (on the calling thread)
     * and refreshes it in the background until closed.
     *
     * @throws IOException when the JWKS cannot be fetched or used (Kafka does not start then either)
     */
    static TokenValidator start(OAuthBearerSettings settings) throws IOException {
        if (settings instanceof OAuthBearerSettings.Secured secured) {
            JwksSource keys = JwksSource.of(secured.jwksEndpoint(), secured.refreshMs(), secured.retryBackoffMs(),
                    secured.retryBackoffMaxMs());
            try {
                keys.start();
            } catch (IOException | RuntimeException e) {
                keys.close();
                throw e;
            }
            return new SecuredTokenValidator(secured, keys, System::currentTimeMillis);
        }
        return new UnsecuredTokenValidator((OAuthBearerSettings.Unsecured) settings, System::currentTimeMillis);
    }
}
