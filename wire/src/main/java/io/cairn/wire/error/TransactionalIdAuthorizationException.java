package io.cairn.wire.error;

/**
 * Maps to {@code TRANSACTIONAL_ID_AUTHORIZATION_FAILED} (53):
 * see {@link Errors#TRANSACTIONAL_ID_AUTHORIZATION_FAILED} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class TransactionalIdAuthorizationException extends ApiException {

    private static final long serialVersionUID = 1L;

    public TransactionalIdAuthorizationException(String message) {
        super(message);
    }

    public TransactionalIdAuthorizationException(String message, Throwable cause) {
        super(message, cause);
    }
}
