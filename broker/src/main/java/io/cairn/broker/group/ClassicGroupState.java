package io.cairn.broker.group;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The states of a classic consumer group and which transitions between them are valid, as Kafka's classic group
 * coordinator defines them; {@link #toString()} is Kafka's display name ("PreparingRebalance"). Immutable.
 *
 * <ul>
 *   <li>{@link #EMPTY}: no members; offsets may live on (a "simple" group that only commits offsets stays here).</li>
 *   <li>{@link #PREPARING_REBALANCE}: waiting for the members to (re)join.</li>
 *   <li>{@link #COMPLETING_REBALANCE}: joined, waiting for the leader's assignment (SyncGroup).</li>
 *   <li>{@link #STABLE}: the assignment is stored and handed out; members heartbeat.</li>
 *   <li>{@link #DEAD}: removed (deleted or unloaded); requests that still find it are told to retry.</li>
 * </ul>
 */
public enum ClassicGroupState {
    EMPTY("Empty"),
    PREPARING_REBALANCE("PreparingRebalance"),
    COMPLETING_REBALANCE("CompletingRebalance"),
    STABLE("Stable"),
    DEAD("Dead");

    private final String displayName;
    private final String lowerCaseName;

    ClassicGroupState(String displayName) {
        this.displayName = displayName;
        this.lowerCaseName = displayName.toLowerCase(Locale.ROOT);
    }

    /** Kafka's name of the state, as DescribeGroups and ListGroups report it. */
    public String displayName() {
        return displayName;
    }

    /** The display name in lower case, what a case-insensitive ListGroups state filter is compared with. */
    public String lowerCaseName() {
        return lowerCaseName;
    }

    /** The states a group may be in just before it moves to this one. */
    public Set<ClassicGroupState> validPreviousStates() {
        return switch (this) {
            case EMPTY -> EnumSet.of(PREPARING_REBALANCE);
            case PREPARING_REBALANCE -> EnumSet.of(STABLE, COMPLETING_REBALANCE, EMPTY);
            case COMPLETING_REBALANCE -> EnumSet.of(PREPARING_REBALANCE);
            case STABLE -> EnumSet.of(COMPLETING_REBALANCE);
            case DEAD -> EnumSet.of(STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD);
        };
    }

    @Override
    public String toString() {
        return displayName;
    }
}
