package io.cairn.broker.group.assignor;

import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The {@code uniform} assignor, the default one (Kafka's server-side {@code UniformAssignor}): balanced and sticky.
 *
 * <ul>
 *   <li><b>Balanced:</b> no partition can move from one member to another member subscribed to its topic so that
 *       the first still has more than the second; when every member subscribes to the same topics, member sizes
 *       differ by at most one.</li>
 *   <li><b>Sticky:</b> a member keeps the partitions of its current target assignment that are still valid (it still
 *       subscribes to the topic, the partition still exists, no other member kept it) unless balance needs to take
 *       them away; a change of membership moves as few partitions as that allows.</li>
 * </ul>
 *
 * <p>How: (1) every member keeps its valid current partitions; (2) the partitions nobody kept go, topics with the
 * fewest subscribers first, each to its least loaded subscriber; (3) while a member has a partition that a subscriber
 * with at least two fewer partitions could take, the partition moves there (each move lowers the sum of squared
 * member sizes, so this ends). Ties go to the lowest member id, so the result is deterministic.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class UniformAssignor implements PartitionAssignor {

    /** The name of this assignor. */
    public static final String NAME = "uniform";

    private static final Comparator<Uuid> TOPIC_ORDER = Comparator.comparingLong(Uuid::mostSignificantBits)
        .thenComparingLong(Uuid::leastSignificantBits);

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec spec, TopicPartitionCounts topics) {
        Map<Uuid, Integer> partitionCounts = new HashMap<>();
        Map<Uuid, List<String>> subscribers = new TreeMap<>(TOPIC_ORDER);
        spec.members().forEach((memberId, member) -> {
            for (Uuid topicId : member.subscribedTopicIds()) {
                int partitions = topics.numPartitions(topicId);
                if (partitions < 0) {
                    throw new PartitionAssignorException("Member " + memberId + " subscribes to topic " + topicId
                        + ", which does not exist");
                }
                partitionCounts.put(topicId, partitions);
                subscribers.computeIfAbsent(topicId, id -> new ArrayList<>()).add(memberId);
            }
        });
        Loads loads = new Loads(spec.members().keySet());
        keepCurrentPartitions(spec, partitionCounts, loads);
        assignUnassigned(partitionCounts, subscribers, loads);
        balance(spec, subscribers, loads);
        return new GroupAssignment(loads.assignment());
    }

    private static void keepCurrentPartitions(GroupSpec spec, Map<Uuid, Integer> partitionCounts, Loads loads) {
        spec.members().forEach((memberId, member) -> member.currentAssignment().forEach((topicId, partitions) -> {
            if (!member.subscribedTopicIds().contains(topicId)) {
                return;
            }
            int count = partitionCounts.getOrDefault(topicId, 0);
            for (int partition : new TreeSet<>(partitions)) {
                if (partition < count && !loads.isTaken(topicId, partition)) {
                    loads.add(memberId, topicId, partition);
                }
            }
        }));
    }

    private static void assignUnassigned(Map<Uuid, Integer> partitionCounts, Map<Uuid, List<String>> subscribers,
                                         Loads loads) {
        List<Uuid> order = new ArrayList<>(subscribers.keySet());
        order.sort(Comparator.comparingInt((Uuid id) -> subscribers.get(id).size()).thenComparing(TOPIC_ORDER));
        for (Uuid topicId : order) {
            List<String> eligible = subscribers.get(topicId);
            for (int partition = 0; partition < partitionCounts.get(topicId); partition++) {
                if (!loads.isTaken(topicId, partition)) {
                    loads.add(loads.leastLoaded(eligible, null), topicId, partition);
                }
            }
        }
    }

    private static void balance(GroupSpec spec, Map<Uuid, List<String>> subscribers, Loads loads) {
        boolean moved = true;
        while (moved) {
            moved = false;
            List<String> byLoadDescending = new ArrayList<>(spec.members().keySet());
            byLoadDescending.sort(Comparator.comparingInt(loads::size).reversed().thenComparing(id -> id));
            for (String from : byLoadDescending) {
                if (moveOne(subscribers, loads, from)) {
                    moved = true;
                    break;
                }
            }
        }
    }

    /** Moves one partition of {@code from} to a subscriber with at least two fewer partitions, if there is one. */
    private static boolean moveOne(Map<Uuid, List<String>> subscribers, Loads loads, String from) {
        int fromSize = loads.size(from);
        // The partitions most recently added (highest topic and partition last) move first, keeping older ones.
        List<Map.Entry<Uuid, Integer>> owned = loads.partitionsOf(from);
        for (int i = owned.size() - 1; i >= 0; i--) {
            Uuid topicId = owned.get(i).getKey();
            String to = loads.leastLoaded(subscribers.get(topicId), from);
            if (to != null && loads.size(to) + 1 < fromSize) {
                loads.move(from, to, topicId, owned.get(i).getValue());
                return true;
            }
        }
        return false;
    }

    /** The assignment under construction: each member's partitions and who holds each partition. */
    private static final class Loads {
        private final Map<String, TreeMap<Uuid, TreeSet<Integer>>> byMember = new TreeMap<>();
        private final Map<String, Integer> sizes = new HashMap<>();
        private final Map<Uuid, Set<Integer>> taken = new HashMap<>();

        Loads(Set<String> memberIds) {
            memberIds.forEach(id -> {
                byMember.put(id, new TreeMap<>(TOPIC_ORDER));
                sizes.put(id, 0);
            });
        }

        boolean isTaken(Uuid topicId, int partition) {
            return taken.getOrDefault(topicId, Set.of()).contains(partition);
        }

        int size(String memberId) {
            return sizes.get(memberId);
        }

        void add(String memberId, Uuid topicId, int partition) {
            byMember.get(memberId).computeIfAbsent(topicId, id -> new TreeSet<>()).add(partition);
            taken.computeIfAbsent(topicId, id -> new HashSet<>()).add(partition);
            sizes.merge(memberId, 1, Integer::sum);
        }

        void move(String from, String to, Uuid topicId, int partition) {
            TreeSet<Integer> partitions = byMember.get(from).get(topicId);
            partitions.remove(partition);
            if (partitions.isEmpty()) {
                byMember.get(from).remove(topicId);
            }
            sizes.merge(from, -1, Integer::sum);
            byMember.get(to).computeIfAbsent(topicId, id -> new TreeSet<>()).add(partition);
            sizes.merge(to, 1, Integer::sum);
        }

        /** The member of {@code eligible} (other than {@code except}) with the fewest partitions, lowest id first. */
        String leastLoaded(List<String> eligible, String except) {
            String best = null;
            for (String memberId : eligible) {
                if (memberId.equals(except)) {
                    continue;
                }
                if (best == null || sizes.get(memberId) < sizes.get(best)
                        || (sizes.get(memberId).equals(sizes.get(best)) && memberId.compareTo(best) < 0)) {
                    best = memberId;
                }
            }
            return best;
        }

        List<Map.Entry<Uuid, Integer>> partitionsOf(String memberId) {
            List<Map.Entry<Uuid, Integer>> list = new ArrayList<>();
            byMember.get(memberId).forEach((topicId, partitions) ->
                partitions.forEach(p -> list.add(Map.entry(topicId, p))));
            return list;
        }

        Map<String, Map<Uuid, Set<Integer>>> assignment() {
            Map<String, Map<Uuid, Set<Integer>>> result = new HashMap<>();
            byMember.forEach((memberId, partitions) -> result.put(memberId, new HashMap<>(partitions)));
            return result;
        }
    }
}
