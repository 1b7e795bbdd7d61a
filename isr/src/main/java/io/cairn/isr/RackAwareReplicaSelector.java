package io.cairn.isr;

import java.util.List;

/**
 * The rule of Kafka's {@code org.apache.kafka.common.replica.RackAwareReplicaSelector} (KIP-392), the one
 * {@code replica.selector.class} Cairn accepts: a client that names a rack reads from a replica in that rack; the
 * leader when it is there itself or when no candidate is, else the most caught-up candidate of that rack
 * ({@link ReplicaView#MOST_CAUGHT_UP}). A client without a rack reads from the leader.
 *
 * <p>Stateless and thread-safe.
 */
public final class RackAwareReplicaSelector {

    /** The class name Kafka users put in {@code replica.selector.class}. */
    public static final String KAFKA_CLASS_NAME = "org.apache.kafka.common.replica.RackAwareReplicaSelector";

    /**
     * The replica {@code clientRack} should read from, among {@code candidates} (the replicas eligible to serve the
     * fetch offset; the leader among them) and {@code leader}.
     */
    public ReplicaView select(String clientRack, List<ReplicaView> candidates, ReplicaView leader) {
        if (clientRack == null || clientRack.isEmpty()) {
            return leader;
        }
        List<ReplicaView> sameRack = candidates.stream().filter(r -> clientRack.equals(r.rack())).toList();
        if (sameRack.isEmpty() || sameRack.contains(leader)) {
            return leader;
        }
        return sameRack.stream().max(ReplicaView.MOST_CAUGHT_UP).orElse(leader);
    }
}
