package io.cairn.wire.error;

import io.cairn.wire.protocol.MessageDecodeException;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * Kafka's error codes (as of Kafka 4.1.1), each with its code, retriable flag, default message and exception
 * factory; and the one function that maps a throwable to a code, {@link #forException(Throwable)}.
 *
 * <p>Hand-written, not generated: {@code ErrorsTest} compares every entry with kafka-clients'
 * {@code org.apache.kafka.common.protocol.Errors} (code, name, retriable, message), so drift fails the build.
 * Codes are stable across Kafka versions: a code unknown to this table means a newer peer, and
 * {@link #forCode(short)} answers {@link #UNKNOWN_SERVER_ERROR} as Kafka does.
 *
 * <p>Expected outcomes are values, not exceptions: handlers put {@link #code()} into responses. Services that fail a
 * future use {@link #exception(String)} (or a dedicated {@link ApiException} subclass), and the dispatcher maps it
 * back with {@link #forException(Throwable)}.
 *
 * <p>Thread-safe: an immutable enum; the lookup tables are built once in the static initializer.
 */
public enum Errors {
    UNKNOWN_SERVER_ERROR(-1, false,
            "The server experienced an unexpected error when processing the request.", UnknownServerException::new),
    NONE(0, false, "NONE", null),
    OFFSET_OUT_OF_RANGE(1, false,
            "The requested offset is not within the range of offsets maintained by the server.",
            OffsetOutOfRangeException::new),
    CORRUPT_MESSAGE(2, true,
            "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted "
            + "topic, or is otherwise corrupt.", CorruptRecordException::new),
    UNKNOWN_TOPIC_OR_PARTITION(3, true,
            "This server does not host this topic-partition.", UnknownTopicOrPartitionException::new),
    INVALID_FETCH_SIZE(4, false, "The requested fetch size is invalid.", null),
    LEADER_NOT_AVAILABLE(5, true,
            "There is no leader for this topic-partition as we are in the middle of a leadership election.",
            LeaderNotAvailableException::new),
    NOT_LEADER_OR_FOLLOWER(6, true,
            "For requests intended only for the leader, this error indicates that the broker is not the "
            + "current leader. For requests intended for any replica, this error indicates that the broker is "
            + "not a replica of the topic partition.", NotLeaderOrFollowerException::new),
    REQUEST_TIMED_OUT(7, true, "The request timed out.", null),
    BROKER_NOT_AVAILABLE(8, false, "The broker is not available.", null),
    REPLICA_NOT_AVAILABLE(9, true,
            "The replica is not available for the requested topic-partition. Produce/Fetch requests and other "
            + "requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is "
            + "not a replica of the topic-partition.", null),
    MESSAGE_TOO_LARGE(10, false,
            "The request included a message larger than the max message size the server will accept.",
            RecordTooLargeException::new),
    STALE_CONTROLLER_EPOCH(11, false, "The controller moved to another broker.", null),
    OFFSET_METADATA_TOO_LARGE(12, false, "The metadata field of the offset request was too large.", null),
    NETWORK_EXCEPTION(13, true, "The server disconnected before a response was received.", null),
    COORDINATOR_LOAD_IN_PROGRESS(14, true,
            "The coordinator is loading and hence can't process requests.", CoordinatorLoadInProgressException::new),
    COORDINATOR_NOT_AVAILABLE(15, true, "The coordinator is not available.", CoordinatorNotAvailableException::new),
    NOT_COORDINATOR(16, true, "This is not the correct coordinator.", NotCoordinatorException::new),
    INVALID_TOPIC_EXCEPTION(17, false,
            "The request attempted to perform an operation on an invalid topic.", InvalidTopicException::new),
    RECORD_LIST_TOO_LARGE(18, false,
            "The request included message batch larger than the configured segment size on the server.",
            RecordBatchTooLargeException::new),
    NOT_ENOUGH_REPLICAS(19, true,
            "Messages are rejected since there are fewer in-sync replicas than required.",
            NotEnoughReplicasException::new),
    NOT_ENOUGH_REPLICAS_AFTER_APPEND(20, true,
            "Messages are written to the log, but to fewer in-sync replicas than required.",
            NotEnoughReplicasAfterAppendException::new),
    INVALID_REQUIRED_ACKS(21, false,
            "Produce request specified an invalid value for required acks.", InvalidRequiredAcksException::new),
    ILLEGAL_GENERATION(22, false, "Specified group generation id is not valid.", null),
    INCONSISTENT_GROUP_PROTOCOL(23, false,
            "The group member's supported protocols are incompatible with those of existing members or first "
            + "group member tried to join with empty protocol type or empty protocol list.", null),
    INVALID_GROUP_ID(24, false, "The group id is invalid.", null),
    UNKNOWN_MEMBER_ID(25, false, "The coordinator is not aware of this member.", null),
    INVALID_SESSION_TIMEOUT(26, false,
            "The session timeout is not within the range allowed by the broker (as configured by "
            + "group.min.session.timeout.ms and group.max.session.timeout.ms).", null),
    REBALANCE_IN_PROGRESS(27, false, "The group is rebalancing, so a rejoin is needed.", null),
    INVALID_COMMIT_OFFSET_SIZE(28, false, "The committing offset data size is not valid.", null),
    TOPIC_AUTHORIZATION_FAILED(29, false, "Topic authorization failed.", TopicAuthorizationException::new),
    GROUP_AUTHORIZATION_FAILED(30, false, "Group authorization failed.", GroupAuthorizationException::new),
    CLUSTER_AUTHORIZATION_FAILED(31, false, "Cluster authorization failed.", ClusterAuthorizationException::new),
    INVALID_TIMESTAMP(32, false,
            "The timestamp of the message is out of acceptable range.", InvalidTimestampException::new),
    UNSUPPORTED_SASL_MECHANISM(33, false, "The broker does not support the requested SASL mechanism.", null),
    ILLEGAL_SASL_STATE(34, false, "Request is not valid given the current SASL state.", null),
    UNSUPPORTED_VERSION(35, false, "The version of API is not supported.", UnsupportedVersionException::new),
    TOPIC_ALREADY_EXISTS(36, false, "Topic with this name already exists.", TopicExistsException::new),
    INVALID_PARTITIONS(37, false, "Number of partitions is below 1.", null),
    INVALID_REPLICATION_FACTOR(38, false,
            "Replication factor is below 1 or larger than the number of available brokers.", null),
    INVALID_REPLICA_ASSIGNMENT(39, false, "Replica assignment is invalid.", null),
    INVALID_CONFIG(40, false, "Configuration is invalid.", InvalidConfigurationException::new),
    NOT_CONTROLLER(41, true, "This is not the correct controller for this cluster.", null),
    INVALID_REQUEST(42, false,
            "This most likely occurs because of a request being malformed by the client library or the "
            + "message was sent to an incompatible broker. See the broker logs for more details.",
            InvalidRequestException::new),
    UNSUPPORTED_FOR_MESSAGE_FORMAT(43, false,
            "The message format version on the broker does not support the request.",
            UnsupportedForMessageFormatException::new),
    POLICY_VIOLATION(44, false,
            "Request parameters do not satisfy the configured policy.", PolicyViolationException::new),
    OUT_OF_ORDER_SEQUENCE_NUMBER(45, false,
            "The broker received an out of order sequence number.", OutOfOrderSequenceException::new),
    DUPLICATE_SEQUENCE_NUMBER(46, false,
            "The broker received a duplicate sequence number.", DuplicateSequenceException::new),
    INVALID_PRODUCER_EPOCH(47, false,
            "Producer attempted to produce with an old epoch.", InvalidProducerEpochException::new),
    INVALID_TXN_STATE(48, false,
            "The producer attempted a transactional operation in an invalid state.", InvalidTxnStateException::new),
    INVALID_PRODUCER_ID_MAPPING(49, false,
            "The producer attempted to use a producer id which is not currently assigned to its transactional "
            + "id.", null),
    INVALID_TRANSACTION_TIMEOUT(50, false,
            "The transaction timeout is larger than the maximum value allowed by the broker (as configured by "
            + "transaction.max.timeout.ms).", null),
    CONCURRENT_TRANSACTIONS(51, true,
            "The producer attempted to update a transaction while another concurrent operation on the same "
            + "transaction was ongoing.", null),
    TRANSACTION_COORDINATOR_FENCED(52, false,
            "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current "
            + "coordinator for a given producer.", null),
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED(53, false,
            "Transactional Id authorization failed.", TransactionalIdAuthorizationException::new),
    SECURITY_DISABLED(54, false, "Security features are disabled.", null),
    OPERATION_NOT_ATTEMPTED(55, false,
            "The broker did not attempt to execute this operation. This may happen for batched RPCs where "
            + "some operations in the batch failed, causing the broker to respond without trying the rest.", null),
    KAFKA_STORAGE_ERROR(56, true, "Disk error when trying to access log file on the disk.", KafkaStorageException::new),
    LOG_DIR_NOT_FOUND(57, false, "The user-specified log directory is not found in the broker config.", null),
    SASL_AUTHENTICATION_FAILED(58, false, "SASL Authentication failed.", null),
    UNKNOWN_PRODUCER_ID(59, false,
            "This exception is raised by the broker if it could not locate the producer metadata associated "
            + "with the producerId in question. This could happen if, for instance, the producer's records were "
            + "deleted because their retention time had elapsed. Once the last records of the producerId are "
            + "removed, the producer's metadata is removed from the broker, and future appends by the producer "
            + "will return this exception.", UnknownProducerIdException::new),
    REASSIGNMENT_IN_PROGRESS(60, false, "A partition reassignment is in progress.", null),
    DELEGATION_TOKEN_AUTH_DISABLED(61, false, "Delegation Token feature is not enabled.", null),
    DELEGATION_TOKEN_NOT_FOUND(62, false, "Delegation Token is not found on server.", null),
    DELEGATION_TOKEN_OWNER_MISMATCH(63, false, "Specified Principal is not valid Owner/Renewer.", null),
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED(64, false,
            "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation "
            + "token authenticated channels.", null),
    DELEGATION_TOKEN_AUTHORIZATION_FAILED(65, false, "Delegation Token authorization failed.", null),
    DELEGATION_TOKEN_EXPIRED(66, false, "Delegation Token is expired.", null),
    INVALID_PRINCIPAL_TYPE(67, false, "Supplied principalType is not supported.", null),
    NON_EMPTY_GROUP(68, false, "The group is not empty.", null),
    GROUP_ID_NOT_FOUND(69, false, "The group id does not exist.", null),
    FETCH_SESSION_ID_NOT_FOUND(70, true, "The fetch session ID was not found.", null),
    INVALID_FETCH_SESSION_EPOCH(71, true, "The fetch session epoch is invalid.", null),
    LISTENER_NOT_FOUND(72, true,
            "There is no listener on the leader broker that matches the listener on which metadata request "
            + "was processed.", null),
    TOPIC_DELETION_DISABLED(73, false, "Topic deletion is disabled.", null),
    FENCED_LEADER_EPOCH(74, true,
            "The leader epoch in the request is older than the epoch on the broker.", FencedLeaderEpochException::new),
    UNKNOWN_LEADER_EPOCH(75, true,
            "The leader epoch in the request is newer than the epoch on the broker.", UnknownLeaderEpochException::new),
    UNSUPPORTED_COMPRESSION_TYPE(76, false,
            "The requesting client does not support the compression type of given partition.",
            UnsupportedCompressionTypeException::new),
    STALE_BROKER_EPOCH(77, false, "Broker epoch has changed.", null),
    OFFSET_NOT_AVAILABLE(78, true,
            "The leader high watermark has not caught up from a recent leader election so the offsets cannot "
            + "be guaranteed to be monotonically increasing.", null),
    MEMBER_ID_REQUIRED(79, false,
            "The group member needs to have a valid member id before actually entering a consumer group.", null),
    PREFERRED_LEADER_NOT_AVAILABLE(80, true, "The preferred leader was not available.", null),
    GROUP_MAX_SIZE_REACHED(81, false, "The group has reached its maximum size.", null),
    FENCED_INSTANCE_ID(82, false,
            "The broker rejected this static consumer since another consumer with the same group.instance.id "
            + "has registered with a different member.id.", null),
    ELIGIBLE_LEADERS_NOT_AVAILABLE(83, true, "Eligible topic partition leaders are not available.", null),
    ELECTION_NOT_NEEDED(84, true, "Leader election not needed for topic partition.", null),
    NO_REASSIGNMENT_IN_PROGRESS(85, false, "No partition reassignment is in progress.", null),
    GROUP_SUBSCRIBED_TO_TOPIC(86, false,
            "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.", null),
    INVALID_RECORD(87, false,
            "This record has failed the validation on broker and hence will be rejected.", InvalidRecordException::new),
    UNSTABLE_OFFSET_COMMIT(88, true, "There are unstable offsets that need to be cleared.", null),
    THROTTLING_QUOTA_EXCEEDED(89, true, "The throttling quota has been exceeded.", null),
    PRODUCER_FENCED(90, false,
            "There is a newer producer with the same transactionalId which fences the current one.",
            ProducerFencedException::new),
    RESOURCE_NOT_FOUND(91, false, "A request illegally referred to a resource that does not exist.", null),
    DUPLICATE_RESOURCE(92, false, "A request illegally referred to the same resource twice.", null),
    UNACCEPTABLE_CREDENTIAL(93, false, "Requested credential would not meet criteria for acceptability.", null),
    INCONSISTENT_VOTER_SET(94, false,
            "Indicates that the either the sender or recipient of a voter-only request is not one of the "
            + "expected voters.", null),
    INVALID_UPDATE_VERSION(95, false, "The given update version was invalid.", null),
    FEATURE_UPDATE_FAILED(96, false, "Unable to update finalized features due to an unexpected server error.", null),
    PRINCIPAL_DESERIALIZATION_FAILURE(97, false,
            "Request principal deserialization failed during forwarding. This indicates an internal error on "
            + "the broker cluster security setup.", null),
    SNAPSHOT_NOT_FOUND(98, false, "Requested snapshot was not found.", null),
    POSITION_OUT_OF_RANGE(99, false,
            "Requested position is not greater than or equal to zero, and less than the size of the snapshot.", null),
    UNKNOWN_TOPIC_ID(100, true, "This server does not host this topic ID.", UnknownTopicIdException::new),
    DUPLICATE_BROKER_REGISTRATION(101, false, "This broker ID is already in use.", null),
    BROKER_ID_NOT_REGISTERED(102, false, "The given broker ID was not registered.", null),
    INCONSISTENT_TOPIC_ID(103, true, "The log's topic ID did not match the topic ID in the request.", null),
    INCONSISTENT_CLUSTER_ID(104, false, "The clusterId in the request does not match that found on the server.", null),
    TRANSACTIONAL_ID_NOT_FOUND(105, false, "The transactionalId could not be found.", null),
    FETCH_SESSION_TOPIC_ID_ERROR(106, true, "The fetch session encountered inconsistent topic ID usage.", null),
    INELIGIBLE_REPLICA(107, false, "The new ISR contains at least one ineligible replica.", null),
    NEW_LEADER_ELECTED(108, false,
            "The AlterPartition request successfully updated the partition state but the leader has changed.", null),
    OFFSET_MOVED_TO_TIERED_STORAGE(109, false, "The requested offset is moved to tiered storage.", null),
    FENCED_MEMBER_EPOCH(110, false,
            "The member epoch is fenced by the group coordinator. The member must abandon all its partitions "
            + "and rejoin.", null),
    UNRELEASED_INSTANCE_ID(111, false,
            "The instance ID is still used by another member in the consumer group. That member must leave "
            + "first.", null),
    UNSUPPORTED_ASSIGNOR(112, false, "The assignor or its version range is not supported by the consumer group.", null),
    STALE_MEMBER_EPOCH(113, false,
            "The member epoch is stale. The member must retry after receiving its updated member epoch via "
            + "the ConsumerGroupHeartbeat API.", null),
    MISMATCHED_ENDPOINT_TYPE(114, false, "The request was sent to an endpoint of the wrong type.", null),
    UNSUPPORTED_ENDPOINT_TYPE(115, false, "This endpoint type is not supported yet.", null),
    UNKNOWN_CONTROLLER_ID(116, false, "This controller ID is not known.", null),
    UNKNOWN_SUBSCRIPTION_ID(117, false,
            "Client sent a push telemetry request with an invalid or outdated subscription ID.", null),
    TELEMETRY_TOO_LARGE(118, false,
            "Client sent a push telemetry request larger than the maximum size the broker will accept.", null),
    INVALID_REGISTRATION(119, false, "The controller has considered the broker registration to be invalid.", null),
    TRANSACTION_ABORTABLE(120, false,
            "The server encountered an error with the transaction. The client can abort the transaction to "
            + "continue using this transactional ID.", null),
    INVALID_RECORD_STATE(121, false,
            "The record state is invalid. The acknowledgement of delivery could not be completed.", null),
    SHARE_SESSION_NOT_FOUND(122, true, "The share session was not found.", null),
    INVALID_SHARE_SESSION_EPOCH(123, true, "The share session epoch is invalid.", null),
    FENCED_STATE_EPOCH(124, false,
            "The share coordinator rejected the request because the share-group state epoch did not match.", null),
    INVALID_VOTER_KEY(125, false, "The voter key doesn't match the receiving replica's key.", null),
    DUPLICATE_VOTER(126, false, "The voter is already part of the set of voters.", null),
    VOTER_NOT_FOUND(127, false, "The voter is not part of the set of voters.", null),
    INVALID_REGULAR_EXPRESSION(128, false, "The regular expression is not valid.", null),
    REBOOTSTRAP_REQUIRED(129, false,
            "Client metadata is stale. The client should rebootstrap to obtain new metadata.", null),
    STREAMS_INVALID_TOPOLOGY(130, false, "The supplied topology is invalid.", null),
    STREAMS_INVALID_TOPOLOGY_EPOCH(131, false, "The supplied topology epoch is invalid.", null),
    STREAMS_TOPOLOGY_FENCED(132, false, "The supplied topology epoch is outdated.", null),
    SHARE_SESSION_LIMIT_REACHED(133, true, "The limit of share sessions has been reached.", null);

    private static final Errors[] BY_CODE;
    private static final int CODE_OFFSET = 1;
    private static final Map<Class<?>, Errors> BY_EXCEPTION_CLASS;

    static {
        int maxCode = 0;
        for (Errors error : values()) {
            maxCode = Math.max(maxCode, error.code);
        }
        BY_CODE = new Errors[maxCode + 1 + CODE_OFFSET];
        Map<Class<?>, Errors> byClass = new HashMap<>();
        for (Errors error : values()) {
            if (BY_CODE[error.code + CODE_OFFSET] != null) {
                throw new ExceptionInInitializerError("Duplicate error code " + error.code);
            }
            BY_CODE[error.code + CODE_OFFSET] = error;
            if (error.factory != null) {
                Class<?> type = error.factory.apply(error.message).getClass();
                if (byClass.put(type, error) != null) {
                    throw new ExceptionInInitializerError("Exception " + type.getName() + " maps to two codes");
                }
            }
        }
        // Decoders throw MessageDecodeException for bytes that are not a valid request: Kafka's INVALID_REQUEST.
        byClass.put(MessageDecodeException.class, INVALID_REQUEST);
        BY_EXCEPTION_CLASS = Collections.unmodifiableMap(byClass);
    }

    private final short code;
    private final boolean retriable;
    private final String message;
    private final Function<String, ApiException> factory;

    Errors(int code, boolean retriable, String message, Function<String, ApiException> factory) {
        this.code = (short) code;
        this.retriable = retriable;
        this.message = message;
        this.factory = factory;
    }

    /** The code on the wire. */
    public short code() {
        return code;
    }

    /** Whether a client may retry the same request unchanged (Kafka's {@code RetriableException}). */
    public boolean retriable() {
        return retriable;
    }

    /** Kafka's default message for this code. */
    public String message() {
        return message;
    }

    /** An exception with the default message; {@code null} for {@link #NONE}. */
    public ApiException exception() {
        return exception(null);
    }

    /**
     * A new exception for this code: an instance of the dedicated {@link ApiException} subclass where there is one,
     * an {@link ErrorCodeException} otherwise, and {@code null} for {@link #NONE}.
     *
     * @param message the message, or {@code null} for the default message
     */
    public ApiException exception(String message) {
        if (this == NONE) {
            return null;
        }
        String text = message == null ? this.message : message;
        return factory == null ? new ErrorCodeException(this, text) : factory.apply(text);
    }

    /** The entry for {@code code}; {@link #UNKNOWN_SERVER_ERROR} for a code this table does not know. */
    public static Errors forCode(short code) {
        int index = code + CODE_OFFSET;
        if (index < 0 || index >= BY_CODE.length || BY_CODE[index] == null) {
            return UNKNOWN_SERVER_ERROR;
        }
        return BY_CODE[index];
    }

    /**
     * The one mapping from a throwable to an error code. Unwraps {@link CompletionException} and
     * {@link ExecutionException} (as many levels as there are), answers the carried code of an
     * {@link ErrorCodeException}, then walks the class hierarchy up to the first class with a code, so a subclass of
     * {@link CorruptRecordException} maps to {@link #CORRUPT_MESSAGE}. Anything else is {@link #UNKNOWN_SERVER_ERROR}.
     *
     * @param throwable the failure, or {@code null} for "no failure" ({@link #NONE})
     */
    public static Errors forException(Throwable throwable) {
        Throwable current = throwable;
        while ((current instanceof CompletionException || current instanceof ExecutionException)
                && current.getCause() != null) {
            current = current.getCause();
        }
        if (current == null) {
            return NONE;
        }
        if (current instanceof ErrorCodeException) {
            return ((ErrorCodeException) current).error();
        }
        for (Class<?> type = current.getClass(); type != null; type = type.getSuperclass()) {
            Errors error = BY_EXCEPTION_CLASS.get(type);
            if (error != null) {
                return error;
            }
        }
        return UNKNOWN_SERVER_ERROR;
    }
}
