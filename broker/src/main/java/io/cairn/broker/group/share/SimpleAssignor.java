package io.cairn.broker.group.share;

import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.ListIterator;
import java.util.Map;
import java.util.Set;

/**
 * KIP-932's {@code simple} share group assignor as Kafka 4.1 has it. A partition may go to several members of a share
 * group, but the assignor spreads them: with P assignable partitions and M members, each member is given up to
 * ceil(P / M) partitions, so every partition has a member when there are more members than partitions and the
 * partitions are shared out when there are more partitions than members:
 *
 * <ol>
 *   <li>each member first gets the partition its member id hashes to ({@code abs(hashCode % P)});</li>
 *   <li>each member keeps the partitions it had in the current target assignment, while below its quota and while
 *       no member got the partition in step 1 (stickiness);</li>
 *   <li>the partitions left without a member go round-robin to members below their quota.</li>
 * </ol>
 *
 * Only assignable partitions count: those whose share-partition state is initialized. When members subscribe to
 * different topics, each topic's partitions are assigned as above among the members subscribed to it (Kafka's
 * heterogeneous path differs in the order of its steps; the quotas and stickiness are the same idea).
 * Stateless, thread-safe.
 */
public final class SimpleAssignor {

    /** The assignor's name, as ShareGroupDescribe reports it. */
    public static final String NAME = "simple";

    private static final Comparator<Uuid> TOPIC_ORDER = Comparator.comparingLong(Uuid::mostSignificantBits)
        .thenComparingLong(Uuid::leastSignificantBits);

    /** One partition of a topic. */
    record TopicPartition(Uuid topicId, int partition) {
    }

    /** What the assignor decides from. */
    public interface Topics {
        /** The partition count of the topic, or -1 when it does not exist. */
        int numPartitions(Uuid topicId);

        /** Whether the share-partition may be assigned (its state is initialized). */
        boolean isAssignable(Uuid topicId, int partition);
    }

    /**
     * The new target assignment.
     *
     * @param subscriptions each member's subscribed topic ids, in a stable member order
     * @param current       each member's current target assignment
     */
    public Map<String, Map<Uuid, Set<Integer>>> assign(Map<String, Set<Uuid>> subscriptions,
                                                       Map<String, Map<Uuid, Set<Integer>>> current, Topics topics) {
        Map<String, Set<TopicPartition>> result = new LinkedHashMap<>();
        subscriptions.keySet().forEach(member -> result.put(member, new HashSet<>()));
        if (subscriptions.isEmpty()) {
            return toMaps(result);
        }
        boolean homogeneous = subscriptions.values().stream().distinct().count() == 1;
        if (homogeneous) {
            Set<Uuid> topicIds = subscriptions.values().iterator().next();
            assignAmong(subscriptions.keySet(), topicIds, current, topics, result);
        } else {
            Map<Uuid, List<String>> membersByTopic = new HashMap<>();
            subscriptions.forEach((member, ids) -> ids.forEach(id ->
                membersByTopic.computeIfAbsent(id, t -> new ArrayList<>()).add(member)));
            membersByTopic.keySet().stream().sorted(TOPIC_ORDER).forEach(topic ->
                assignAmong(membersByTopic.get(topic), Set.of(topic), current, topics, result));
        }
        return toMaps(result);
    }

    private static void assignAmong(Collection<String> members, Set<Uuid> topicIds,
                                    Map<String, Map<Uuid, Set<Integer>>> current, Topics topics,
                                    Map<String, Set<TopicPartition>> result) {
        List<TopicPartition> targets = targetPartitions(topicIds, topics);
        if (targets.isEmpty() || members.isEmpty()) {
            return;
        }
        int quota = (targets.size() + members.size() - 1) / members.size();
        Map<String, Set<TopicPartition>> assigned = new LinkedHashMap<>();
        Map<TopicPartition, Set<String>> byPartition = new HashMap<>();
        // Step 1: each member's hashed partition.
        Map<TopicPartition, List<String>> hashed = new HashMap<>();
        for (String member : members) {
            TopicPartition tp = targets.get(Math.abs(member.hashCode() % targets.size()));
            hashed.computeIfAbsent(tp, p -> new ArrayList<>()).add(member);
        }
        hashed.forEach((tp, ms) -> ms.forEach(m -> {
            assigned.computeIfAbsent(m, x -> new HashSet<>()).add(tp);
            byPartition.computeIfAbsent(tp, x -> new HashSet<>()).add(m);
        }));
        // Step 2: stickiness, within the quota, for partitions step 1 did not hand out.
        for (String member : members) {
            Map<Uuid, Set<Integer>> had = current.getOrDefault(member, Map.of());
            had.keySet().stream().filter(topicIds::contains).sorted(TOPIC_ORDER).forEach(topic ->
                had.get(topic).stream().sorted().forEach(p -> {
                    TopicPartition tp = new TopicPartition(topic, p);
                    Set<TopicPartition> mine = assigned.computeIfAbsent(member, x -> new HashSet<>());
                    if (mine.size() < quota && !hashed.containsKey(tp) && targets.contains(tp)) {
                        mine.add(tp);
                        byPartition.computeIfAbsent(tp, x -> new HashSet<>()).add(member);
                    }
                }));
        }
        // Step 3: round-robin of the partitions nobody has, to members below their quota.
        List<TopicPartition> unassigned = targets.stream().filter(tp -> !byPartition.containsKey(tp)).toList();
        roundRobin(members, unassigned, assigned, quota);
        assigned.forEach((member, tps) -> result.get(member).addAll(tps));
    }

    private static void roundRobin(Collection<String> members, List<TopicPartition> partitions,
                                   Map<String, Set<TopicPartition>> assigned, int quota) {
        Collection<String> candidates = new LinkedHashSet<>(members);
        Iterator<String> next = candidates.iterator();
        ListIterator<TopicPartition> it = partitions.listIterator();
        while (it.hasNext()) {
            TopicPartition tp = it.next();
            if (!next.hasNext()) {
                next = candidates.iterator();
                if (candidates.isEmpty()) {
                    throw new IllegalStateException("Inconsistent number of member IDs");
                }
            }
            String member = next.next();
            Set<TopicPartition> mine = assigned.computeIfAbsent(member, x -> new HashSet<>());
            if (mine.size() <= quota) {
                mine.add(tp);
            } else {
                next.remove();
                it.previous();
            }
        }
    }

    private static List<TopicPartition> targetPartitions(Set<Uuid> topicIds, Topics topics) {
        List<TopicPartition> targets = new ArrayList<>();
        topicIds.stream().sorted(TOPIC_ORDER).forEach(topic -> {
            int partitions = topics.numPartitions(topic);
            for (int p = 0; p < partitions; p++) {
                if (topics.isAssignable(topic, p)) {
                    targets.add(new TopicPartition(topic, p));
                }
            }
        });
        return targets;
    }

    private static Map<String, Map<Uuid, Set<Integer>>> toMaps(Map<String, Set<TopicPartition>> byMember) {
        Map<String, Map<Uuid, Set<Integer>>> maps = new LinkedHashMap<>();
        byMember.forEach((member, tps) -> {
            Map<Uuid, Set<Integer>> partitions = new HashMap<>();
            tps.forEach(tp -> partitions.computeIfAbsent(tp.topicId(), t -> new HashSet<>()).add(tp.partition()));
            maps.put(member, partitions);
        });
        return maps;
    }
}
