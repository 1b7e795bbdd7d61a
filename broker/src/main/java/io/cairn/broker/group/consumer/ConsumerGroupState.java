package io.cairn.broker.group.consumer;

import java.util.Locale;

/** The states of a consumer group, with the names DescribeGroups, ListGroups and ConsumerGroupDescribe report. */
public enum ConsumerGroupState {
    /** No members. */
    EMPTY("Empty"),
    /** The group epoch is ahead of the target assignment epoch: a new target assignment is due. */
    ASSIGNING("Assigning"),
    /** Some member has not reached the target assignment yet. */
    RECONCILING("Reconciling"),
    /** Every member has its target assignment at the target assignment epoch. */
    STABLE("Stable"),
    /** The group is deleted or its shard unloaded. */
    DEAD("Dead");

    private final String displayName;

    ConsumerGroupState(String displayName) {
        this.displayName = displayName;
    }

    public String displayName() {
        return displayName;
    }

    /** The lower-case name ListGroups filters match against. */
    public String lowerCaseName() {
        return displayName.toLowerCase(Locale.ROOT);
    }
}
