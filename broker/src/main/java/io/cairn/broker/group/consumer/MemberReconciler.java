package io.cairn.broker.group.consumer;

import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Moves one member towards the group's target assignment, by Kafka's rules (its {@code CurrentAssignmentBuilder}):
 *
 * <ul>
 *   <li>A partition the member owns but the target gives elsewhere must be revoked first: while the member still
 *       reports owning such a partition it stays at its epoch in UNREVOKED_PARTITIONS with those partitions pending
 *       revocation, and gets nothing new.</li>
 *   <li>Once it no longer reports them, its epoch moves on (current + 1) and it is reconciled again.</li>
 *   <li>A partition of its target that another member still owns (it has a partition epoch) is not given yet: the
 *       member moves to the target epoch in UNRELEASED_PARTITIONS and gets it on a later heartbeat, once released.</li>
 *   <li>Otherwise the member gets its whole target at the target epoch and is STABLE.</li>
 *   <li>A member in a state this coordinator does not know (UNKNOWN) is fenced (FENCED_MEMBER_EPOCH) unless it owns
 *       nothing, in which case it is reconciled from scratch.</li>
 * </ul>
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class MemberReconciler {

    /** The epoch of a partition nobody owns. */
    public static final int NO_EPOCH = -1;

    /** The epoch of the member that owns a partition, or {@link #NO_EPOCH}. */
    @FunctionalInterface
    public interface PartitionEpochs {
        int epochOf(Uuid topicId, int partition);
    }

    private MemberReconciler() {
    }

    /**
     * The member after reconciliation; the same member when nothing changes.
     *
     * @param member          the member
     * @param targetEpoch     the group's target assignment epoch
     * @param target          the member's partitions in the target assignment, by topic id
     * @param partitionEpochs who owns each partition now
     * @param ownedOrNull     the partitions the member's heartbeat reports as owned, or null when it did not report
     *                        them (then it is assumed to still own everything it was given)
     * @throws io.cairn.wire.error.ApiException FENCED_MEMBER_EPOCH for an UNKNOWN member that owns partitions
     */
    public static ConsumerGroupMember reconcile(ConsumerGroupMember member, int targetEpoch,
                                                Map<Uuid, Set<Integer>> target, PartitionEpochs partitionEpochs,
                                                Map<Uuid, Set<Integer>> ownedOrNull) {
        return switch (member.state()) {
            case STABLE -> member.memberEpoch() == targetEpoch ? member
                : next(member, member.memberEpoch(), targetEpoch, target, partitionEpochs, ownedOrNull);
            case UNREVOKED_PARTITIONS -> ownsAny(ownedOrNull, member.partitionsPendingRevocation()) ? member
                : next(member, member.memberEpoch() + 1, targetEpoch, target, partitionEpochs, ownedOrNull);
            case UNRELEASED_PARTITIONS ->
                next(member, member.memberEpoch(), targetEpoch, target, partitionEpochs, ownedOrNull);
            case UNKNOWN -> {
                if (ownedOrNull == null || ownedOrNull.values().stream().anyMatch(p -> !p.isEmpty())) {
                    throw Errors.FENCED_MEMBER_EPOCH.exception("The consumer group member is in an unknown state; it"
                        + " must give up all its partitions and rejoin.");
                }
                yield next(member, targetEpoch, targetEpoch, target, partitionEpochs, ownedOrNull);
            }
        };
    }

    private static ConsumerGroupMember next(ConsumerGroupMember member, int epoch, int targetEpoch,
                                            Map<Uuid, Set<Integer>> target, PartitionEpochs partitionEpochs,
                                            Map<Uuid, Set<Integer>> ownedOrNull) {
        Map<Uuid, Set<Integer>> kept = new HashMap<>();
        Map<Uuid, Set<Integer>> toRevoke = new HashMap<>();
        Map<Uuid, Set<Integer>> toAssign = new HashMap<>();
        boolean unreleased = false;
        Set<Uuid> topics = new HashSet<>(target.keySet());
        topics.addAll(member.assignedPartitions().keySet());
        for (Uuid topicId : topics) {
            Set<Integer> targetPartitions = target.getOrDefault(topicId, Set.of());
            Set<Integer> current = member.assignedPartitions().getOrDefault(topicId, Set.of());
            Set<Integer> keep = new HashSet<>(current);
            keep.retainAll(targetPartitions);
            Set<Integer> revoke = new HashSet<>(current);
            revoke.removeAll(keep);
            Set<Integer> assign = new HashSet<>(targetPartitions);
            assign.removeAll(keep);
            unreleased |= assign.removeIf(p -> partitionEpochs.epochOf(topicId, p) != NO_EPOCH);
            putIfNotEmpty(kept, topicId, keep);
            putIfNotEmpty(toRevoke, topicId, revoke);
            putIfNotEmpty(toAssign, topicId, assign);
        }
        if (!toRevoke.isEmpty() && ownsAny(ownedOrNull, toRevoke)) {
            return member.reconciled(MemberState.UNREVOKED_PARTITIONS, epoch, kept, toRevoke);
        }
        toAssign.forEach((topicId, partitions) -> kept.computeIfAbsent(topicId, id -> new HashSet<>())
            .addAll(partitions));
        MemberState state = unreleased ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE;
        return member.reconciled(state, targetEpoch, kept, Map.of());
    }

    /** Whether the member reports owning any of {@code partitions}; a member that reports nothing owns them all. */
    private static boolean ownsAny(Map<Uuid, Set<Integer>> ownedOrNull, Map<Uuid, Set<Integer>> partitions) {
        if (ownedOrNull == null) {
            return true;
        }
        for (Map.Entry<Uuid, Set<Integer>> owned : ownedOrNull.entrySet()) {
            Set<Integer> pending = partitions.getOrDefault(owned.getKey(), Set.of());
            for (int partition : owned.getValue()) {
                if (pending.contains(partition)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static void putIfNotEmpty(Map<Uuid, Set<Integer>> map, Uuid topicId, Set<Integer> partitions) {
        if (!partitions.isEmpty()) {
            map.put(topicId, partitions);
        }
    }
}
