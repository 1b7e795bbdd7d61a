package io.cairn.broker.group.share;

import io.cairn.wire.protocol.Uuid;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One share group (Kafka's {@code ShareGroup}): its epoch, members, target assignment and the share-partitions whose
 * state the share coordinator holds ({@link SharePartitionStates}). Empty without members, Stable with any; Dead once
 * deleted or unloaded.
 *
 * <p>Thread-safety: not thread-safe; confined to its shard's thread.
 */
public final class ShareGroup {

    /** Kafka's group states of a share group, with their display names. */
    public enum State {
        EMPTY("Empty"), STABLE("Stable"), DEAD("Dead");

        private final String displayName;

        State(String displayName) {
            this.displayName = displayName;
        }

        public String displayName() {
            return displayName;
        }
    }

    private final String groupId;
    private int groupEpoch;
    private int assignmentEpoch;
    private boolean dead;
    private final Map<String, ShareGroupMember> members = new LinkedHashMap<>();
    private final Map<String, Map<Uuid, Set<Integer>>> targetAssignment = new HashMap<>();

    public ShareGroup(String groupId) {
        this.groupId = groupId;
    }

    public String groupId() {
        return groupId;
    }

    public int groupEpoch() {
        return groupEpoch;
    }

    void setGroupEpoch(int epoch) {
        this.groupEpoch = epoch;
    }

    public int assignmentEpoch() {
        return assignmentEpoch;
    }

    void setAssignmentEpoch(int epoch) {
        this.assignmentEpoch = epoch;
    }

    public State state() {
        if (dead) {
            return State.DEAD;
        }
        return members.isEmpty() ? State.EMPTY : State.STABLE;
    }

    void markDead() {
        dead = true;
    }

    public int numMembers() {
        return members.size();
    }

    public boolean hasMember(String memberId) {
        return members.containsKey(memberId);
    }

    public ShareGroupMember member(String memberId) {
        return members.get(memberId);
    }

    public Collection<ShareGroupMember> members() {
        return Collections.unmodifiableCollection(members.values());
    }

    void updateMember(ShareGroupMember member) {
        members.put(member.memberId(), member);
    }

    void removeMember(String memberId) {
        members.remove(memberId);
        targetAssignment.remove(memberId);
    }

    /** The member's target assignment (empty when it has none). */
    public Map<Uuid, Set<Integer>> targetAssignment(String memberId) {
        return targetAssignment.getOrDefault(memberId, Map.of());
    }

    /** Every member's target assignment. */
    Map<String, Map<Uuid, Set<Integer>>> targetAssignment() {
        return Collections.unmodifiableMap(targetAssignment);
    }

    void setTargetAssignment(String memberId, Map<Uuid, Set<Integer>> partitions) {
        targetAssignment.put(memberId, copyOf(partitions));
    }

    void removeTargetAssignment(String memberId) {
        targetAssignment.remove(memberId);
    }

    /** The union of the members' subscribed topic names, sorted. */
    public Set<String> subscribedTopicNames() {
        Set<String> names = new TreeSet<>();
        members.values().forEach(m -> names.addAll(m.subscribedTopicNames()));
        return names;
    }

    /** Whether every member subscribes to the same topics (Kafka's HOMOGENEOUS subscription type). */
    boolean homogeneous() {
        return members.values().stream().map(m -> Set.copyOf(m.subscribedTopicNames())).distinct().count() <= 1;
    }

    /** The partitions of the target assignment, by topic. */
    Map<Uuid, Set<Integer>> assignedPartitions() {
        Map<Uuid, Set<Integer>> all = new HashMap<>();
        targetAssignment.values().forEach(partitions -> partitions.forEach((topic, ids) ->
            all.computeIfAbsent(topic, t -> new HashSet<>()).addAll(ids)));
        return all;
    }

    /** A deep copy, to restore if a change's write fails. */
    ShareGroup copy() {
        ShareGroup copy = new ShareGroup(groupId);
        copy.groupEpoch = groupEpoch;
        copy.assignmentEpoch = assignmentEpoch;
        copy.dead = dead;
        copy.members.putAll(members);
        targetAssignment.forEach((member, partitions) -> copy.targetAssignment.put(member, copyOf(partitions)));
        return copy;
    }

    /** An immutable copy of a topic id to partitions map. */
    static Map<Uuid, Set<Integer>> copyOf(Map<Uuid, Set<Integer>> partitions) {
        Map<Uuid, Set<Integer>> copy = new HashMap<>();
        partitions.forEach((topic, ids) -> {
            if (!ids.isEmpty()) {
                copy.put(topic, Set.copyOf(ids));
            }
        });
        return Collections.unmodifiableMap(copy);
    }
}
