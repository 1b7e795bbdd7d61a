package io.cairn.metadata.controller;

import io.cairn.metadata.image.BrokerRegistration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Places the replicas of new partitions over usable brokers: leaders round-robin over a rack-alternating broker
 * list (so leaders spread evenly and consecutive brokers sit in different racks), followers shifted per round as
 * Kafka's assignment does, and each follower taken from a rack the partition does not use yet while one is left.
 * A broker without {@code broker.rack} counts as its own rack. Deterministic for a given seed. Stateless,
 * thread-safe.
 */
public final class ReplicaPlacer {

    private ReplicaPlacer() {
    }

    /**
     * Assigns replicas to {@code count} partitions numbered from {@code firstPartition}.
     *
     * @param brokers           the candidate brokers (usable ones)
     * @param firstPartition    the index of the first new partition
     * @param count             how many partitions to place
     * @param replicationFactor replicas per partition, at most {@code brokers.size()}
     * @param seed              any non-negative number; the same seed gives the same placement
     * @return per new partition its replicas, preferred leader first
     */
    public static List<List<Integer>> place(List<BrokerRegistration> brokers, int firstPartition, int count,
                                            int replicationFactor, long seed) {
        List<BrokerRegistration> ordered = rackAlternated(brokers);
        int n = ordered.size();
        if (replicationFactor > n || replicationFactor <= 0) {
            throw new IllegalArgumentException("Replication factor " + replicationFactor + " with " + n
                    + " brokers");
        }
        int start = (int) (seed % n);
        int shiftBase = (int) ((seed / n) % Math.max(1, n - 1));
        List<List<Integer>> result = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int p = firstPartition + i;
            int first = (start + p) % n;
            int shift = n > 1 ? (shiftBase + p / n) % (n - 1) : 0;
            List<Integer> replicas = new ArrayList<>(replicationFactor);
            Set<String> racksUsed = new HashSet<>();
            BrokerRegistration leader = ordered.get(first);
            replicas.add(leader.id());
            racksUsed.add(rackOf(leader));
            int racks = (int) ordered.stream().map(ReplicaPlacer::rackOf).distinct().count();
            for (int j = 1; j < replicationFactor; j++) {
                BrokerRegistration chosen = null;
                BrokerRegistration fallback = null;
                for (int k = 0; k < n - 1 && chosen == null; k++) {
                    int index = (first + 1 + (shift + j - 1 + k) % (n - 1)) % n;
                    BrokerRegistration candidate = ordered.get(index);
                    if (replicas.contains(candidate.id())) {
                        continue;
                    }
                    if (fallback == null) {
                        fallback = candidate;
                    }
                    if (racksUsed.size() >= racks || !racksUsed.contains(rackOf(candidate))) {
                        chosen = candidate;
                    }
                }
                BrokerRegistration picked = chosen != null ? chosen : fallback;
                replicas.add(picked.id());
                racksUsed.add(rackOf(picked));
            }
            result.add(List.copyOf(replicas));
        }
        return result;
    }

    /** Brokers sorted by id within each rack, then taken one rack at a time in rack-name order. */
    static List<BrokerRegistration> rackAlternated(List<BrokerRegistration> brokers) {
        Map<String, List<BrokerRegistration>> byRack = new TreeMap<>();
        brokers.stream().sorted(Comparator.comparingInt(BrokerRegistration::id))
                .forEach(b -> byRack.computeIfAbsent(rackOf(b), r -> new ArrayList<>()).add(b));
        List<BrokerRegistration> ordered = new ArrayList<>(brokers.size());
        for (int round = 0; ordered.size() < brokers.size(); round++) {
            for (List<BrokerRegistration> rack : byRack.values()) {
                if (round < rack.size()) {
                    ordered.add(rack.get(round));
                }
            }
        }
        return ordered;
    }

    private static String rackOf(BrokerRegistration broker) {
        return broker.rack().orElse("\u0000broker-" + broker.id());
    }
}
