package io.cairn.metadata.controller;

import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntPredicate;

/**
 * Builds the one {@link PartitionChangeRecord} that moves a partition to a target ISR and assignment, following
 * Kafka's {@code PartitionChangeBuilder}: first an ongoing reassignment is completed when the target ISR holds every
 * target replica (the removing replicas leave the replicas and the ISR), then the eligible leader replicas are
 * updated, a leader is elected (see {@link Election}), a leader epoch is started when replicas are dropped, and the
 * record names only what changes.
 *
 * <p>Without eligible leader replicas (the default) the ISR is never emptied. With them (KIP-966,
 * {@link #eligibleLeaderReplicas}) the ISR may become empty; while the target ISR is smaller than
 * {@code min.insync.replicas}, every member of the current ISR (and of the current ELR) that leaves it joins the
 * ELR, except replicas whose broker shut down uncleanly; an ELR member may be elected when the ISR is empty and then
 * becomes the sole ISR member; an ISR of at least {@code min.insync.replicas} clears the ELR. The last leader is kept
 * as the last known ELR when the ISR becomes empty, and is elected (as an unclean election: it becomes the sole ISR
 * member) only when the ISR and the ELR are both empty and it is usable again — Kafka 4.1's balanced recovery.
 * Not thread-safe: build one change per thread and discard it.
 */
final class PartitionChange {

    /** Kafka's election types. */
    enum Election {
        /** The preferred (first) replica when it is in the ISR and usable, else as {@link #ONLINE}. */
        PREFERRED,
        /** Keep a usable ISR leader, else the first usable ISR member in replica order. */
        ONLINE,
        /** As {@link #ONLINE}, else any usable replica, which becomes the sole ISR member. */
        UNCLEAN
    }

    private final Uuid topicId;
    private final int partitionId;
    private final PartitionRegistration current;
    private final IntPredicate usable;
    private Election election = Election.ONLINE;
    private List<Integer> targetIsr;
    private List<Integer> targetReplicas;
    private List<Integer> targetRemoving;
    private List<Integer> targetAdding;
    private List<Integer> targetElr;
    private boolean elrEnabled;
    private int minIsr = 1;
    private int uncleanShutdown = PartitionRegistration.NO_LEADER;

    /**
     * @param usable whether a broker may lead (registered, unfenced, not in controlled shutdown)
     */
    PartitionChange(Uuid topicId, int partitionId, PartitionRegistration current, IntPredicate usable) {
        this.topicId = topicId;
        this.partitionId = partitionId;
        this.current = current;
        this.usable = usable;
        this.targetIsr = current.isr();
        this.targetReplicas = current.replicas();
        this.targetRemoving = current.removingReplicas();
        this.targetAdding = current.addingReplicas();
        this.targetElr = current.elr();
    }

    /** Maintains eligible leader replicas with this {@code min.insync.replicas} when {@code enabled}. */
    PartitionChange eligibleLeaderReplicas(boolean enabled, int minInsyncReplicas) {
        this.elrEnabled = enabled;
        this.minIsr = minInsyncReplicas;
        return this;
    }

    /** A broker that registered again after an unclean shutdown: it leaves the ELR and may not lead. */
    PartitionChange uncleanShutdown(int brokerId) {
        this.uncleanShutdown = brokerId;
        return this;
    }

    PartitionChange election(Election value) {
        this.election = value;
        return this;
    }

    PartitionChange isr(List<Integer> value) {
        this.targetIsr = List.copyOf(value);
        return this;
    }

    PartitionChange replicas(List<Integer> value) {
        this.targetReplicas = List.copyOf(value);
        return this;
    }

    PartitionChange removing(List<Integer> value) {
        this.targetRemoving = List.copyOf(value);
        return this;
    }

    PartitionChange adding(List<Integer> value) {
        this.targetAdding = List.copyOf(value);
        return this;
    }

    /** The record, or empty when nothing would change. */
    Optional<PartitionChangeRecord> build() {
        PartitionChangeRecord record = new PartitionChangeRecord().setTopicId(topicId).setPartitionId(partitionId);
        completeReassignmentIfPossible();
        populateTargetElr();
        elect(record);
        if (record.leader() == -2 && !targetReplicas.containsAll(current.replicas())) {
            // Replicas leave the assignment: a new leader epoch fences them.
            record.setLeader(current.leader());
        }
        updateRecordElr(record);
        if (record.isr() == null && (!targetIsr.isEmpty() || elrEnabled) && !targetIsr.equals(current.isr())) {
            record.setIsr(targetIsr);
        }
        updateLastKnownLeader(record);
        if (!targetReplicas.isEmpty() && !targetReplicas.equals(current.replicas())) {
            record.setReplicas(targetReplicas);
        }
        if (!targetRemoving.equals(current.removingReplicas())) {
            record.setRemovingReplicas(targetRemoving);
        }
        if (!targetAdding.equals(current.addingReplicas())) {
            record.setAddingReplicas(targetAdding);
        }
        boolean noOp = record.leader() == -2 && record.isr() == null && record.replicas() == null
                && record.removingReplicas() == null && record.addingReplicas() == null
                && record.eligibleLeaderReplicas() == null && record.lastKnownElr() == null;
        return noOp ? Optional.empty() : Optional.of(record);
    }

    /** Kafka's {@code PartitionReassignmentReplicas.maybeCompleteReassignment}, applied to the targets. */
    private void completeReassignmentIfPossible() {
        if (targetRemoving.isEmpty() && targetAdding.isEmpty()) {
            return;
        }
        List<Integer> isr = new ArrayList<>(targetIsr);
        isr.removeAll(targetRemoving);
        List<Integer> replicas = new ArrayList<>(targetReplicas);
        replicas.removeAll(targetRemoving);
        if (isr.isEmpty() || replicas.isEmpty() || !isr.containsAll(replicas)) {
            return;
        }
        targetIsr = List.copyOf(isr);
        targetReplicas = List.copyOf(replicas);
        targetRemoving = List.of();
        targetAdding = List.of();
    }

    private void elect(PartitionChangeRecord record) {
        int leader;
        boolean unclean = false;
        if (election == Election.PREFERRED && !targetReplicas.isEmpty() && valid(targetReplicas.get(0))) {
            leader = targetReplicas.get(0);
        } else if (valid(current.leader())) {
            leader = current.leader();
        } else {
            leader = targetReplicas.stream().filter(this::valid).findFirst().orElse(PartitionRegistration.NO_LEADER);
            if (leader == PartitionRegistration.NO_LEADER && canElectLastKnownLeader()) {
                leader = current.lastKnownElr().get(0);
                unclean = true;
            }
            if (leader == PartitionRegistration.NO_LEADER && election == Election.UNCLEAN) {
                leader = targetReplicas.stream().filter(this::acceptable).findFirst()
                        .orElse(PartitionRegistration.NO_LEADER);
                unclean = leader != PartitionRegistration.NO_LEADER;
            }
        }
        if (leader == current.leader()) {
            return;
        }
        int elected = leader;
        if (targetElr.contains(elected)) {
            targetIsr = List.of(elected);
            targetElr = targetElr.stream().filter(r -> r != elected).toList();
        }
        record.setLeader(elected);
        if (unclean) {
            record.setIsr(List.of(elected));
        }
    }

    /** Kafka's rule: an ISR member, or an ELR member when the ISR is empty, whose broker may lead. */
    private boolean valid(int replica) {
        boolean eligible = targetIsr.contains(replica) || targetIsr.isEmpty() && targetElr.contains(replica);
        return replica != PartitionRegistration.NO_LEADER && eligible && acceptable(replica);
    }

    private boolean acceptable(int replica) {
        return replica != uncleanShutdown && usable.test(replica);
    }

    /** Balanced recovery: the ISR and ELR are empty and the one last known leader is usable again. */
    private boolean canElectLastKnownLeader() {
        return elrEnabled && targetIsr.isEmpty() && targetElr.isEmpty() && current.lastKnownElr().size() == 1
                && acceptable(current.lastKnownElr().get(0));
    }

    /**
     * Kafka's {@code maybePopulateTargetElr}: an ISR of at least min.insync.replicas clears the ELR; a smaller one
     * takes the current ISR and ELR, less the target ISR and an uncleanly shut down broker, as the ELR.
     */
    private void populateTargetElr() {
        if (!elrEnabled) {
            return;
        }
        if (targetIsr.size() >= minIsr) {
            targetElr = List.of();
            return;
        }
        Set<Integer> candidates = new TreeSet<>(targetElr);
        candidates.addAll(current.isr());
        candidates.removeAll(targetIsr);
        candidates.remove(uncleanShutdown);
        targetElr = List.copyOf(candidates);
    }

    /**
     * The ELR field of the record; an unclean election or disabled ELR clears it. The last known ELR holds only the
     * last leader (balanced recovery), so it changes in {@link #updateLastKnownLeader} alone.
     */
    private void updateRecordElr(PartitionChangeRecord record) {
        if (record.isr() != null || !elrEnabled) {
            targetElr = List.of();
        }
        if (!targetElr.equals(current.elr())) {
            record.setEligibleLeaderReplicas(targetElr);
        }
    }

    /**
     * Kafka's {@code maybeUpdateLastKnownLeader}: the leader is remembered when the ISR first becomes empty, and
     * forgotten once the partition has a leader again.
     */
    private void updateLastKnownLeader(PartitionChangeRecord record) {
        if (!elrEnabled) {
            return;
        }
        boolean lastLeaderKnown = current.lastKnownElr().size() == 1
                && current.lastKnownElr().get(0) == current.leader();
        if (record.isr() != null && record.isr().isEmpty() && !lastLeaderKnown) {
            record.setLastKnownElr(List.of(current.leader()));
        } else if ((record.leader() >= 0 || current.leader() != PartitionRegistration.NO_LEADER
                && record.leader() != PartitionRegistration.NO_LEADER) && !current.lastKnownElr().isEmpty()) {
            record.setLastKnownElr(List.of());
        }
    }
}
