package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorRecordSerde;
import io.cairn.broker.coordinator.CoordinatorSerde;
import io.cairn.broker.coordinator.CoordinatorSerde.MalformedRecordException;
import io.cairn.broker.group.consumer.ConsumerGroupRecords;
import io.cairn.broker.group.record.ConsumerGroupCurrentMemberAssignmentKey;
import io.cairn.broker.group.record.ConsumerGroupCurrentMemberAssignmentValue;
import io.cairn.broker.group.record.ConsumerGroupMemberMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupMemberMetadataValue;
import io.cairn.broker.group.record.ConsumerGroupMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupMetadataValue;
import io.cairn.broker.group.record.ConsumerGroupRegularExpressionKey;
import io.cairn.broker.group.record.ConsumerGroupRegularExpressionValue;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMemberKey;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMemberValue;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMetadataValue;
import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.broker.group.record.ShareGroupCurrentMemberAssignmentKey;
import io.cairn.broker.group.record.ShareGroupCurrentMemberAssignmentValue;
import io.cairn.broker.group.record.ShareGroupMemberMetadataKey;
import io.cairn.broker.group.record.ShareGroupMemberMetadataValue;
import io.cairn.broker.group.record.ShareGroupMetadataKey;
import io.cairn.broker.group.record.ShareGroupMetadataValue;
import io.cairn.broker.group.record.ShareGroupStatePartitionMetadataKey;
import io.cairn.broker.group.record.ShareGroupStatePartitionMetadataValue;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMemberKey;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMemberValue;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMetadataKey;
import io.cairn.broker.group.record.ShareGroupTargetAssignmentMetadataValue;
import io.cairn.wire.protocol.ApiMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The byte format of {@code __consumer_offsets} records, Kafka's: a key is an int16 record type followed by the key
 * message, and a value is an int16 version followed by the value message at that version; a null value is a
 * tombstone. The record types:
 *
 * <pre>
 *   0, 1  OffsetCommitKey / OffsetCommitValue                       a committed offset (0: before Kafka 0.10)
 *   2     GroupMetadataKey / GroupMetadataValue                     a classic group
 *   3     ConsumerGroupMetadataKey / ...Value                       a KIP-848 consumer group's epoch
 *   4     ConsumerGroupPartitionMetadata                            skipped (Kafka 4.1 no longer writes it)
 *   5     ConsumerGroupMemberMetadataKey / ...Value                 a member's subscription
 *   6     ConsumerGroupTargetAssignmentMetadataKey / ...Value       the target assignment epoch
 *   7     ConsumerGroupTargetAssignmentMemberKey / ...Value         a member's target assignment
 *   8     ConsumerGroupCurrentMemberAssignmentKey / ...Value        a member's current assignment
 *   9     ShareGroupPartitionMetadata                               skipped (Kafka 4.1 no longer writes it)
 *   10    ShareGroupMemberMetadataKey / ...Value                    a share group member's subscription
 *   11    ShareGroupMetadataKey / ...Value                          a share group's epoch
 *   12    ShareGroupTargetAssignmentMetadataKey / ...Value          its target assignment epoch
 *   13    ShareGroupTargetAssignmentMemberKey / ...Value            a share group member's target assignment
 *   14    ShareGroupCurrentMemberAssignmentKey / ...Value           a share group member's current assignment
 *   15    ShareGroupStatePartitionMetadataKey / ...Value            its share-partitions with state
 *   16    ConsumerGroupRegularExpressionKey / ...Value              what a subscribed regular expression matched
 *   17 up later types (streams groups)                              skipped
 * </pre>
 *
 * The key of types 0-2 is written and read at the version its type names (older Kafka versioned the key so; Kafka
 * 4.x writes version 0 under the type prefix: the same bytes, as no key field depends on the version); the key of
 * types 3 and up at version 0.
 *
 * <p>Decoding is as lenient as Kafka's: bytes after a complete message are ignored; anything else malformed is a
 * {@link MalformedRecordException}.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class GroupRecordSerde {

    /** The record type of a committed offset written by Kafka before 0.10 (read only). */
    public static final short OFFSET_COMMIT_KEY_V0 = 0;
    /** The record type of a committed offset. */
    public static final short OFFSET_COMMIT_KEY = 1;
    /** The record type of a classic group's metadata. */
    public static final short GROUP_METADATA_KEY = 2;
    /** The record type of a consumer group's epoch. */
    public static final short CONSUMER_GROUP_METADATA_KEY = ConsumerGroupRecords.GROUP_METADATA;
    /** The record type of a consumer group member's subscription. */
    public static final short CONSUMER_GROUP_MEMBER_METADATA_KEY = ConsumerGroupRecords.MEMBER_METADATA;
    /** The record type of a consumer group's target assignment epoch. */
    public static final short CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY =
        ConsumerGroupRecords.TARGET_ASSIGNMENT_METADATA;
    /** The record type of a consumer group member's target assignment. */
    public static final short CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY =
        ConsumerGroupRecords.TARGET_ASSIGNMENT_MEMBER;
    /** The record type of a consumer group member's current assignment. */
    public static final short CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY =
        ConsumerGroupRecords.CURRENT_MEMBER_ASSIGNMENT;

    /** One record type: its key and value messages, and the value version a tombstone is given. */
    private record RecordType(Class<? extends ApiMessage> keyClass, Supplier<ApiMessage> newKey,
                              Class<? extends ApiMessage> valueClass, Supplier<ApiMessage> newValue,
                              short tombstoneVersion) {
    }

    private static final RecordType[] TYPES = {
        new RecordType(OffsetCommitKey.class, OffsetCommitKey::new, OffsetCommitValue.class, OffsetCommitValue::new,
            GroupRecords.OFFSET_VALUE_VERSION),
        new RecordType(OffsetCommitKey.class, OffsetCommitKey::new, OffsetCommitValue.class, OffsetCommitValue::new,
            GroupRecords.OFFSET_VALUE_VERSION),
        new RecordType(GroupMetadataKey.class, GroupMetadataKey::new, GroupMetadataValue.class,
            GroupMetadataValue::new, GroupRecords.GROUP_VALUE_VERSION),
        new RecordType(ConsumerGroupMetadataKey.class, ConsumerGroupMetadataKey::new,
            ConsumerGroupMetadataValue.class, ConsumerGroupMetadataValue::new, (short) 0),
        null,
        new RecordType(ConsumerGroupMemberMetadataKey.class, ConsumerGroupMemberMetadataKey::new,
            ConsumerGroupMemberMetadataValue.class, ConsumerGroupMemberMetadataValue::new, (short) 0),
        new RecordType(ConsumerGroupTargetAssignmentMetadataKey.class, ConsumerGroupTargetAssignmentMetadataKey::new,
            ConsumerGroupTargetAssignmentMetadataValue.class, ConsumerGroupTargetAssignmentMetadataValue::new,
            (short) 0),
        new RecordType(ConsumerGroupTargetAssignmentMemberKey.class, ConsumerGroupTargetAssignmentMemberKey::new,
            ConsumerGroupTargetAssignmentMemberValue.class, ConsumerGroupTargetAssignmentMemberValue::new, (short) 0),
        new RecordType(ConsumerGroupCurrentMemberAssignmentKey.class, ConsumerGroupCurrentMemberAssignmentKey::new,
            ConsumerGroupCurrentMemberAssignmentValue.class, ConsumerGroupCurrentMemberAssignmentValue::new,
            (short) 0),
        null,
        new RecordType(ShareGroupMemberMetadataKey.class, ShareGroupMemberMetadataKey::new,
            ShareGroupMemberMetadataValue.class, ShareGroupMemberMetadataValue::new, (short) 0),
        new RecordType(ShareGroupMetadataKey.class, ShareGroupMetadataKey::new, ShareGroupMetadataValue.class,
            ShareGroupMetadataValue::new, (short) 0),
        new RecordType(ShareGroupTargetAssignmentMetadataKey.class, ShareGroupTargetAssignmentMetadataKey::new,
            ShareGroupTargetAssignmentMetadataValue.class, ShareGroupTargetAssignmentMetadataValue::new, (short) 0),
        new RecordType(ShareGroupTargetAssignmentMemberKey.class, ShareGroupTargetAssignmentMemberKey::new,
            ShareGroupTargetAssignmentMemberValue.class, ShareGroupTargetAssignmentMemberValue::new, (short) 0),
        new RecordType(ShareGroupCurrentMemberAssignmentKey.class, ShareGroupCurrentMemberAssignmentKey::new,
            ShareGroupCurrentMemberAssignmentValue.class, ShareGroupCurrentMemberAssignmentValue::new, (short) 0),
        new RecordType(ShareGroupStatePartitionMetadataKey.class, ShareGroupStatePartitionMetadataKey::new,
            ShareGroupStatePartitionMetadataValue.class, ShareGroupStatePartitionMetadataValue::new, (short) 0),
        new RecordType(ConsumerGroupRegularExpressionKey.class, ConsumerGroupRegularExpressionKey::new,
            ConsumerGroupRegularExpressionValue.class, ConsumerGroupRegularExpressionValue::new, (short) 0),
    };

    /** This format as the coordinator runtime uses it. */
    public static final CoordinatorSerde<CoordinatorRecord> SERDE = new CoordinatorSerde<>() {
        @Override
        public byte[] keyBytes(CoordinatorRecord record) {
            return GroupRecordSerde.keyBytes(record);
        }

        @Override
        public byte[] valueBytes(CoordinatorRecord record) {
            return GroupRecordSerde.valueBytes(record);
        }

        @Override
        public Optional<CoordinatorRecord> decode(ByteBuffer key, ByteBuffer valueOrNull) {
            return GroupRecordSerde.decode(key, valueOrNull);
        }
    };

    private GroupRecordSerde() {
    }

    /**
     * The key bytes of {@code record}: its key version (the record type) and its key.
     *
     * @throws IllegalArgumentException when the key version is not a type Cairn writes or does not match the key
     */
    public static byte[] keyBytes(CoordinatorRecord record) {
        Objects.requireNonNull(record, "record");
        short type = record.keyVersion();
        Class<? extends ApiMessage> expected = keyClass(type);
        if (expected == null || !expected.isInstance(record.key())) {
            throw new IllegalArgumentException("Key version " + type + " does not fit the key "
                    + (record.key() == null ? "null" : record.key().getClass().getSimpleName()));
        }
        return CoordinatorRecordSerde.prefixed(type, keyMessageVersion(type), record.key());
    }

    /**
     * The value bytes of {@code record}: its value version and its value, or null for a tombstone.
     *
     * @throws IllegalArgumentException when the value does not match the key's type or its version is not one the
     *                                  value has
     */
    public static byte[] valueBytes(CoordinatorRecord record) {
        Objects.requireNonNull(record, "record");
        ApiMessage value = record.value();
        if (value == null) {
            return null;
        }
        short type = record.keyVersion();
        Class<? extends ApiMessage> expected = valueClass(type);
        if (expected == null || !expected.isInstance(value)) {
            throw new IllegalArgumentException("Value " + value.getClass().getSimpleName()
                    + " does not fit key version " + type);
        }
        short version = record.valueVersion();
        if (version < value.lowestSupportedVersion() || version > value.highestSupportedVersion()) {
            throw new IllegalArgumentException("Unsupported version " + version + " of "
                    + value.getClass().getSimpleName());
        }
        return CoordinatorRecordSerde.prefixed(version, version, value);
    }

    /**
     * Decodes one record of {@code __consumer_offsets}. Neither buffer's position moves.
     *
     * @param key          the record's key
     * @param valueOrNull  the record's value, or null for a tombstone
     * @return the record, or empty when the key's type is not one Cairn reads (4, 9, and 17 and up), which the
     *         caller skips
     * @throws MalformedRecordException when the key or value is too short, has a value version its type lacks, or
     *                                  does not decode
     */
    public static Optional<CoordinatorRecord> decode(ByteBuffer key, ByteBuffer valueOrNull) {
        if (key == null) {
            throw new MalformedRecordException("Record has no key");
        }
        ByteBuf keyBuf = Unpooled.wrappedBuffer(key.duplicate());
        ByteBuf valueBuf = valueOrNull == null ? null : Unpooled.wrappedBuffer(valueOrNull.duplicate());
        try {
            short type = CoordinatorRecordSerde.readPrefix(keyBuf, "key");
            ApiMessage keyMessage = newKey(type);
            if (keyMessage == null) {
                return Optional.empty();
            }
            CoordinatorRecordSerde.read(keyMessage, keyBuf, keyMessageVersion(type), "key");
            if (valueBuf == null) {
                return Optional.of(new CoordinatorRecord(keyMessage, type, null, TYPES[type].tombstoneVersion()));
            }
            short version = CoordinatorRecordSerde.readPrefix(valueBuf, "value");
            ApiMessage value = TYPES[type].newValue().get();
            if (version < value.lowestSupportedVersion() || version > value.highestSupportedVersion()) {
                throw new MalformedRecordException("Unsupported version " + version + " of "
                        + value.getClass().getSimpleName() + " (key " + keyMessage + ")");
            }
            CoordinatorRecordSerde.read(value, valueBuf, version, "value of " + keyMessage);
            return Optional.of(new CoordinatorRecord(keyMessage, type, value, version));
        } finally {
            keyBuf.release();
            if (valueBuf != null) {
                valueBuf.release();
            }
        }
    }

    private static RecordType type(short type) {
        return type >= 0 && type < TYPES.length ? TYPES[type] : null;
    }

    private static short keyMessageVersion(short type) {
        return type <= GROUP_METADATA_KEY ? type : 0;
    }

    private static Class<? extends ApiMessage> keyClass(short type) {
        RecordType recordType = type(type);
        return recordType == null ? null : recordType.keyClass();
    }

    private static Class<? extends ApiMessage> valueClass(short type) {
        RecordType recordType = type(type);
        return recordType == null ? null : recordType.valueClass();
    }

    private static ApiMessage newKey(short type) {
        RecordType recordType = type(type);
        return recordType == null ? null : recordType.newKey().get();
    }
}
