package io.cairn.broker.security;

/**
 * A SASL exchange that failed because of what the client sent (wrong credentials, a malformed token): its message is
 * sent to the client in the SaslAuthenticate response's {@code error_message}, as Kafka's
 * {@code SaslAuthenticationException} is. Never carries secrets.
 */
public final class SaslAuthenticationException extends Exception {

    private static final long serialVersionUID = 1L;

    public SaslAuthenticationException(String message) {
        super(message, null, false, false);
    }
}
