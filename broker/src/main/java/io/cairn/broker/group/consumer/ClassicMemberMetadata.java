package io.cairn.broker.group.consumer;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a consumer group keeps of a member that speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat,
 * LeaveGroup) rather than ConsumerGroupHeartbeat: its session timeout and the protocols of its last JoinGroup (Kafka's
 * {@code ConsumerGroupMemberMetadataValue.ClassicMemberMetadata}, written with the member's subscription record).
 * Immutable.
 *
 * @param sessionTimeoutMs   the member's {@code session.timeout.ms}: it is removed when it does not heartbeat within it
 * @param supportedProtocols the protocols it joined with (names of client-side assignors, each with the embedded
 *                           consumer protocol's subscription), in its order of preference
 */
public record ClassicMemberMetadata(int sessionTimeoutMs, List<Protocol> supportedProtocols) {

    /** One protocol of a JoinGroup: its name and metadata (a serialized ConsumerProtocolSubscription). */
    public record Protocol(String name, byte[] metadata) {
        public Protocol {
            Objects.requireNonNull(name);
            metadata = metadata == null ? new byte[0] : metadata.clone();
        }

        @Override
        public byte[] metadata() {
            return metadata.clone();
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Protocol that && name.equals(that.name) && Arrays.equals(metadata, that.metadata);
        }

        @Override
        public int hashCode() {
            return 31 * name.hashCode() + Arrays.hashCode(metadata);
        }

        @Override
        public String toString() {
            return "Protocol(" + name + ", " + metadata.length + " bytes)";
        }
    }

    public ClassicMemberMetadata {
        supportedProtocols = List.copyOf(supportedProtocols);
        if (supportedProtocols.isEmpty()) {
            throw new IllegalArgumentException("A classic member supports at least one protocol");
        }
    }

    /** The names of its protocols. */
    public Set<String> protocolNames() {
        Set<String> names = new LinkedHashSet<>();
        supportedProtocols.forEach(p -> names.add(p.name()));
        return names;
    }

    /**
     * The protocol the member is told in its JoinGroup response and must name in its SyncGroup: its first (Kafka
     * answers the first protocol of the member).
     */
    public Protocol protocol() {
        return supportedProtocols.get(0);
    }
}
