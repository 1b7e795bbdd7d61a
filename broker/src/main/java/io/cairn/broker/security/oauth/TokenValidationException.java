package io.cairn.broker.security.oauth;

/**
 * A token that failed validation: {@link #status()} and {@link #scope()} go to the client in RFC 7628's JSON error
 * (Kafka sends {@code invalid_token}, or {@code insufficient_scope} with the required scope from the unsecured
 * validator); the message is for the broker's log only and never holds the token.
 */
public final class TokenValidationException extends Exception {

    private static final long serialVersionUID = 1L;
    static final String INVALID_TOKEN = "invalid_token";
    static final String INSUFFICIENT_SCOPE = "insufficient_scope";

    private final String status;
    private final String scope;

    TokenValidationException(String message) {
        this(message, INVALID_TOKEN, null);
    }

    TokenValidationException(String message, String status, String scope) {
        super(message, null, false, false);
        this.status = status;
        this.scope = scope;
    }

    String status() {
        return status;
    }

    /** The scope the client lacks, or null. */
    String scope() {
        return scope;
    }
}
