package io.cairn.broker.group;

import io.cairn.wire.error.Errors;

/**
 * The group-side checks of the offset APIs for the classic groups of one coordinator shard (Kafka's
 * {@code ClassicGroup.validateOffsetCommit}, {@code validateOffsetFetch}, {@code validateOffsetDelete} and
 * {@code validateDeleteGroup}): whether a commit names a current member and generation, whether a group may be
 * deleted or lose a topic's offsets. The {@link ClassicGroupManager} answers them through this class.
 *
 * <p>Thread-safety: as the manager's, confined to the shard's thread.
 */
final class ClassicGroupOffsetChecks {

    private final ClassicGroupManager manager;

    ClassicGroupOffsetChecks(ClassicGroupManager manager) {
        this.manager = manager;
    }

    // ------------------------------------------------------------------------------------- offset-side checks

    /**
     * Kafka's checks of an OffsetCommit against the group: an unknown group is created (Empty, in memory) for a
     * commit without generation and refused with ILLEGAL_GENERATION otherwise; a member's commit must name a
     * current member and generation; a commit without member is only accepted by an Empty group; CompletingRebalance
     * answers REBALANCE_IN_PROGRESS. A member's valid commit also counts as its heartbeat. This is the rule of
     * OffsetCommit v0-8; see {@link #validateOffsetCommit(String, int, String, String, short)}.
     */
    public Errors validateOffsetCommit(String groupId, int generationId, String memberId, String groupInstanceId) {
        return validateCommit(groupId, generationId, memberId, groupInstanceId, false, Errors.ILLEGAL_GENERATION);
    }

    /**
     * As {@link #validateOffsetCommit(String, int, String, String)} for OffsetCommit {@code version}: from version
     * 9 a commit with a generation to an unknown group gets GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION.
     */
    public Errors validateOffsetCommit(String groupId, int generationId, String memberId, String groupInstanceId,
                                       short version) {
        return validateCommit(groupId, generationId, memberId, groupInstanceId, false,
                version >= 9 ? Errors.GROUP_ID_NOT_FOUND : Errors.ILLEGAL_GENERATION);
    }

    /**
     * Kafka's checks of a TxnOffsetCommit against the group: as an OffsetCommit's, except that a commit without
     * member is accepted by a non-empty group (old producers send none), CompletingRebalance does not refuse it and
     * it does not count as a heartbeat.
     */
    public Errors validateTxnOffsetCommit(String groupId, int generationId, String memberId,
                                          String groupInstanceId) {
        return validateCommit(groupId, generationId, memberId, groupInstanceId, true, Errors.ILLEGAL_GENERATION);
    }

    private Errors validateCommit(String groupId, int generationId, String memberId, String groupInstanceId,
                                  boolean transactional, Errors unknownGroupError) {
        String member = memberId == null ? ClassicGroupManager.NO_MEMBER_ID : memberId;
        ClassicGroup group = manager.groupOrNull(groupId);
        if (group == null) {
            if (generationId < 0) {
                manager.getOrCreateSimpleGroup(groupId);
                return Errors.NONE;
            }
            return unknownGroupError;
        }
        if (group.isInState(ClassicGroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        if (generationId < 0 && group.isInState(ClassicGroupState.EMPTY)) {
            return Errors.NONE;
        }
        if (generationId >= 0 || !member.isEmpty() || groupInstanceId != null) {
            Errors error = group.validateMember(member, groupInstanceId);
            if (error != Errors.NONE) {
                return error;
            }
            if (generationId != group.generationId()) {
                return Errors.ILLEGAL_GENERATION;
            }
        } else if (!transactional && !group.isInState(ClassicGroupState.EMPTY)) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (transactional) {
            return Errors.NONE;
        }
        if (group.isInState(ClassicGroupState.COMPLETING_REBALANCE)) {
            return Errors.REBALANCE_IN_PROGRESS;
        }
        ClassicGroupMember committer = group.member(member);
        if (committer != null && (group.isInState(ClassicGroupState.STABLE)
                || group.isInState(ClassicGroupState.PREPARING_REBALANCE))) {
            manager.rescheduleHeartbeat(group, committer, committer.sessionTimeoutMs());
        }
        return Errors.NONE;
    }

    /** OffsetFetch against the group: GROUP_ID_NOT_FOUND for a Dead group, else NONE (unknown groups included). */
    public Errors validateOffsetFetch(String groupId) {
        ClassicGroup group = manager.groupOrNull(groupId);
        return group != null && group.isInState(ClassicGroupState.DEAD) ? Errors.GROUP_ID_NOT_FOUND : Errors.NONE;
    }

    /** DeleteGroups: GROUP_ID_NOT_FOUND for an unknown or Dead group, NON_EMPTY_GROUP unless Empty. */
    public Errors validateDeleteGroup(String groupId) {
        ClassicGroup group = manager.groupOrNull(groupId);
        if (group == null || group.isInState(ClassicGroupState.DEAD)) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        return group.isInState(ClassicGroupState.EMPTY) ? Errors.NONE : Errors.NON_EMPTY_GROUP;
    }

    /**
     * OffsetDelete of one topic: GROUP_ID_NOT_FOUND for an unknown or Dead group, NON_EMPTY_GROUP for a non-empty
     * group that does not use the consumer protocol, GROUP_SUBSCRIBED_TO_TOPIC when a member subscribes to it.
     */
    public Errors validateOffsetDelete(String groupId, String topic) {
        ClassicGroup group = manager.groupOrNull(groupId);
        if (group == null || group.isInState(ClassicGroupState.DEAD)) {
            return Errors.GROUP_ID_NOT_FOUND;
        }
        if (group.isInState(ClassicGroupState.EMPTY)) {
            return Errors.NONE;
        }
        if (!group.usesConsumerProtocol()) {
            return Errors.NON_EMPTY_GROUP;
        }
        return group.isSubscribedToTopic(topic) ? Errors.GROUP_SUBSCRIBED_TO_TOPIC : Errors.NONE;
    }
}
