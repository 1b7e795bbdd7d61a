package io.cairn.broker.share.partition;

/**
 * The delivery state of an in-flight record of a share-partition (Kafka's {@code RecordState}). An acquired record is
 * persisted as available: its acquisition lock does not outlive its leader. Immutable.
 */
public enum RecordState {
    AVAILABLE((byte) 0),
    ACQUIRED((byte) 1),
    ACKNOWLEDGED((byte) 2),
    ARCHIVED((byte) 4);

    private final byte code;

    RecordState(byte code) {
        this.code = code;
    }

    /** The state code of this state in a WriteShareGroupState batch. */
    public byte persisted() {
        return this == ACQUIRED ? AVAILABLE.code : code;
    }

    /** Whether the record is done with: the start offset may pass it. */
    boolean isTerminal() {
        return this == ACKNOWLEDGED || this == ARCHIVED;
    }

    /**
     * The state of a persisted delivery state code (0, 2 or 4).
     *
     * @throws IllegalArgumentException for any other code
     */
    public static RecordState ofPersisted(byte code) {
        switch (code) {
            case 0:
                return AVAILABLE;
            case 2:
                return ACKNOWLEDGED;
            case 4:
                return ARCHIVED;
            default:
                throw new IllegalArgumentException("Unknown persisted record state: " + code);
        }
    }
}
