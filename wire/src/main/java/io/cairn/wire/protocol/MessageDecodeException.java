package io.cairn.wire.protocol;

/**
 * The one exception a decoder throws for bytes that are not a valid message of the version asked for: too short,
 * a negative or oversized length, a null where the schema forbids it, an invalid varint.
 *
 * <p>The server treats it as a malformed request (Kafka's {@code InvalidRequestException} path).
 */
public final class MessageDecodeException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public MessageDecodeException(String message) {
        super(message);
    }

    public MessageDecodeException(String message, Throwable cause) {
        super(message, cause);
    }
}
