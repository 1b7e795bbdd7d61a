package io.cairn.wire.error;

/**
 * A version this code does not support: thrown when a field that is set cannot be written at the version asked
 * for, and mapped to {@code UNSUPPORTED_VERSION} (35).
 */
public final class UnsupportedVersionException extends ApiException {

    private static final long serialVersionUID = 1L;

    public UnsupportedVersionException(String message) {
        super(message);
    }
}
