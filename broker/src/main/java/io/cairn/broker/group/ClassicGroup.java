package io.cairn.broker.group;

import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ConsumerProtocolSubscription;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.JoinGroupResponseData.JoinGroupResponseMember;
import io.cairn.wire.message.SyncGroupResponseData;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.netty.buffer.Unpooled;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The state of one classic group: its state and when it was entered, generation, protocol type and chosen
 * protocol, leader, members (in join order), members that were given an id and must rejoin with it (pending),
 * members whose SyncGroup is still awaited, static members (group.instance.id to member id), and the topics its
 * consumer-protocol members subscribe to. Kafka's {@code ClassicGroup} semantics; the protocol flow that drives it
 * is {@link ClassicGroupManager}.
 *
 * <p>Not thread-safe: used only on the coordinator thread.
 */
public final class ClassicGroup {

    /** The protocol type of Kafka consumers, whose subscriptions this class can read. */
    public static final String CONSUMER_PROTOCOL_TYPE = "consumer";

    private static final Logger LOGGER = LogManager.getLogger(ClassicGroup.class);

    private final String groupId;
    private ClassicGroupState state;
    private ClassicGroupState previousState;
    private long stateTimestampMs;
    private int generationId;
    private String protocolType;
    private String protocolName;
    private String leaderId;
    private final Map<String, ClassicGroupMember> members = new LinkedHashMap<>();
    private final Set<String> pendingJoinMembers = new LinkedHashSet<>();
    private final Set<String> pendingSyncMembers = new LinkedHashSet<>();
    private final Map<String, String> staticMembers = new HashMap<>();
    private final Map<String, Integer> supportedProtocols = new HashMap<>();
    private int numMembersAwaitingJoin;
    private boolean newMemberAdded;
    private Set<String> subscribedTopics;

    /** A new group with no members, Empty, at generation 0. */
    public ClassicGroup(String groupId, long nowMs) {
        this(groupId, ClassicGroupState.EMPTY, nowMs, 0, null, null, null);
    }

    private ClassicGroup(String groupId, ClassicGroupState state, long stateTimestampMs, int generationId,
                         String protocolType, String protocolName, String leaderId) {
        this.groupId = groupId;
        this.state = state;
        this.previousState = state;
        this.stateTimestampMs = stateTimestampMs;
        this.generationId = generationId;
        this.protocolType = protocolType;
        this.protocolName = protocolName;
        this.leaderId = leaderId;
    }

    /**
     * Rebuilds a group from its latest metadata record, as a shard load does: Stable if the record has members,
     * Empty otherwise; every member supports exactly the stored protocol with its stored subscription and keeps its
     * stored assignment; a record without a rebalance timeout (version 0) uses the session timeout.
     *
     * @param nowMs the state timestamp when the record has none
     */
    public static ClassicGroup fromRecord(String groupId, GroupMetadataValue value, long nowMs) {
        String type = value.protocolType() == null || value.protocolType().isEmpty() ? null : value.protocolType();
        ClassicGroupState state = value.members().isEmpty() ? ClassicGroupState.EMPTY : ClassicGroupState.STABLE;
        long timestamp = value.currentStateTimestamp() == -1 ? nowMs : value.currentStateTimestamp();
        ClassicGroup group = new ClassicGroup(groupId, state, timestamp, value.generation(), type,
                value.protocol(), value.leader());
        for (GroupMetadataValue.MemberMetadata stored : value.members()) {
            int rebalanceTimeout = stored.rebalanceTimeout() == -1 ? stored.sessionTimeout()
                    : stored.rebalanceTimeout();
            Map<String, byte[]> protocols = new LinkedHashMap<>();
            if (value.protocol() != null) {
                protocols.put(value.protocol(), stored.subscription());
            }
            ClassicGroupMember member = new ClassicGroupMember(stored.memberId(), stored.groupInstanceId(),
                    stored.clientId(), stored.clientHost(), rebalanceTimeout, stored.sessionTimeout(),
                    value.protocolType(), protocols);
            member.setAssignment(stored.assignment());
            group.add(member, null);
        }
        if (group.leaderId != null && !group.members.containsKey(group.leaderId)) {
            group.leaderId = group.members.isEmpty() ? null : group.members.keySet().iterator().next();
        }
        group.subscribedTopics = group.computeSubscribedTopics();
        return group;
    }

    /**
     * The group's metadata record value: generation, protocol type ("" if none), chosen protocol, leader, state
     * timestamp and every member with its subscription for the chosen protocol and its assignment.
     *
     * @param assignment member id to assignment, or null to write each member's current assignment; a member
     *                   missing from it is written with an empty assignment
     * @param nowMs      the state timestamp if the group has none
     */
    public GroupMetadataValue toRecordValue(Map<String, byte[]> assignment, long nowMs) {
        List<GroupMetadataValue.MemberMetadata> stored = new ArrayList<>(members.size());
        for (ClassicGroupMember member : members.values()) {
            byte[] memberAssignment = assignment == null ? member.assignment() : assignment.get(member.memberId());
            stored.add(new GroupMetadataValue.MemberMetadata()
                    .setMemberId(member.memberId())
                    .setGroupInstanceId(member.groupInstanceId())
                    .setClientId(member.clientId())
                    .setClientHost(member.clientHost())
                    .setRebalanceTimeout(member.rebalanceTimeoutMs())
                    .setSessionTimeout(member.sessionTimeoutMs())
                    .setSubscription(member.metadata(protocolName))
                    .setAssignment(memberAssignment == null ? new byte[0] : memberAssignment));
        }
        return new GroupMetadataValue()
                .setProtocolType(protocolType == null ? "" : protocolType)
                .setGeneration(generationId)
                .setProtocol(protocolName)
                .setLeader(leaderId)
                .setCurrentStateTimestamp(stateTimestampMs > 0 ? stateTimestampMs : nowMs)
                .setMembers(stored);
    }

    public String groupId() {
        return groupId;
    }

    public ClassicGroupState state() {
        return state;
    }

    /** The state before the last transition. */
    public ClassicGroupState previousState() {
        return previousState;
    }

    public boolean isInState(ClassicGroupState candidate) {
        return state == candidate;
    }

    /** When the group entered its current state (ms since the epoch). */
    public long stateTimestampMs() {
        return stateTimestampMs;
    }

    public int generationId() {
        return generationId;
    }

    /** The protocol type ("consumer", ...), or null while the group never had a member. */
    public String protocolType() {
        return protocolType;
    }

    /** The protocol chosen for the current generation, or null. */
    public String protocolName() {
        return protocolName;
    }

    /** The leader's member id, or null. */
    public String leaderId() {
        return leaderId;
    }

    public boolean isLeader(String memberId) {
        return leaderId != null && leaderId.equals(memberId);
    }

    /** The members in join order (read-only view). */
    public Collection<ClassicGroupMember> members() {
        return Collections.unmodifiableCollection(members.values());
    }

    /** The member with this id, or null. */
    public ClassicGroupMember member(String memberId) {
        return members.get(memberId);
    }

    public boolean hasMember(String memberId) {
        return memberId != null && members.containsKey(memberId);
    }

    public int numMembers() {
        return members.size();
    }

    /** The member id a static member's group.instance.id maps to, or null. */
    public String staticMemberId(String groupInstanceId) {
        return groupInstanceId == null ? null : staticMembers.get(groupInstanceId);
    }

    public boolean hasStaticMember(String groupInstanceId) {
        return staticMemberId(groupInstanceId) != null;
    }

    /** Moves to {@code target}; an invalid transition is a bug. */
    void transitionTo(ClassicGroupState target, long nowMs) {
        if (!target.validPreviousStates().contains(state)) {
            throw new IllegalStateException("Group " + groupId + " should be in one of "
                    + target.validPreviousStates() + " to move to " + target + " but is in " + state);
        }
        previousState = state;
        state = target;
        stateTimestampMs = nowMs;
    }

    /** Whether a rebalance may start from the current state. */
    boolean canRebalance() {
        return ClassicGroupState.PREPARING_REBALANCE.validPreviousStates().contains(state);
    }

    /**
     * Adds a member; the first member sets the protocol type and the first member of a leaderless group leads.
     *
     * @param future its parked JoinGroup, or null
     */
    void add(ClassicGroupMember member, CompletableFuture<JoinGroupResponseData> future) {
        if (member.isStatic()) {
            staticMembers.put(member.groupInstanceId(), member.memberId());
        }
        if (members.isEmpty()) {
            protocolType = member.protocolType();
        }
        if (leaderId == null) {
            leaderId = member.memberId();
        }
        members.put(member.memberId(), member);
        incrementProtocols(member);
        member.setAwaitingJoin(future);
        if (future != null) {
            numMembersAwaitingJoin++;
        }
        pendingJoinMembers.remove(member.memberId());
    }

    /** Removes a member or pending member; a removed leader is replaced by the first remaining member. */
    void remove(String memberId) {
        ClassicGroupMember removed = members.remove(memberId);
        if (removed != null) {
            decrementProtocols(removed);
            if (removed.isAwaitingJoin()) {
                numMembersAwaitingJoin--;
            }
            if (removed.isStatic()) {
                staticMembers.remove(removed.groupInstanceId(), memberId);
            }
        }
        if (isLeader(memberId)) {
            leaderId = members.isEmpty() ? null : members.keySet().iterator().next();
        }
        pendingJoinMembers.remove(memberId);
        pendingSyncMembers.remove(memberId);
    }

    /**
     * Updates a member's protocols and timeouts from a new JoinGroup and parks (or, with null, unparks) its join.
     *
     * @return the JoinGroup future this one replaces (the client resent it), to be answered by the caller; or null
     */
    CompletableFuture<JoinGroupResponseData> updateMember(ClassicGroupMember member, Map<String, byte[]> protocols,
                                                          int rebalanceTimeoutMs, int sessionTimeoutMs,
                                                          CompletableFuture<JoinGroupResponseData> future) {
        decrementProtocols(member);
        member.setProtocols(protocols);
        incrementProtocols(member);
        member.setTimeouts(rebalanceTimeoutMs, sessionTimeoutMs);
        CompletableFuture<JoinGroupResponseData> previous = member.awaitingJoin();
        if (future != null && previous == null) {
            numMembersAwaitingJoin++;
        } else if (future == null && previous != null) {
            numMembersAwaitingJoin--;
        }
        member.setAwaitingJoin(future);
        return previous == future ? null : previous;
    }

    /**
     * Replaces a static member's old member id with a new one (a restarted static member): the old member's
     * parked JoinGroup or SyncGroup is answered FENCED_INSTANCE_ID, the new member keeps the old one's client,
     * timeouts, protocols and assignment, and takes over the leadership if the old one led.
     */
    ClassicGroupMember replaceStaticMember(String groupInstanceId, String oldMemberId, String newMemberId) {
        ClassicGroupMember old = members.remove(oldMemberId);
        if (old == null) {
            throw new IllegalStateException("Cannot replace unknown static member " + oldMemberId + " of group "
                    + groupId);
        }
        completeJoin(old, new JoinGroupResponseData().setMemberId(oldMemberId).setProtocolName(null)
                .setErrorCode(Errors.FENCED_INSTANCE_ID.code()));
        completeSync(old, new SyncGroupResponseData().setAssignment(new byte[0])
                .setErrorCode(Errors.FENCED_INSTANCE_ID.code()));
        ClassicGroupMember replacement = new ClassicGroupMember(newMemberId, old.groupInstanceId(), old.clientId(),
                old.clientHost(), old.rebalanceTimeoutMs(), old.sessionTimeoutMs(), old.protocolType(),
                old.protocols());
        replacement.setAssignment(old.assignment());
        members.put(newMemberId, replacement);
        if (isLeader(oldMemberId)) {
            leaderId = newMemberId;
        }
        pendingSyncMembers.remove(oldMemberId);
        staticMembers.put(groupInstanceId, newMemberId);
        return replacement;
    }

    /** Answers the member's parked JoinGroup, if any; whether there was one. */
    boolean completeJoin(ClassicGroupMember member, JoinGroupResponseData response) {
        CompletableFuture<JoinGroupResponseData> future = member.awaitingJoin();
        if (future == null) {
            return false;
        }
        member.setAwaitingJoin(null);
        numMembersAwaitingJoin--;
        future.complete(response);
        return true;
    }

    /** Answers the member's parked SyncGroup, if any; whether there was one. */
    boolean completeSync(ClassicGroupMember member, SyncGroupResponseData response) {
        CompletableFuture<SyncGroupResponseData> future = member.awaitingSync();
        if (future == null) {
            return false;
        }
        member.setAwaitingSync(null);
        future.complete(response);
        return true;
    }

    /** Registers a member id handed out with MEMBER_ID_REQUIRED; the member must rejoin with it. */
    void addPendingMember(String memberId) {
        pendingJoinMembers.add(memberId);
    }

    public boolean isPendingMember(String memberId) {
        return pendingJoinMembers.contains(memberId);
    }

    /** Member ids handed out with MEMBER_ID_REQUIRED that have not rejoined yet (read-only view). */
    public Set<String> pendingMembers() {
        return Collections.unmodifiableSet(pendingJoinMembers);
    }

    void addPendingSyncMember(String memberId) {
        pendingSyncMembers.add(memberId);
    }

    void removePendingSyncMember(String memberId) {
        pendingSyncMembers.remove(memberId);
    }

    Set<String> pendingSyncMembers() {
        return Collections.unmodifiableSet(pendingSyncMembers);
    }

    boolean hasReceivedSyncFromAllMembers() {
        return pendingSyncMembers.isEmpty();
    }

    /**
     * Member's answer to "which error does this request get": NONE, UNKNOWN_MEMBER_ID (no such member, or a static
     * instance id the group does not know) or FENCED_INSTANCE_ID (the instance id maps to another member id).
     */
    Errors validateMember(String memberId, String groupInstanceId) {
        if (groupInstanceId != null) {
            String existing = staticMembers.get(groupInstanceId);
            if (existing == null) {
                return Errors.UNKNOWN_MEMBER_ID;
            }
            if (!existing.equals(memberId)) {
                LOGGER.info("Member {} with group instance id {} of group {} is fenced by member {}", memberId,
                        groupInstanceId, groupId, existing);
                return Errors.FENCED_INSTANCE_ID;
            }
        }
        return hasMember(memberId) ? Errors.NONE : Errors.UNKNOWN_MEMBER_ID;
    }

    /**
     * The checks a member's SyncGroup and Heartbeat share: COORDINATOR_NOT_AVAILABLE for a dead group, then
     * {@link #validateMember}'s answer, then ILLEGAL_GENERATION when the generation is not the group's.
     */
    Errors validateGeneration(String memberId, String groupInstanceId, int requestGeneration) {
        if (isInState(ClassicGroupState.DEAD)) {
            return Errors.COORDINATOR_NOT_AVAILABLE;
        }
        Errors error = validateMember(memberId, groupInstanceId);
        if (error != Errors.NONE) {
            return error;
        }
        return requestGeneration != generationId() ? Errors.ILLEGAL_GENERATION : Errors.NONE;
    }

    /**
     * Whether a member with this protocol type and these protocols may join: an Empty group takes any non-empty
     * type with at least one protocol; otherwise the type must match and one of the protocols must be supported by
     * every current member.
     */
    boolean supportsProtocols(String memberProtocolType, Set<String> memberProtocols) {
        if (state == ClassicGroupState.EMPTY) {
            return memberProtocolType != null && !memberProtocolType.isEmpty() && !memberProtocols.isEmpty();
        }
        if (protocolType == null || !protocolType.equals(memberProtocolType)) {
            return false;
        }
        for (String name : memberProtocols) {
            if (supportedProtocols.getOrDefault(name, 0) == members.size()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The protocol for the next generation: among the protocols every member supports, the one most members
     * prefer (ties go to the leader's preference, then the name).
     */
    String selectProtocol() {
        if (members.isEmpty()) {
            throw new IllegalStateException("Cannot select a protocol for the empty group " + groupId);
        }
        Set<String> candidates = new HashSet<>();
        supportedProtocols.forEach((name, count) -> {
            if (count == members.size()) {
                candidates.add(name);
            }
        });
        Map<String, Integer> votes = new HashMap<>();
        for (ClassicGroupMember member : members.values()) {
            String vote = member.vote(candidates);
            if (vote != null) {
                votes.merge(vote, 1, Integer::sum);
            }
        }
        ClassicGroupMember leader = leaderId == null ? null : members.get(leaderId);
        List<String> order = new ArrayList<>(leader == null ? List.of() : leader.protocols().keySet());
        String best = null;
        for (Map.Entry<String, Integer> entry : votes.entrySet()) {
            if (best == null || isBetter(entry.getKey(), entry.getValue(), best, votes.get(best), order)) {
                best = entry.getKey();
            }
        }
        return best;
    }

    private static boolean isBetter(String name, int count, String best, int bestCount, List<String> order) {
        if (count != bestCount) {
            return count > bestCount;
        }
        int rank = order.indexOf(name);
        int bestRank = order.indexOf(best);
        if (rank != bestRank) {
            return bestRank < 0 || (rank >= 0 && rank < bestRank);
        }
        return name.compareTo(best) < 0;
    }

    /** Whether every member is parked in JoinGroup and no member id handed out is still awaited. */
    boolean hasAllMembersJoined() {
        return members.size() == numMembersAwaitingJoin && pendingJoinMembers.isEmpty();
    }

    int numAwaitingJoin() {
        return numMembersAwaitingJoin;
    }

    /** The members that have not rejoined during the current rebalance. */
    List<ClassicGroupMember> notYetRejoinedMembers() {
        List<ClassicGroupMember> result = new ArrayList<>();
        for (ClassicGroupMember member : members.values()) {
            if (!member.isAwaitingJoin()) {
                result.add(member);
            }
        }
        return result;
    }

    /**
     * Keeps the leader if it rejoined, else makes the first rejoined member the leader; false if no member
     * rejoined (or there is no leader).
     */
    boolean maybeElectNewJoinedLeader() {
        if (leaderId == null) {
            return false;
        }
        ClassicGroupMember leader = members.get(leaderId);
        if (leader != null && leader.isAwaitingJoin()) {
            return true;
        }
        for (ClassicGroupMember member : members.values()) {
            if (member.isAwaitingJoin()) {
                LOGGER.info("Group {} leader {} did not rejoin; member {} is the new leader", groupId, leaderId,
                        member.memberId());
                leaderId = member.memberId();
                return true;
            }
        }
        LOGGER.info("Group {} leader {} failed to join before the rebalance timeout; the group is leaderless",
                groupId, leaderId);
        return false;
    }

    /** Starts the next generation: CompletingRebalance with a chosen protocol, or Empty if no member is left. */
    void initNextGeneration(long nowMs) {
        generationId++;
        if (!members.isEmpty()) {
            protocolName = selectProtocol();
            subscribedTopics = computeSubscribedTopics();
            transitionTo(ClassicGroupState.COMPLETING_REBALANCE, nowMs);
        } else {
            protocolName = null;
            subscribedTopics = computeSubscribedTopics();
            transitionTo(ClassicGroupState.EMPTY, nowMs);
        }
        pendingSyncMembers.clear();
    }

    /** The largest rebalance timeout of the members (how long a rebalance waits), 0 without members. */
    int rebalanceTimeoutMs() {
        int max = 0;
        for (ClassicGroupMember member : members.values()) {
            max = Math.max(max, member.rebalanceTimeoutMs());
        }
        return max;
    }

    /** The member list the leader gets in its JoinGroup response: ids and metadata for the chosen protocol. */
    List<JoinGroupResponseMember> leaderMemberList() {
        List<JoinGroupResponseMember> list = new ArrayList<>(members.size());
        for (ClassicGroupMember member : members.values()) {
            list.add(new JoinGroupResponseMember()
                    .setMemberId(member.memberId())
                    .setGroupInstanceId(member.groupInstanceId())
                    .setMetadata(member.metadata(protocolName)));
        }
        return list;
    }

    /** Member id to current assignment. */
    Map<String, byte[]> currentAssignment() {
        Map<String, byte[]> assignment = new HashMap<>();
        members.values().forEach(member -> assignment.put(member.memberId(), member.assignment()));
        return assignment;
    }

    /** A fresh member id: the instance id (static) or client id, a dash and a random UUID. */
    static String newMemberId(String clientId, String groupInstanceId) {
        String prefix = groupInstanceId != null ? groupInstanceId : clientId;
        return prefix + "-" + UUID.randomUUID();
    }

    boolean newMemberAdded() {
        return newMemberAdded;
    }

    void setNewMemberAdded(boolean newMemberAdded) {
        this.newMemberAdded = newMemberAdded;
    }

    /** Whether the group uses Kafka's consumer protocol. */
    public boolean usesConsumerProtocol() {
        return CONSUMER_PROTOCOL_TYPE.equals(protocolType);
    }

    /**
     * The topics the members subscribe to, when known: a consumer-protocol group whose subscriptions could be read
     * (empty for an Empty consumer group); unknown for other protocol types or unreadable subscriptions.
     */
    public Optional<Set<String>> subscribedTopics() {
        return Optional.ofNullable(subscribedTopics).map(Collections::unmodifiableSet);
    }

    /** Whether a member subscribes to {@code topic}; when unknown, whether the group uses the consumer protocol. */
    public boolean isSubscribedToTopic(String topic) {
        return subscribedTopics != null ? subscribedTopics.contains(topic) : usesConsumerProtocol();
    }

    private Set<String> computeSubscribedTopics() {
        if (!usesConsumerProtocol()) {
            return null;
        }
        if (members.isEmpty()) {
            return new HashSet<>();
        }
        if (protocolName == null) {
            return null;
        }
        Set<String> topics = new HashSet<>();
        for (ClassicGroupMember member : members.values()) {
            try {
                ByteBufAccessor reader = new ByteBufAccessor(Unpooled.wrappedBuffer(member.metadata(protocolName)));
                reader.readShort();
                // Version 0 is a prefix of every later version of the consumer protocol's subscription.
                topics.addAll(new ConsumerProtocolSubscription(reader, (short) 0).topics());
            } catch (RuntimeException e) {
                LOGGER.warn("Group {} member {} sent a consumer subscription that cannot be read: {}", groupId,
                        member.memberId(), e.toString());
                return null;
            }
        }
        return topics;
    }

    private void incrementProtocols(ClassicGroupMember member) {
        member.protocols().keySet().forEach(name -> supportedProtocols.merge(name, 1, Integer::sum));
    }

    private void decrementProtocols(ClassicGroupMember member) {
        member.protocols().keySet().forEach(name -> supportedProtocols.computeIfPresent(name,
                (key, count) -> count > 1 ? count - 1 : null));
    }

    @Override
    public String toString() {
        return "ClassicGroup(groupId=" + groupId + ", state=" + state + ", generationId=" + generationId
                + ", protocolType=" + protocolType + ", protocolName=" + protocolName + ", leaderId=" + leaderId
                + ", members=" + members.keySet() + ")";
    }
}
