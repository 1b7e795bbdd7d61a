package io.cairn.wire.error;

/**
 * Maps to {@code POLICY_VIOLATION} (44): see {@link Errors#POLICY_VIOLATION} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class PolicyViolationException extends ApiException {

    private static final long serialVersionUID = 1L;

    public PolicyViolationException(String message) {
        super(message);
    }

    public PolicyViolationException(String message, Throwable cause) {
        super(message, cause);
    }
}
