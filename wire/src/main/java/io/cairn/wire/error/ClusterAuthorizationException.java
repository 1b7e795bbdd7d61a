package io.cairn.wire.error;

/**
 * Maps to {@code CLUSTER_AUTHORIZATION_FAILED} (31): see {@link Errors#CLUSTER_AUTHORIZATION_FAILED} for its meaning.
 * Thread-safe: immutable once constructed.
 */
public class ClusterAuthorizationException extends ApiException {

    private static final long serialVersionUID = 1L;

    public ClusterAuthorizationException(String message) {
        super(message);
    }

    public ClusterAuthorizationException(String message, Throwable cause) {
        super(message, cause);
    }
}
