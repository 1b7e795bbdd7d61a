package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorRecordSerde;
import io.cairn.broker.coordinator.CoordinatorSerde;
import io.cairn.broker.coordinator.CoordinatorSerde.MalformedRecordException;
import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.wire.protocol.ApiMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.Optional;

/**
 * The byte format of {@code __consumer_offsets} records, Kafka's: a key is an int16 record type followed by the key
 * message (types 0 and 1 are a committed offset's {@link OffsetCommitKey}, type 2 a group's {@link GroupMetadataKey};
 * Kafka 4.x writes types 3 and up for KIP-848 consumer, share and streams groups, which Cairn does not read), and a
 * value is an int16 version followed by the value message at that version ({@link OffsetCommitValue} or
 * {@link GroupMetadataValue}); a null value is a tombstone. The key's message is written and read at the version its
 * type names (older Kafka versioned the key so; Kafka 4.x writes version 0 under the type prefix: the same bytes, as
 * no key field depends on the version).
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
     * @throws IllegalArgumentException when the key version is not 0, 1 or 2 or does not match the key's class
     */
    public static byte[] keyBytes(CoordinatorRecord record) {
        Objects.requireNonNull(record, "record");
        short type = record.keyVersion();
        Class<? extends ApiMessage> expected = keyClass(type);
        if (expected == null || !expected.isInstance(record.key())) {
            throw new IllegalArgumentException("Key version " + type + " does not fit the key "
                    + (record.key() == null ? "null" : record.key().getClass().getSimpleName()));
        }
        return CoordinatorRecordSerde.prefixed(type, type, record.key());
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
     * @return the record, or empty when the key's type is not one Cairn reads (3 and up: KIP-848 groups), which the
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
            CoordinatorRecordSerde.read(keyMessage, keyBuf, type, "key");
            boolean offset = type != GROUP_METADATA_KEY;
            if (valueBuf == null) {
                short version = offset ? GroupRecords.OFFSET_VALUE_VERSION : GroupRecords.GROUP_VALUE_VERSION;
                return Optional.of(new CoordinatorRecord(keyMessage, type, null, version));
            }
            short version = CoordinatorRecordSerde.readPrefix(valueBuf, "value");
            ApiMessage value = offset ? new OffsetCommitValue() : new GroupMetadataValue();
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

    private static Class<? extends ApiMessage> keyClass(short type) {
        if (type == OFFSET_COMMIT_KEY_V0 || type == OFFSET_COMMIT_KEY) {
            return OffsetCommitKey.class;
        }
        return type == GROUP_METADATA_KEY ? GroupMetadataKey.class : null;
    }

    private static Class<? extends ApiMessage> valueClass(short type) {
        if (type == OFFSET_COMMIT_KEY_V0 || type == OFFSET_COMMIT_KEY) {
            return OffsetCommitValue.class;
        }
        return type == GROUP_METADATA_KEY ? GroupMetadataValue.class : null;
    }

    private static ApiMessage newKey(short type) {
        if (type == OFFSET_COMMIT_KEY_V0 || type == OFFSET_COMMIT_KEY) {
            return new OffsetCommitKey();
        }
        return type == GROUP_METADATA_KEY ? new GroupMetadataKey() : null;
    }
}
