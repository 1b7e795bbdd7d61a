package io.cairn.broker.group.consumer;

import io.cairn.broker.group.assignor.GroupAssignment;
import io.cairn.broker.group.assignor.GroupSpec;
import io.cairn.broker.group.assignor.MemberSubscription;
import io.cairn.broker.group.assignor.PartitionAssignor;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One KIP-848 consumer group (Kafka's {@code ConsumerGroup}): its members, the group epoch (bumped whenever
 * membership or a subscription changes), the target assignment and its epoch (the group epoch it was computed for),
 * and who owns each partition now (a partition's epoch is the epoch of the member that owns it, assigned or pending
 * revocation; a partition is given to a new owner only once released), and what the regular expressions its members
 * subscribe to matched. Its state follows from these ({@link #state()}).
 *
 * <p>Thread-safety: not thread-safe; confined to its coordinator shard's thread.
 */
public final class ConsumerGroup {

    /** The group type ListGroups reports. */
    public static final String GROUP_TYPE = "consumer";

    private final String groupId;
    private int groupEpoch;
    private int targetAssignmentEpoch;
    private final Map<String, ConsumerGroupMember> members = new TreeMap<>();
    private final Map<String, String> staticMembers = new HashMap<>();
    private final Map<String, Map<Uuid, Set<Integer>>> targetAssignment = new HashMap<>();
    private final Map<Uuid, Map<Integer, Integer>> partitionEpochs = new HashMap<>();
    private final Map<String, Integer> subscribedTopicCounts = new HashMap<>();
    private final Map<String, Integer> subscribedRegexCounts = new HashMap<>();
    private final Map<String, ResolvedRegularExpression> resolvedRegexes = new HashMap<>();
    private boolean dead;

    /**
     * What a regular expression the members subscribe to matched (Kafka's {@code ResolvedRegularExpression}).
     *
     * @param topics      the names of the topics it matched
     * @param version     the metadata offset of the image it was resolved against
     * @param timestampMs when it was resolved
     */
    public record ResolvedRegularExpression(Set<String> topics, long version, long timestampMs) {
        public ResolvedRegularExpression {
            topics = Set.copyOf(topics);
        }
    }

    public ConsumerGroup(String groupId) {
        this.groupId = groupId;
    }

    /**
     * A copy of this group that shares nothing mutable with it: the state to go back to when the write of a change
     * fails (Kafka reverts its timeline data structures to the last committed offset).
     */
    public ConsumerGroup copy() {
        ConsumerGroup copy = new ConsumerGroup(groupId);
        copy.groupEpoch = groupEpoch;
        copy.targetAssignmentEpoch = targetAssignmentEpoch;
        copy.members.putAll(members);
        copy.staticMembers.putAll(staticMembers);
        copy.targetAssignment.putAll(targetAssignment);
        partitionEpochs.forEach((topicId, epochs) -> copy.partitionEpochs.put(topicId, new HashMap<>(epochs)));
        copy.subscribedTopicCounts.putAll(subscribedTopicCounts);
        copy.subscribedRegexCounts.putAll(subscribedRegexCounts);
        copy.resolvedRegexes.putAll(resolvedRegexes);
        copy.dead = dead;
        return copy;
    }

    public String groupId() {
        return groupId;
    }

    public int groupEpoch() {
        return groupEpoch;
    }

    public void setGroupEpoch(int groupEpoch) {
        this.groupEpoch = groupEpoch;
    }

    public int targetAssignmentEpoch() {
        return targetAssignmentEpoch;
    }

    /** Kafka's state rules: Empty, else Assigning while the target is behind, else Reconciling until all match. */
    public ConsumerGroupState state() {
        if (dead) {
            return ConsumerGroupState.DEAD;
        }
        if (members.isEmpty()) {
            return ConsumerGroupState.EMPTY;
        }
        if (groupEpoch > targetAssignmentEpoch) {
            return ConsumerGroupState.ASSIGNING;
        }
        for (ConsumerGroupMember member : members.values()) {
            if (member.state() != MemberState.STABLE || member.memberEpoch() != targetAssignmentEpoch) {
                return ConsumerGroupState.RECONCILING;
            }
        }
        return ConsumerGroupState.STABLE;
    }

    /** Marks the group deleted (or its shard gone). */
    public void markDead() {
        dead = true;
    }

    public ConsumerGroupMember member(String memberId) {
        return members.get(memberId);
    }

    public boolean hasMember(String memberId) {
        return members.containsKey(memberId);
    }

    public Collection<ConsumerGroupMember> members() {
        return Collections.unmodifiableCollection(members.values());
    }

    public int numMembers() {
        return members.size();
    }

    /** The member id of the static member with {@code instanceId}, or null. */
    public String staticMemberId(String instanceId) {
        return instanceId == null ? null : staticMembers.get(instanceId);
    }

    /** How many members speak the classic protocol. */
    public int numClassicProtocolMembers() {
        return (int) members.values().stream().filter(ConsumerGroupMember::useClassicProtocol).count();
    }

    /**
     * Kafka's check of a classic JoinGroup to this group: its protocol type must be "consumer" and one of its
     * protocols must be supported by every classic member already in the group (any, when there is none).
     */
    public boolean supportsClassicProtocols(String protocolType, Set<String> protocolNames) {
        if (!"consumer".equals(protocolType)) {
            return false;
        }
        List<ConsumerGroupMember> classic = members.values().stream().filter(ConsumerGroupMember::useClassicProtocol)
            .toList();
        if (classic.isEmpty()) {
            return !protocolNames.isEmpty();
        }
        return protocolNames.stream().anyMatch(name -> classic.stream()
            .allMatch(m -> m.classicMetadata().protocolNames().contains(name)));
    }

    /**
     * Whether a partition of the member's target that it is not assigned yet is still owned by another member
     * (Kafka's {@code waitingOnUnreleasedPartition}): then a classic member need not rejoin yet.
     */
    public boolean waitsOnUnreleasedPartition(ConsumerGroupMember member) {
        for (Map.Entry<Uuid, Set<Integer>> topic : targetAssignment(member.memberId()).entrySet()) {
            Set<Integer> assigned = member.assignedPartitions().getOrDefault(topic.getKey(), Set.of());
            for (int partition : topic.getValue()) {
                if (!assigned.contains(partition)
                        && partitionEpoch(topic.getKey(), partition) != MemberReconciler.NO_EPOCH) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether every member but {@code memberId}, which speaks the consumer protocol, speaks the classic protocol. */
    public boolean allMembersUseClassicProtocolExcept(String memberId) {
        ConsumerGroupMember member = members.get(memberId);
        return member != null && !member.useClassicProtocol() && numClassicProtocolMembers() == members.size() - 1;
    }

    /**
     * Adds or replaces a member, keeping the partition epochs and subscription counts in step.
     *
     * @throws IllegalStateException when the member would own a partition another member owns
     */
    public void updateMember(ConsumerGroupMember member) {
        ConsumerGroupMember old = members.get(member.memberId());
        if (old != null) {
            removePartitionEpochs(old);
        }
        String conflict = firstOwnedPartition(member);
        if (conflict != null) {
            if (old != null) {
                addPartitionEpochs(old);
            }
            throw new IllegalStateException("Partition " + conflict + " of group " + groupId + " is owned by another"
                + " member already");
        }
        addPartitionEpochs(member);
        if (old != null) {
            countSubscriptions(old, -1);
        }
        members.put(member.memberId(), member);
        if (member.instanceId() != null) {
            staticMembers.put(member.instanceId(), member.memberId());
        }
        countSubscriptions(member, 1);
    }

    /**
     * Adds or replaces a member while the shard loads: a partition another member holds is taken over (the log is
     * the truth; a compacted log may show a partition's new owner before its old owner's release).
     */
    public void replayMember(ConsumerGroupMember member) {
        ConsumerGroupMember old = members.get(member.memberId());
        if (old != null) {
            removePartitionEpochs(old);
            countSubscriptions(old, -1);
        }
        addPartitionEpochs(member);
        members.put(member.memberId(), member);
        if (member.instanceId() != null) {
            staticMembers.put(member.instanceId(), member.memberId());
        }
        countSubscriptions(member, 1);
    }

    /** Forgets a member's target assignment (replaying its tombstone). */
    public void removeTargetAssignment(String memberId) {
        targetAssignment.remove(memberId);
    }

    /** Removes a member: its partitions are released and its target assignment forgotten. */
    public void removeMember(String memberId) {
        ConsumerGroupMember old = members.remove(memberId);
        if (old == null) {
            return;
        }
        removePartitionEpochs(old);
        countSubscriptions(old, -1);
        if (old.instanceId() != null && memberId.equals(staticMembers.get(old.instanceId()))) {
            staticMembers.remove(old.instanceId());
        }
        targetAssignment.remove(memberId);
    }

    /** The epoch of the member owning the partition, or {@link MemberReconciler#NO_EPOCH}. */
    public int partitionEpoch(Uuid topicId, int partition) {
        return partitionEpochs.getOrDefault(topicId, Map.of()).getOrDefault(partition, MemberReconciler.NO_EPOCH);
    }

    /** The member's partitions in the target assignment, empty for none. */
    public Map<Uuid, Set<Integer>> targetAssignment(String memberId) {
        return targetAssignment.getOrDefault(memberId, Map.of());
    }

    /** Sets one member's target assignment (replaying a record). */
    public void setTargetAssignment(String memberId, Map<Uuid, Set<Integer>> partitions) {
        targetAssignment.put(memberId, Map.copyOf(partitions));
    }

    /** Installs a new target assignment computed for {@code epoch}. */
    public void setTargetAssignment(int epoch, GroupAssignment assignment) {
        targetAssignment.clear();
        assignment.members().forEach(targetAssignment::put);
        targetAssignmentEpoch = epoch;
    }

    /** Sets the target assignment epoch (replaying a record). */
    public void setTargetAssignmentEpoch(int epoch) {
        targetAssignmentEpoch = epoch;
    }

    /** Whether some member subscribes to {@code topic}, by name or by a regular expression that matched it. */
    public boolean isSubscribedToTopic(String topic) {
        return subscribedTopicNames().contains(topic);
    }

    /** The topics some member subscribes to: by name, and those the subscribed regular expressions matched. */
    public Set<String> subscribedTopicNames() {
        Set<String> names = new HashSet<>(subscribedTopicCounts.keySet());
        subscribedRegexCounts.keySet().forEach(regex -> {
            ResolvedRegularExpression resolved = resolvedRegexes.get(regex);
            if (resolved != null) {
                names.addAll(resolved.topics());
            }
        });
        return Collections.unmodifiableSet(names);
    }

    /** How many members subscribe to {@code regex}. */
    public int numSubscribedMembers(String regex) {
        return subscribedRegexCounts.getOrDefault(regex, 0);
    }

    /** The regular expressions some member subscribes to. */
    public Set<String> subscribedRegularExpressions() {
        return Collections.unmodifiableSet(new HashSet<>(subscribedRegexCounts.keySet()));
    }

    /** What {@code regex} matched when last resolved, or null when it has not been. */
    public ResolvedRegularExpression resolvedRegularExpression(String regex) {
        return resolvedRegexes.get(regex);
    }

    /** The resolved regular expressions, by expression. */
    public Map<String, ResolvedRegularExpression> resolvedRegularExpressions() {
        return Collections.unmodifiableMap(new HashMap<>(resolvedRegexes));
    }

    /** Records what {@code regex} matched. */
    public void setResolvedRegularExpression(String regex, ResolvedRegularExpression resolved) {
        resolvedRegexes.put(regex, resolved);
    }

    /** Forgets what {@code regex} matched (no member subscribes to it any more). */
    public void removeResolvedRegularExpression(String regex) {
        resolvedRegexes.remove(regex);
    }

    /** When the regular expressions were last resolved, or -1 for never. */
    public long lastRegexRefreshMs() {
        return resolvedRegexes.values().stream().mapToLong(ResolvedRegularExpression::timestampMs).max().orElse(-1L);
    }

    /** The metadata offset the regular expressions were last resolved at, or -1 for never. */
    public long lastRegexVersion() {
        return resolvedRegexes.values().stream().mapToLong(ResolvedRegularExpression::version).max().orElse(-1L);
    }

    /**
     * The assignor of the group: the one most members ask for (ties to the lowest name), else {@code defaultName}
     * (the first of {@code group.consumer.assignors}), as Kafka chooses it.
     */
    public String preferredAssignor(String defaultName) {
        Map<String, Integer> votes = new TreeMap<>();
        members.values().forEach(m -> {
            if (m.serverAssignorName() != null) {
                votes.merge(m.serverAssignorName(), 1, Integer::sum);
            }
        });
        String best = defaultName;
        int bestVotes = 0;
        for (Map.Entry<String, Integer> vote : votes.entrySet()) {
            if (vote.getValue() > bestVotes) {
                best = vote.getKey();
                bestVotes = vote.getValue();
            }
        }
        return best;
    }

    /**
     * A new target assignment by {@code assignor} for the current members, their subscriptions resolved against
     * {@code topics} (names of topics that do not exist are left out) and their current target as the sticky hint.
     */
    public GroupAssignment computeTargetAssignment(PartitionAssignor assignor, ConsumerGroupTopics topics) {
        Map<String, MemberSubscription> subscriptions = new HashMap<>();
        for (ConsumerGroupMember member : members.values()) {
            Set<Uuid> topicIds = new HashSet<>();
            Set<String> names = new HashSet<>(member.subscribedTopicNames());
            ResolvedRegularExpression resolved = member.subscribedTopicRegex() == null ? null
                : resolvedRegexes.get(member.subscribedTopicRegex());
            if (resolved != null) {
                names.addAll(resolved.topics());
            }
            for (String name : names) {
                Uuid id = topics.topicId(name);
                if (id != null) {
                    topicIds.add(id);
                }
            }
            subscriptions.put(member.memberId(), new MemberSubscription(member.instanceId(), member.rackId(),
                topicIds, targetAssignment(member.memberId())));
        }
        return assignor.assign(new GroupSpec(subscriptions), topics);
    }

    /**
     * Kafka's check of an OffsetCommit or TxnOffsetCommit against this group: a commit without a member epoch
     * (negative: the admin client, or a consumer outside group management) is accepted while the group is empty;
     * otherwise it must name a member (UNKNOWN_MEMBER_ID), a non-transactional commit must use OffsetCommit v9 or
     * later (UNSUPPORTED_VERSION), and the epoch must be the member's (STALE_MEMBER_EPOCH).
     */
    public Errors validateOffsetCommit(String memberId, int memberEpoch, boolean transactional, short apiVersion) {
        if (memberEpoch < 0 && members.isEmpty()) {
            return Errors.NONE;
        }
        ConsumerGroupMember member = memberId == null ? null : members.get(memberId);
        if (member == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (!transactional && !member.useClassicProtocol() && apiVersion < 9) {
            return Errors.UNSUPPORTED_VERSION;
        }
        return checkEpoch(member, memberEpoch);
    }

    /** A classic member commits with its generation (ILLEGAL_GENERATION), a consumer member with its epoch. */
    private static Errors checkEpoch(ConsumerGroupMember member, int epoch) {
        if (epoch == member.memberEpoch()) {
            return Errors.NONE;
        }
        return member.useClassicProtocol() ? Errors.ILLEGAL_GENERATION : Errors.STALE_MEMBER_EPOCH;
    }

    /**
     * Kafka's check of an OffsetFetch against this group: a fetch without member id and epoch (the admin client,
     * older clients) is accepted; otherwise it must name a member (UNKNOWN_MEMBER_ID) at its epoch
     * (STALE_MEMBER_EPOCH).
     */
    public Errors validateOffsetFetch(String memberId, int memberEpoch) {
        if (memberId == null && memberEpoch < 0) {
            return Errors.NONE;
        }
        ConsumerGroupMember member = memberId == null ? null : members.get(memberId);
        if (member == null) {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        return checkEpoch(member, memberEpoch);
    }

    /** DeleteGroups: only an Empty group may be deleted (NON_EMPTY_GROUP). */
    public Errors validateDeleteGroup() {
        return state() == ConsumerGroupState.EMPTY ? Errors.NONE : Errors.NON_EMPTY_GROUP;
    }

    private void countSubscriptions(ConsumerGroupMember member, int delta) {
        for (String topic : member.subscribedTopicNames()) {
            subscribedTopicCounts.merge(topic, delta, (a, b) -> a + b == 0 ? null : a + b);
        }
        if (member.subscribedTopicRegex() != null) {
            subscribedRegexCounts.merge(member.subscribedTopicRegex(), delta, (a, b) -> a + b == 0 ? null : a + b);
        }
    }

    private void addPartitionEpochs(ConsumerGroupMember member) {
        addPartitionEpochs(member.assignedPartitions(), member.memberEpoch());
        addPartitionEpochs(member.partitionsPendingRevocation(), member.memberEpoch());
    }

    private void addPartitionEpochs(Map<Uuid, Set<Integer>> partitions, int epoch) {
        partitions.forEach((topicId, ids) -> {
            Map<Integer, Integer> epochs = partitionEpochs.computeIfAbsent(topicId, id -> new HashMap<>());
            ids.forEach(partition -> epochs.put(partition, epoch));
        });
    }

    /** A partition the member would own that has an owner now, as "topicId-partition", or null. */
    private String firstOwnedPartition(ConsumerGroupMember member) {
        for (Map<Uuid, Set<Integer>> partitions : List.of(member.assignedPartitions(),
                member.partitionsPendingRevocation())) {
            for (Map.Entry<Uuid, Set<Integer>> topic : partitions.entrySet()) {
                for (int partition : topic.getValue()) {
                    if (partitionEpoch(topic.getKey(), partition) != MemberReconciler.NO_EPOCH) {
                        return topic.getKey() + "-" + partition;
                    }
                }
            }
        }
        return null;
    }

    private void removePartitionEpochs(ConsumerGroupMember member) {
        for (Map<Uuid, Set<Integer>> partitions : List.of(member.assignedPartitions(),
                member.partitionsPendingRevocation())) {
            partitions.forEach((topicId, ids) -> {
                Map<Integer, Integer> epochs = partitionEpochs.get(topicId);
                if (epochs != null) {
                    ids.forEach(epochs::remove);
                    if (epochs.isEmpty()) {
                        partitionEpochs.remove(topicId);
                    }
                }
            });
        }
    }
}
