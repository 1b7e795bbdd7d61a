package io.cairn.broker.group.assignor;

import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The {@code range} assignor (Kafka's server-side {@code RangeAssignor}): for each topic, its subscribers in a fixed
 * order get contiguous ranges of partitions, {@code partitions / subscribers} each, the first
 * {@code partitions % subscribers} of them one more. The order puts static members first, by instance id, then
 * dynamic members by member id, so a rolling bounce of static members keeps their ranges; when every member
 * subscribes to the same topics and they have the same partition count, a member gets the same partition numbers of
 * every topic (co-partitioning, for joins). Not sticky otherwise.
 *
 * <p>Example: members A and B, topics T1 and T2 of 3 partitions each: A gets T1 0-1 and T2 0-1, B gets T1 2 and T2 2.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class RangeAssignor implements PartitionAssignor {

    /** The name of this assignor. */
    public static final String NAME = "range";

    /** Static members first, by instance id, then dynamic members by member id. */
    private static final Comparator<Map.Entry<String, MemberSubscription>> ORDER = (a, b) -> {
        String instanceA = a.getValue().instanceId();
        String instanceB = b.getValue().instanceId();
        if (instanceA != null && instanceB != null) {
            return instanceA.compareTo(instanceB);
        }
        if (instanceA != null || instanceB != null) {
            return instanceA != null ? -1 : 1;
        }
        return a.getKey().compareTo(b.getKey());
    };

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public GroupAssignment assign(GroupSpec spec, TopicPartitionCounts topics) {
        List<Map.Entry<String, MemberSubscription>> ordered = new ArrayList<>(spec.members().entrySet());
        ordered.sort(ORDER);
        Map<Uuid, List<String>> subscribers = new LinkedHashMap<>();
        for (Map.Entry<String, MemberSubscription> member : ordered) {
            for (Uuid topicId : member.getValue().subscribedTopicIds()) {
                subscribers.computeIfAbsent(topicId, id -> new ArrayList<>()).add(member.getKey());
            }
        }
        Map<String, Map<Uuid, Set<Integer>>> result = new HashMap<>();
        spec.members().keySet().forEach(memberId -> result.put(memberId, new HashMap<>()));
        subscribers.forEach((topicId, members) -> {
            int partitions = topics.numPartitions(topicId);
            if (partitions < 0) {
                throw new PartitionAssignorException("Member " + members.get(0) + " subscribes to topic " + topicId
                    + ", which does not exist");
            }
            int quota = partitions / members.size();
            int extra = partitions % members.size();
            int next = 0;
            for (int i = 0; i < members.size(); i++) {
                int size = quota + (i < extra ? 1 : 0);
                if (size == 0) {
                    continue;
                }
                Set<Integer> range = new TreeSet<>();
                for (int p = next; p < next + size; p++) {
                    range.add(p);
                }
                next += size;
                result.get(members.get(i)).put(topicId, range);
            }
        });
        return new GroupAssignment(result);
    }
}
