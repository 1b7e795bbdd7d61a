package io.cairn.wire.record;

import io.cairn.wire.error.InvalidRecordException;

import java.util.Objects;

/**
 * The value of a transaction marker control record: {@link ControlRecordType#COMMIT} or
 * {@link ControlRecordType#ABORT} (in the key) and the coordinator epoch that wrote it. Value layout (version 0):
 * {@code version int16, coordinatorEpoch int32}. Thread-safe: immutable.
 */
public record EndTransactionMarker(ControlRecordType type, int coordinatorEpoch) {

    public static final short CURRENT_VERSION = 0;
    private static final int VALUE_SIZE = 6;

    public EndTransactionMarker {
        Objects.requireNonNull(type, "type");
        if (type != ControlRecordType.COMMIT && type != ControlRecordType.ABORT) {
            throw new IllegalArgumentException("Invalid control record type for end transaction marker " + type);
        }
    }

    /** The control record key. */
    public byte[] keyBytes() {
        return type.keyBytes();
    }

    /** The control record value. */
    public byte[] valueBytes() {
        return new byte[] {0, (byte) CURRENT_VERSION, (byte) (coordinatorEpoch >>> 24),
            (byte) (coordinatorEpoch >>> 16), (byte) (coordinatorEpoch >>> 8), (byte) coordinatorEpoch};
    }

    /**
     * The marker in a control record.
     *
     * @throws InvalidRecordException if the record is not a transaction marker or its value is malformed
     */
    public static EndTransactionMarker parse(Record record) {
        ControlRecordType type = ControlRecordType.parse(record.keyArray());
        if (type != ControlRecordType.COMMIT && type != ControlRecordType.ABORT) {
            throw new InvalidRecordException("Invalid control record type for end transaction marker " + type);
        }
        byte[] value = record.valueArray();
        if (value == null || value.length < VALUE_SIZE) {
            throw new InvalidRecordException("Invalid end transaction marker value size "
                    + (value == null ? -1 : value.length));
        }
        short version = (short) (((value[0] & 0xFF) << 8) | (value[1] & 0xFF));
        if (version < 0) {
            throw new InvalidRecordException("Invalid version found for end transaction marker: " + version);
        }
        int epoch = ((value[2] & 0xFF) << 24) | ((value[3] & 0xFF) << 16) | ((value[4] & 0xFF) << 8)
                | (value[5] & 0xFF);
        return new EndTransactionMarker(type, epoch);
    }
}
