package io.cairn.wire.record;

import io.cairn.wire.error.InvalidRecordException;

/**
 * The type of a control record: the {@code type} field of its key (key = version int16, type int16). Transaction
 * markers are {@link #ABORT} and {@link #COMMIT}; the others belong to KRaft. Thread-safe: an immutable enum.
 */
public enum ControlRecordType {
    ABORT(0),
    COMMIT(1),
    LEADER_CHANGE(2),
    SNAPSHOT_HEADER(3),
    SNAPSHOT_FOOTER(4),
    KRAFT_VERSION(5),
    KRAFT_VOTERS(6),
    /** A type this code does not know (a newer writer); readers skip it, as Kafka does. */
    UNKNOWN(-1);

    /** The key version written by this code (and the only one Kafka 4.1 writes). */
    public static final short CURRENT_KEY_VERSION = 0;
    /** Size of the control record key: version (int16) and type (int16). */
    public static final int KEY_SIZE = 4;

    private final short type;

    ControlRecordType(int type) {
        this.type = (short) type;
    }

    public short type() {
        return type;
    }

    /** The type with this id; {@link #UNKNOWN} for an id this code does not know. */
    public static ControlRecordType fromType(short type) {
        for (ControlRecordType value : values()) {
            if (value.type == type && value != UNKNOWN) {
                return value;
            }
        }
        return UNKNOWN;
    }

    /** The key bytes of a control record of this type (version 0). */
    public byte[] keyBytes() {
        if (this == UNKNOWN) {
            throw new IllegalArgumentException("Cannot write a control record of type UNKNOWN");
        }
        return new byte[] {0, (byte) CURRENT_KEY_VERSION, (byte) (type >> 8), (byte) type};
    }

    /**
     * The type in the key of a control record.
     *
     * @throws InvalidRecordException for a key shorter than 4 bytes or a negative version
     */
    public static ControlRecordType parse(byte[] key) {
        if (key == null || key.length < KEY_SIZE) {
            throw new InvalidRecordException("Invalid control record key: must have at least "
                    + KEY_SIZE + " bytes, but found only "
                    + (key == null ? 0 : key.length));
        }
        short version = (short) (((key[0] & 0xff) << 8) | (key[1] & 0xff));
        if (version < 0) {
            throw new InvalidRecordException("Invalid version found for control record: " + version);
        }
        return fromType((short) (((key[2] & 0xff) << 8) | (key[3] & 0xff)));
    }
}
