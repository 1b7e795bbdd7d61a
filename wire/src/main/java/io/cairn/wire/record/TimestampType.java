package io.cairn.wire.record;

/**
 * Whether the timestamps of a batch are the producer's ({@link #CREATE_TIME}) or the broker's append time
 * ({@link #LOG_APPEND_TIME}, stored once in the batch's max timestamp): bit 3 of the batch attributes.
 * Thread-safe: an immutable enum.
 */
public enum TimestampType {
    CREATE_TIME(0, "CreateTime"),
    LOG_APPEND_TIME(1, "LogAppendTime");

    private final int id;
    private final String displayName;

    TimestampType(int id, String displayName) {
        this.id = id;
        this.displayName = displayName;
    }

    public int id() {
        return id;
    }

    /** The name used by {@code message.timestamp.type} ("CreateTime", "LogAppendTime"). */
    public String displayName() {
        return displayName;
    }
}
