package io.cairn.wire.error;

/**
 * An expected protocol failure that maps to one Kafka error code through {@code Errors.forException(Throwable)}.
 * Services complete futures exceptionally with a subclass; handlers put the code in the response.
 */
public class ApiException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public ApiException(String message) {
        super(message);
    }

    public ApiException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Expected outcomes carry no stack trace: they are values, not bugs. */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }
}
