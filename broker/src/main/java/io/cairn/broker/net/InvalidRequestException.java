package io.cairn.broker.net;

/**
 * A request the broker will not serve and answers by closing the connection, as Kafka does for an unknown API key,
 * an API the listener does not serve, a version outside the served range (except ApiVersions) and a header or body
 * that does not decode. The message is the reason logged in the one WARN line.
 *
 * <p>Immutable; carries no stack trace (an expected outcome, not a bug).
 */
final class InvalidRequestException extends Exception {

    private static final long serialVersionUID = 1L;

    InvalidRequestException(String message) {
        super(message, null, false, false);
    }
}
