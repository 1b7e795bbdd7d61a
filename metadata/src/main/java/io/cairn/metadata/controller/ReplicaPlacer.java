package io.cairn.metadata.controller;

import io.cairn.metadata.image.BrokerRegistration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;

/**
 * Places the replicas of new partitions as Kafka's controller does ({@code StripedReplicaPlacer}), over every
 * registered broker that is not in controlled shutdown, fenced ones included:
 * <ul>
 *   <li>replicas are striped over racks: each partition starts at the next rack and takes one replica per rack
 *       before it takes a second from any, so a partition spans as many racks as it can; brokers without
 *       {@code broker.rack} form one rack together (Kafka's empty rack);</li>
 *   <li>within a rack the unfenced brokers are taken before the fenced ones, round-robin from a rotating start, so
 *       a fenced broker holds a replica only when its rack has no unfenced broker left for the partition (in a
 *       cluster without racks: only when the unfenced brokers are fewer than the replication factor). Rack spread
 *       comes first, as in Kafka: a fenced broker of an unused rack is taken before a second unfenced broker of a
 *       used one;</li>
 *   <li>the first replica, the preferred leader, is always unfenced, and leaderships rotate over the unfenced
 *       brokers of each rack;</li>
 *   <li>the refusals are Kafka's, in its order ({@link #check}): a replication factor that is not positive, no
 *       unfenced broker, fewer brokers than the replication factor.</li>
 * </ul>
 * The initial ISR, the unfenced replicas only, is the caller's ({@link TopicCommands}). Deterministic for a given
 * seed (the controller's decisions are replayed in the simulation). Stateless, thread-safe.
 */
public final class ReplicaPlacer {

    /** Brokers without a rack sort first and share this key, as Kafka's empty rack. */
    private static final String NO_RACK = "";

    private ReplicaPlacer() {
    }

    /**
     * Why {@code replicationFactor} replicas cannot be placed on {@code brokers}, with Kafka's messages (the
     * controller prefixes them for CreateTopics), or empty when they can.
     *
     * @param brokers the candidates: registered brokers not in controlled shutdown, fenced ones included
     */
    public static Optional<String> check(List<BrokerRegistration> brokers, int replicationFactor) {
        if (replicationFactor <= 0) {
            return Optional.of("Invalid replication factor " + replicationFactor
                    + ": the replication factor must be positive.");
        }
        if (brokers.stream().allMatch(BrokerRegistration::fenced)) {
            return Optional.of("All brokers are currently fenced.");
        }
        if (replicationFactor > brokers.size()) {
            return Optional.of("The target replication factor of " + replicationFactor
                    + " cannot be reached because only " + brokers.size() + " broker(s) are registered.");
        }
        return Optional.empty();
    }

    /**
     * Assigns replicas to {@code count} partitions numbered from {@code firstPartition}.
     *
     * @param brokers           the candidates: registered brokers not in controlled shutdown, fenced ones included
     * @param firstPartition    the index of the first new partition
     * @param count             how many partitions to place
     * @param replicationFactor replicas per partition
     * @param seed              any non-negative number; the same seed gives the same placement
     * @return per new partition its replicas, preferred leader (an unfenced broker) first
     * @throws IllegalArgumentException when {@link #check} refuses the placement
     */
    public static List<List<Integer>> place(List<BrokerRegistration> brokers, int firstPartition, int count,
                                            int replicationFactor, long seed) {
        Optional<String> refused = check(brokers, replicationFactor);
        if (refused.isPresent()) {
            throw new IllegalArgumentException(refused.get());
        }
        Random random = new Random(seed);
        List<Rack> racks = racks(brokers, random);
        int rackStart = random.nextInt(racks.size());
        List<List<Integer>> result = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            result.add(placeOne(racks, (rackStart + firstPartition + i) % racks.size(), replicationFactor));
        }
        return result;
    }

    /** One partition: the leader from the first rack (from {@code start}) with an unfenced broker, then stripes. */
    private static List<Integer> placeOne(List<Rack> racks, int start, int replicationFactor) {
        int leaderRack = start;
        while (racks.get(leaderRack).unfenced.isEmpty()) {
            leaderRack = (leaderRack + 1) % racks.size();
        }
        int[] taken = new int[racks.size()];
        List<Integer> replicas = new ArrayList<>(replicationFactor);
        replicas.add(racks.get(leaderRack).pick(0, true));
        taken[leaderRack] = 1;
        for (int visit = 1; replicas.size() < replicationFactor; visit++) {
            int index = (leaderRack + visit) % racks.size();
            Rack rack = racks.get(index);
            if (taken[index] < rack.size()) {
                replicas.add(rack.pick(taken[index], index == leaderRack));
                taken[index]++;
            }
        }
        racks.get(leaderRack).leaderTurn++;
        for (int index = 0; index < racks.size(); index++) {
            if (index != leaderRack && taken[index] > 0) {
                racks.get(index).followerTurn++;
            }
        }
        return List.copyOf(replicas);
    }

    /** The candidates grouped by rack, in rack-name order, each rack's brokers sorted by id. */
    private static List<Rack> racks(List<BrokerRegistration> brokers, Random random) {
        Map<String, Rack> byName = new TreeMap<>();
        brokers.stream().sorted(Comparator.comparingInt(BrokerRegistration::id)).forEach(broker -> {
            Rack rack = byName.computeIfAbsent(broker.rack().orElse(NO_RACK), name -> new Rack());
            (broker.fenced() ? rack.fenced : rack.unfenced).add(broker.id());
        });
        List<Rack> racks = new ArrayList<>(byName.values());
        for (Rack rack : racks) {
            rack.offset = random.nextInt(rack.size());
        }
        return racks;
    }

    /**
     * The brokers of one rack and its round-robin state: how many partitions it led and how many it gave followers
     * to. Used by one {@link #place} call only.
     */
    private static final class Rack {
        private final List<Integer> unfenced = new ArrayList<>();
        private final List<Integer> fenced = new ArrayList<>();
        private int offset;
        private int leaderTurn;
        private int followerTurn;

        int size() {
            return unfenced.size() + fenced.size();
        }

        /** The rack's {@code k}-th replica of the current partition: unfenced ones first, each list rotated. */
        int pick(int k, boolean leaderRack) {
            int turn = offset + (leaderRack ? leaderTurn : followerTurn);
            if (k < unfenced.size()) {
                return unfenced.get((turn + k) % unfenced.size());
            }
            return fenced.get((turn + k - unfenced.size()) % fenced.size());
        }
    }
}
