package io.cairn.wire.error;

import java.util.Objects;

/**
 * The {@link ApiException} for an error code that has no dedicated exception class: it carries its {@link Errors}
 * entry, so {@link Errors#forException(Throwable)} maps it back to the same code. Made by {@link Errors#exception}.
 * Thread-safe: immutable once constructed.
 */
public final class ErrorCodeException extends ApiException {

    private static final long serialVersionUID = 1L;

    private final Errors error;

    public ErrorCodeException(Errors error, String message) {
        super(message);
        this.error = Objects.requireNonNull(error, "error");
    }

    public ErrorCodeException(Errors error, String message, Throwable cause) {
        super(message, cause);
        this.error = Objects.requireNonNull(error, "error");
    }

    /** The error code this exception stands for. */
    public Errors error() {
        return error;
    }
}
