package io.cairn.broker.group;

import io.cairn.wire.message.DescribeGroupsResponseData;
import io.cairn.wire.message.JoinGroupRequestData.JoinGroupRequestProtocol;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.SyncGroupResponseData;

import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One member of a classic group: its ids, client, timeouts, the protocols it supports (name to metadata, in the
 * member's order of preference), its current assignment and the JoinGroup or SyncGroup call it is waiting on.
 *
 * <p>Not thread-safe: used only on the coordinator thread.
 */
public final class ClassicGroupMember {

    private static final byte[] EMPTY_BYTES = new byte[0];

    private final String memberId;
    private final String groupInstanceId;
    private final String clientId;
    private final String clientHost;
    private final String protocolType;
    private int rebalanceTimeoutMs;
    private int sessionTimeoutMs;
    private Map<String, byte[]> protocols;
    private byte[] assignment = EMPTY_BYTES;
    private CompletableFuture<JoinGroupResponseData> awaitingJoin;
    private CompletableFuture<SyncGroupResponseData> awaitingSync;
    private boolean isNew;

    /**
     * A member.
     *
     * @param memberId           the member id the coordinator gave it
     * @param groupInstanceId    the static member's group.instance.id, or null for a dynamic member
     * @param clientId           the client id of its JoinGroup
     * @param clientHost         the client's address
     * @param rebalanceTimeoutMs how long a rebalance waits for it to rejoin
     * @param sessionTimeoutMs   how long it may go without a heartbeat
     * @param protocolType       the protocol type ("consumer", "connect", ...)
     * @param protocols          protocol name to metadata, in the member's order of preference (copied)
     */
    public ClassicGroupMember(String memberId, String groupInstanceId, String clientId, String clientHost,
                              int rebalanceTimeoutMs, int sessionTimeoutMs, String protocolType,
                              Map<String, byte[]> protocols) {
        this.memberId = Objects.requireNonNull(memberId);
        this.groupInstanceId = groupInstanceId;
        this.clientId = clientId == null ? "" : clientId;
        this.clientHost = clientHost == null ? "" : clientHost;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.protocolType = protocolType == null ? "" : protocolType;
        this.protocols = new LinkedHashMap<>(protocols);
    }

    /** The protocols of a JoinGroup request as name to metadata in the request's order; a repeated name keeps its
     *  first entry. */
    public static Map<String, byte[]> protocolMap(List<JoinGroupRequestProtocol> protocols) {
        Map<String, byte[]> map = new LinkedHashMap<>();
        for (JoinGroupRequestProtocol protocol : protocols) {
            map.putIfAbsent(protocol.name(), protocol.metadata() == null ? EMPTY_BYTES : protocol.metadata());
        }
        return map;
    }

    public String memberId() {
        return memberId;
    }

    /** The group.instance.id of a static member, or null. */
    public String groupInstanceId() {
        return groupInstanceId;
    }

    public boolean isStatic() {
        return groupInstanceId != null;
    }

    public String clientId() {
        return clientId;
    }

    public String clientHost() {
        return clientHost;
    }

    public int rebalanceTimeoutMs() {
        return rebalanceTimeoutMs;
    }

    public int sessionTimeoutMs() {
        return sessionTimeoutMs;
    }

    void setTimeouts(int rebalanceTimeoutMs, int sessionTimeoutMs) {
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.sessionTimeoutMs = sessionTimeoutMs;
    }

    public String protocolType() {
        return protocolType;
    }

    /** Protocol name to metadata, in the member's order of preference (read-only view). */
    public Map<String, byte[]> protocols() {
        return Collections.unmodifiableMap(protocols);
    }

    void setProtocols(Map<String, byte[]> protocols) {
        this.protocols = new LinkedHashMap<>(protocols);
    }

    /** The member's metadata for {@code protocol}; empty if it does not support it. */
    public byte[] metadata(String protocol) {
        byte[] metadata = protocol == null ? null : protocols.get(protocol);
        return metadata == null ? EMPTY_BYTES : metadata;
    }

    /** The member's most preferred protocol among {@code candidates}, or null if it supports none. */
    String vote(Set<String> candidates) {
        for (String name : protocols.keySet()) {
            if (candidates.contains(name)) {
                return name;
            }
        }
        return null;
    }

    /** Whether {@code other} (name to metadata, in order) is exactly what the member already supports. */
    boolean matches(Map<String, byte[]> other) {
        if (other.size() != protocols.size()) {
            return false;
        }
        Iterator<Map.Entry<String, byte[]>> mine = protocols.entrySet().iterator();
        for (Map.Entry<String, byte[]> theirs : other.entrySet()) {
            Map.Entry<String, byte[]> entry = mine.next();
            if (!entry.getKey().equals(theirs.getKey()) || !Arrays.equals(entry.getValue(), theirs.getValue())) {
                return false;
            }
        }
        return true;
    }

    /** The member's current assignment (empty until the leader's first SyncGroup is stored). */
    public byte[] assignment() {
        return assignment;
    }

    void setAssignment(byte[] assignment) {
        this.assignment = assignment == null ? EMPTY_BYTES : assignment;
    }

    CompletableFuture<JoinGroupResponseData> awaitingJoin() {
        return awaitingJoin;
    }

    void setAwaitingJoin(CompletableFuture<JoinGroupResponseData> future) {
        this.awaitingJoin = future;
    }

    CompletableFuture<SyncGroupResponseData> awaitingSync() {
        return awaitingSync;
    }

    void setAwaitingSync(CompletableFuture<SyncGroupResponseData> future) {
        this.awaitingSync = future;
    }

    /** Whether a JoinGroup of this member is parked until the rebalance completes. */
    public boolean isAwaitingJoin() {
        return awaitingJoin != null;
    }

    /** Whether a SyncGroup of this member is parked until the assignment is stored. */
    public boolean isAwaitingSync() {
        return awaitingSync != null;
    }

    /** Whether the member joined during the current rebalance and has not yet had a JoinGroup response. */
    boolean isNew() {
        return isNew;
    }

    void setNew(boolean isNew) {
        this.isNew = isNew;
    }

    /**
     * Whether the member counts as alive when its session timer fires: a member parked in JoinGroup or SyncGroup
     * is, unless it is new (new members are expired even while they wait to join).
     */
    boolean hasSatisfiedHeartbeat() {
        return !isNew && (isAwaitingJoin() || isAwaitingSync());
    }

    /** The member as DescribeGroups reports it; {@code protocol} null leaves out the metadata (not Stable). */
    DescribeGroupsResponseData.DescribedGroupMember describe(String protocol) {
        return new DescribeGroupsResponseData.DescribedGroupMember()
                .setMemberId(memberId)
                .setGroupInstanceId(groupInstanceId)
                .setClientId(clientId)
                .setClientHost(clientHost)
                .setMemberMetadata(protocol == null ? EMPTY_BYTES : metadata(protocol))
                .setMemberAssignment(assignment);
    }

    @Override
    public String toString() {
        return "ClassicGroupMember(memberId=" + memberId + ", groupInstanceId=" + groupInstanceId
                + ", clientId=" + clientId + ", clientHost=" + clientHost + ", sessionTimeoutMs=" + sessionTimeoutMs
                + ", rebalanceTimeoutMs=" + rebalanceTimeoutMs + ", protocols=" + protocols.keySet() + ")";
    }
}
