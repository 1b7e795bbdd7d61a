package io.cairn.broker.coordinator;

import io.cairn.wire.error.Errors;

/**
 * The error a coordinator's client sees when an operation's write to the coordinator's topic fails, Kafka's
 * {@code GroupCoordinatorService.handleOperationException} (and the same table in {@code TransactionStateManager}):
 *
 * <pre>
 *   UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE
 *   NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR                                     -> NOT_COORDINATOR
 *   MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE                    -> UNKNOWN_SERVER_ERROR
 *   anything else                                                                   -> itself
 * </pre>
 *
 * The client retries the first two after finding the coordinator again. {@link LoadedShard} already maps most
 * append errors to NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE; this table is the last word for what reaches a
 * coordinator's code. One table for every coordinator kind (groups, transactions), so that they cannot drift apart.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class CoordinatorWriteErrors {

    private CoordinatorWriteErrors() {
    }

    /** The client's error for a failed write that ended in {@code failure}. */
    public static Errors operationError(Throwable failure) {
        return operationError(Errors.forException(failure));
    }

    /** The client's error for a failed write that ended in {@code appendError}. */
    public static Errors operationError(Errors appendError) {
        return switch (appendError) {
            case UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, REQUEST_TIMED_OUT ->
                Errors.COORDINATOR_NOT_AVAILABLE;
            case NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> Errors.NOT_COORDINATOR;
            case MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE, INVALID_FETCH_SIZE -> Errors.UNKNOWN_SERVER_ERROR;
            default -> appendError;
        };
    }
}
