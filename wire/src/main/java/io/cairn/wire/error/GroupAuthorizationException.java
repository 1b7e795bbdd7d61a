package io.cairn.wire.error;

/**
 * Maps to {@code GROUP_AUTHORIZATION_FAILED} (30): see {@link Errors#GROUP_AUTHORIZATION_FAILED} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class GroupAuthorizationException extends ApiException {

    private static final long serialVersionUID = 1L;

    public GroupAuthorizationException(String message) {
        super(message);
    }

    public GroupAuthorizationException(String message, Throwable cause) {
        super(message, cause);
    }
}
