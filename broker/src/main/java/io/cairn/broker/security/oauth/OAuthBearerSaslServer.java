package io.cairn.broker.security.oauth;

import io.cairn.broker.security.SaslAuthenticationException;
import io.cairn.broker.security.SaslServer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The server side of SASL/OAUTHBEARER (RFC 7628) as Kafka's {@code OAuthBearerSaslServer} plays it: the client's
 * first message ({@link ClientInitialResponse}) carries a bearer token, which the listener's {@link TokenValidator}
 * checks. A valid token completes the exchange as its subject, unless the client asked for another authorization id
 * (refused with Kafka's message); SASL extensions are all accepted, as Kafka's validators accept them. An invalid
 * token is answered with RFC 7628's JSON error challenge ({@code {"status":"invalid_token"}}), to which the client
 * replies with a single 0x01 byte, and the exchange then fails with that JSON as the error message, as in Kafka (any
 * other reply fails it too). A malformed first message fails with Kafka's generic message. The reason a token was
 * refused is logged at INFO, never sent to the client; the token itself is never logged.
 *
 * <p>Verifying a signature and a possible JWKS refresh wait make the evaluation {@link #expensive()}: it runs on
 * the request-handler threads. Not thread-safe (one connection's exchange).
 */
public final class OAuthBearerSaslServer implements SaslServer {

    private static final Logger LOGGER = LogManager.getLogger(OAuthBearerSaslServer.class);
    public static final String MECHANISM = "OAUTHBEARER";
    static final String INVALID_CREDENTIALS = "Authentication failed during authentication due to invalid "
            + "credentials with SASL mechanism " + MECHANISM;

    private final TokenValidator validator;
    /** The JSON error sent as a challenge, while the client's 0x01 reply is awaited. */
    private String errorMessage;
    private OAuthBearerToken token;
    private Map<String, String> extensions = Map.of();

    public OAuthBearerSaslServer(TokenValidator validator) {
        this.validator = validator;
    }

    @Override
    public String mechanism() {
        return MECHANISM;
    }

    @Override
    public byte[] evaluateResponse(byte[] clientToken) throws SaslAuthenticationException {
        if (token != null) {
            throw new IllegalStateException("Authentication exchange has already completed");
        }
        if (errorMessage != null) {
            // RFC 7628 3.2.3: after an error challenge the client sends %x01 and the exchange fails.
            throw new SaslAuthenticationException(errorMessage);
        }
        ClientInitialResponse response;
        try {
            response = ClientInitialResponse.parse(clientToken);
        } catch (IllegalArgumentException e) {
            LOGGER.info("OAUTHBEARER authentication refused: {}", e.getMessage());
            throw new SaslAuthenticationException(INVALID_CREDENTIALS);
        }
        OAuthBearerToken validated;
        try {
            validated = validator.validate(response.token());
        } catch (TokenValidationException e) {
            LOGGER.info("OAUTHBEARER token refused ({}): {}", e.status(), e.getMessage());
            errorMessage = jsonError(e.status(), e.scope());
            return errorMessage.getBytes(StandardCharsets.UTF_8);
        }
        if (!response.authorizationId().isEmpty()
                && !response.authorizationId().equals(validated.principalName())) {
            throw new SaslAuthenticationException("Authentication failed: Client requested an authorization id ("
                    + Json.shorten(response.authorizationId()) + ") that is different from the token's principal "
                    + "name (" + validated.principalName() + ")");
        }
        token = validated;
        extensions = response.extensions();
        return new byte[0];
    }

    /** Kafka's {@code jsonErrorResponse}: status, and scope when the token lacked one. */
    static String jsonError(String status, String scope) {
        StringBuilder json = new StringBuilder("{\"status\":\"").append(status).append('"');
        if (scope != null) {
            json.append(", \"scope\":\"").append(scope.replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
        }
        return json.append('}').toString();
    }

    @Override
    public boolean complete() {
        return token != null;
    }

    @Override
    public String authorizationId() {
        return completedToken().principalName();
    }

    /** The validated token; only once {@link #complete()}. */
    public OAuthBearerToken completedToken() {
        if (token == null) {
            throw new IllegalStateException("Authentication exchange has not completed");
        }
        return token;
    }

    /** The SASL extensions the client sent (all accepted, as Kafka's validators accept them). */
    public Map<String, String> extensions() {
        return extensions;
    }

    /** When the token expires: a session must not outlive it (Kafka's credential lifetime, KIP-368). */
    @Override
    public OptionalLong credentialExpiryMs() {
        return OptionalLong.of(completedToken().lifetimeMs());
    }

    @Override
    public boolean expensive() {
        return true;
    }
}
