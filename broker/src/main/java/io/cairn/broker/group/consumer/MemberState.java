package io.cairn.broker.group.consumer;

/**
 * Where a consumer group member is in its reconciliation towards the group's target assignment (Kafka's
 * {@code MemberState}, with the values ConsumerGroupCurrentMemberAssignmentValue stores).
 */
public enum MemberState {
    /** The member has its target assignment at the target assignment epoch. */
    STABLE((byte) 0),
    /** The member must revoke partitions first; it stays at its epoch until it no longer reports them as owned. */
    UNREVOKED_PARTITIONS((byte) 1),
    /** The member is at the target epoch but waits for partitions other members still own. */
    UNRELEASED_PARTITIONS((byte) 2),
    /** A state a newer coordinator wrote that this one does not know: the member is fenced when it heartbeats. */
    UNKNOWN((byte) 127);

    private final byte value;

    MemberState(byte value) {
        this.value = value;
    }

    /** The value records store. */
    public byte value() {
        return value;
    }

    /** The state of a stored value; UNKNOWN for a value this coordinator does not know. */
    public static MemberState fromValue(byte value) {
        for (MemberState state : values()) {
            if (state.value == value) {
                return state;
            }
        }
        return UNKNOWN;
    }
}
