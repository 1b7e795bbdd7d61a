package io.cairn.isr;

import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The leader side of one {@link Partition}'s replication (the ISR tracking of Kafka's {@code Partition}): what this
 * broker, as leader, knows of each follower ({@link ReplicaState}), the ISR state ({@link PartitionState}: committed,
 * or a change in flight to the controller), the high watermark computed from them, and the decisions to expand or
 * shrink the ISR with the proposals they send and the handling of their answers. {@link PartitionLeader} takes the
 * lock, sends the proposals and tells the listener; this class only decides and records.
 *
 * <p>Thread-safety: a package-private collaborator of {@link Partition}, guarded by the partition's state lock
 * ({@code Partition.stateLock}): each method says which side its caller holds (the read side unless it says the
 * write side, or "any" for a method of volatile reads). {@link #followers} is a concurrent map because fetches of
 * different followers record their positions at once under the read side, each entry replaced atomically;
 * {@link #partitionState} is written under the write side only and read anywhere (a volatile read of an immutable
 * value). The high watermark itself stays in {@link Partition} ({@link Partition#advanceHighWatermark}).
 */
final class PartitionIsr {

    /** The partition's logger: these are the partition's log lines, under the name Kafka users filter on. */
    private static final Logger LOGGER = LogManager.getLogger(Partition.class);

    /** What an AlterPartition answer asks of the partition once the write lock is released. */
    enum AnswerOutcome {
        /** Nothing: the answer was applied without changing the ISR, or ignored. */
        NONE,
        /** The committed ISR changed: the high watermark may move and waiters re-check. */
        ISR_CHANGED,
        /** The controller did not decide (NOT_CONTROLLER, a timeout): send the same proposal again. */
        RETRY
    }

    private final Partition partition;
    private final PartitionReads reads;
    private final IsrContext context;
    private final int localBrokerId;
    private final String logPrefix;
    /** What this broker, as leader, knows of each other replica; each entry replaced atomically. */
    private final Map<Integer, ReplicaState> followers = new ConcurrentHashMap<>();
    /**
     * The leader's ISR state: the committed ISR, or a change in flight to the controller. Written under the write
     * side of the partition's state lock; read anywhere (a volatile read of an immutable value).
     */
    private volatile PartitionState partitionState;

    PartitionIsr(Partition partition, PartitionReads reads, IsrContext context, int localBrokerId,
                 String logPrefix) {
        this.partition = partition;
        this.reads = reads;
        this.context = context;
        this.localBrokerId = localBrokerId;
        this.logPrefix = logPrefix;
    }

    /** The ISR state (any lock, or none). */
    PartitionState state() {
        return partitionState;
    }

    /**
     * Under the write side: the ISR state and the followers after {@code reg} replaced {@code old} (null at first).
     * A newer partition epoch, another leader epoch, or no change in flight commits {@code reg}'s ISR, dropping a
     * change in flight (its answer will then be ignored: the controller refuses a change based on an older partition
     * epoch). The registration of the partition epoch we already have (the metadata's echo of an answer applied
     * earlier) keeps a change in flight: that change is based on this very epoch and may still be committed, so
     * dropping it would let the high watermark pass a replica that is about to join (Kafka resets the state here;
     * the simulation test found that window). Becoming leader (or a new leader epoch while leading) resets the
     * followers' state; a follower forgets them.
     */
    void onRegistration(PartitionRegistration old, PartitionRegistration reg) {
        if (old == null || reg.partitionEpoch() > old.partitionEpoch()
                || reg.leaderEpoch() != old.leaderEpoch() || !partitionState.isInflight()) {
            partitionState = new PartitionState.Committed(reg.isr());
        }
        boolean leader = reg.leader() == localBrokerId;
        if (leader && (old == null || old.leaderEpoch() != reg.leaderEpoch())) {
            resetFollowers(reg, old == null || old.leader() != localBrokerId);
        } else if (leader) {
            followers.keySet().retainAll(reg.replicas());
        } else {
            followers.clear();
        }
    }

    /**
     * Kafka's reset of the followers' state on election (under the write side): every other assigned replica starts
     * over, caught up now when in the ISR; a re-elected leader keeps the positions it knew.
     */
    private void resetFollowers(PartitionRegistration reg, boolean newLeader) {
        long now = partition.time().milliseconds();
        long leaderEnd = partition.log().logEndOffset();
        followers.keySet().retainAll(reg.replicas());
        for (int replica : reg.replicas()) {
            if (replica != localBrokerId) {
                ReplicaState current = followers.getOrDefault(replica, ReplicaState.EMPTY);
                followers.put(replica, current.afterElection(now, leaderEnd, newLeader, reg.isr().contains(replica)));
            }
        }
    }

    /**
     * {@code min.insync.replicas} bounded by the replication factor (Kafka's {@code effectiveMinIsr}, since 3.7; any
     * lock, or none): a topic whose setting exceeds its replica count is held to all its replicas, not made
     * unwritable.
     */
    int effectiveMinIsr() {
        return Math.min(partition.minInsyncReplicas(), partition.registration().replicas().size());
    }

    /** What this broker knows of follower {@code replicaId}, or null (any lock, or none). */
    ReplicaState follower(int replicaId) {
        return followers.get(replicaId);
    }

    /**
     * The low watermark (any lock, or none: it reads the log start offsets as they are): the smallest log start
     * offset of this replica and of every other replica on a live (unfenced) broker, as their fetches reported it
     * (-1 before a follower's first fetch).
     */
    long lowWatermark() {
        long low = partition.log().logStartOffset();
        for (Map.Entry<Integer, ReplicaState> e : followers.entrySet()) {
            long start = e.getValue().logStartOffset();
            boolean alive = context.brokers().apply(e.getKey()).map(b -> !b.fenced()).orElse(false);
            if (alive && start < low) {
                low = start;
            }
        }
        return low;
    }

    /**
     * Under the read side: records a follower's fetch (see {@link Partition#updateFollowerFetchState}); false when
     * this broker does not lead or {@code replicaId} is not assigned (the fetch is then ignored).
     *
     * @throws NotLeaderOrFollowerException for a fetch of an older broker epoch than the metadata's (KIP-903)
     */
    boolean recordFetch(int replicaId, long fetchOffset, long followerStartOffset, long fetchTimeMs,
                        long leaderEndOffset, long brokerEpoch) {
        PartitionRegistration reg = partition.registration();
        if (reg.leader() != localBrokerId || !reg.replicas().contains(replicaId)) {
            return false;
        }
        long metadataEpoch = context.brokers().apply(replicaId).map(BrokerRegistration::epoch).orElse(-1L);
        if (brokerEpoch != -1L && metadataEpoch > brokerEpoch) {
            throw new NotLeaderOrFollowerException("Received stale fetch state update. broker epoch="
                + brokerEpoch + " vs expected=" + metadataEpoch);
        }
        followers.compute(replicaId, (id, current) -> (current == null ? ReplicaState.EMPTY : current)
            .afterFetch(fetchOffset, followerStartOffset, fetchTimeMs, leaderEndOffset, brokerEpoch));
        return true;
    }

    /**
     * Under the read side: moves the high watermark forward (Kafka's {@code maybeIncrementLeaderHW}), never while
     * the committed ISR is below the effective {@code min.insync.replicas}: to the smallest log end offset among the
     * leader, the maximal ISR (a joining replica already counts), and every follower that is caught up within
     * {@code replica.lag.time.max.ms} and eligible to join, so that a follower about to join is not left behind by a
     * high watermark it could never reach. True when it moved (the caller then wakes the waiters).
     */
    boolean maybeIncrementHighWatermark(long nowMs) {
        PartitionRegistration reg = partition.registration();
        if (reg.leader() != localBrokerId || partition.isUnderMinIsr()) {
            return false;
        }
        long leaderEnd = partition.log().logEndOffset();
        List<Integer> maximalIsr = partitionState.maximalIsr();
        long newHw = leaderEnd;
        for (int replica : reg.replicas()) {
            if (replica == localBrokerId) {
                continue;
            }
            ReplicaState follower = followers.getOrDefault(replica, ReplicaState.EMPTY);
            if (follower.logEndOffset() < newHw && (maximalIsr.contains(replica)
                    || follower.isCaughtUp(leaderEnd, nowMs, context.replicaLagTimeMaxMs())
                    && isReplicaIsrEligible(replica))) {
                newHw = follower.logEndOffset();
            }
        }
        return partition.advanceHighWatermark(newHw);
    }

    /**
     * Under the read side (and again under the write side, before proposing): whether {@code replicaId} should join
     * the ISR (Kafka's {@code maybeExpandIsr}): this broker leads, no change is in flight, the replica is not in the
     * ISR, it is eligible ({@link #isReplicaIsrEligible}), and its log end offset reached both the high watermark and
     * the start offset of the current leader epoch (so it holds every record a future leader must have).
     */
    boolean needsExpandIsr(int replicaId) {
        PartitionState current = partitionState;
        if (!partition.isLeader() || current.isInflight() || current.isr().contains(replicaId)
                || !isReplicaIsrEligible(replicaId)) {
            return false;
        }
        long followerEnd = followers.get(replicaId).logEndOffset();
        return followerEnd >= partition.highWatermark() && followerEnd >= reads.leaderEpochStartOffset();
    }

    /**
     * Under the write side: when {@code replicaId} still needs to join, the expansion to propose, now the ISR state
     * (until it is answered the replica already counts for the high watermark and acks=all); else null.
     */
    PartitionState.Pending proposeExpandIsr(int replicaId) {
        if (partitionState instanceof PartitionState.Committed committed && needsExpandIsr(replicaId)) {
            List<Integer> isr = new ArrayList<>(committed.isr());
            isr.add(replicaId);
            PartitionState.Pending proposal = new PartitionState.PendingExpandIsr(replicaId, proposal(isr),
                committed);
            partitionState = proposal;
            return proposal;
        }
        return null;
    }

    /**
     * Kafka's {@code isReplicaIsrEligible} (KIP-841, KIP-903): the follower's broker is registered, not fenced and
     * not in controlled shutdown, and the broker epoch of its fetches is the one the metadata has (or -1: a fetch
     * version without it); a follower that has not fetched from this leader yet is not eligible.
     */
    private boolean isReplicaIsrEligible(int replicaId) {
        ReplicaState state = followers.get(replicaId);
        if (state == null) {
            return false;
        }
        Optional<BrokerRegistration> broker = context.brokers().apply(replicaId);
        OptionalLong fetchEpoch = state.brokerEpoch();
        return broker.isPresent() && !broker.get().fenced() && !broker.get().inControlledShutdown()
            && fetchEpoch.isPresent() && (fetchEpoch.getAsLong() == -1L || fetchEpoch.getAsLong() == broker.get()
            .epoch());
    }

    /** Under the read side: this broker leads and some ISR follower is out of sync ({@link #getOutOfSyncReplicas}). */
    boolean needsShrinkIsr() {
        return partition.isLeader() && !getOutOfSyncReplicas(context.replicaLagTimeMaxMs()).isEmpty();
    }

    /**
     * Under the write side: when ISR followers are still out of sync and nothing is in flight, the shrink to propose
     * (Kafka's {@code maybeShrinkIsr}), now the ISR state (until committed, the leaving followers still hold the high
     * watermark back); else null.
     */
    PartitionState.Pending proposeShrinkIsr() {
        Set<Integer> outOfSync = getOutOfSyncReplicas(context.replicaLagTimeMaxMs());
        if (partition.isLeader() && partitionState instanceof PartitionState.Committed committed
                && !outOfSync.isEmpty()) {
            List<Integer> isr = new ArrayList<>(committed.isr());
            isr.removeAll(outOfSync);
            LOGGER.info("{}Shrinking ISR from {} to {}. Leader: (highWatermark: {}, endOffset: {}). Out of sync "
                + "replicas: {}.", logPrefix, join(committed.isr()), join(isr), partition.highWatermark(),
                partition.log().logEndOffset(), describe(outOfSync));
            PartitionState.Pending proposal = new PartitionState.PendingShrinkIsr(outOfSync, proposal(isr),
                committed);
            partitionState = proposal;
            return proposal;
        }
        return null;
    }

    /**
     * Under either side: the ISR followers that are not caught up (Kafka's {@code getOutOfSyncReplicas}): neither at
     * the leader's log end offset nor caught up within {@code maxLagMs}, which covers both a stuck follower (no
     * fetch) and a slow one (fetching, never reaching the end). Empty while an ISR change is in flight.
     */
    Set<Integer> getOutOfSyncReplicas(long maxLagMs) {
        PartitionState current = partitionState;
        Set<Integer> outOfSync = new TreeSet<>();
        if (current.isInflight()) {
            return outOfSync;
        }
        long now = partition.time().milliseconds();
        long leaderEnd = partition.log().logEndOffset();
        for (int replica : current.isr()) {
            ReplicaState state = followers.get(replica);
            if (replica != localBrokerId && (state == null || !state.isCaughtUp(leaderEnd, now, maxLagMs))) {
                outOfSync.add(replica);
            }
        }
        return outOfSync;
    }

    /** Broker ids as Kafka's log lines print them: {@code 1,2,3}. */
    private static String join(List<Integer> ids) {
        StringBuilder out = new StringBuilder();
        ids.forEach(id -> out.append(out.length() == 0 ? "" : ",").append(id));
        return out.toString();
    }

    private String describe(Set<Integer> replicas) {
        StringBuilder out = new StringBuilder();
        for (int replica : replicas) {
            ReplicaState state = followers.get(replica);
            out.append(out.length() == 0 ? "" : " ").append("(brokerId: ").append(replica).append(", endOffset: ")
                .append(state == null ? "unknown" : String.valueOf(state.logEndOffset()))
                .append(", lastCaughtUpTimeMs: ")
                .append(state == null ? "unknown" : String.valueOf(state.lastCaughtUpTimeMs())).append(')');
        }
        return out.toString();
    }

    /**
     * The proposal of {@code isr} in the current leader and partition epochs, each member with its broker epoch:
     * this broker's own, a follower's as its fetches carried it, -1 when unknown (the controller then skips the
     * check for that member, which is safe: a member that restarted meanwhile was removed by the controller, and
     * the partition epoch moved).
     */
    private LeaderAndIsr proposal(List<Integer> isr) {
        List<LeaderAndIsr.Member> members = new ArrayList<>(isr.size());
        for (int replica : isr) {
            long epoch;
            if (replica == localBrokerId) {
                epoch = context.localBrokerEpoch().getAsLong();
            } else {
                ReplicaState state = followers.get(replica);
                epoch = state == null ? -1L : state.brokerEpoch().orElse(-1L);
            }
            members.add(new LeaderAndIsr.Member(replica, epoch));
        }
        PartitionRegistration reg = partition.registration();
        return new LeaderAndIsr(localBrokerId, reg.leaderEpoch(), members, reg.partitionEpoch());
    }

    /**
     * Under the write side: applies the controller's answer to {@code proposal} ({@code answer} on success, else
     * {@code failure}), unless the ISR state has moved on meanwhile (new metadata): then the answer is stale and
     * ignored.
     */
    AnswerOutcome onAlterPartitionAnswer(PartitionState.Pending proposal, LeaderAndIsr answer, Throwable failure) {
        if (!partitionState.equals(proposal)) {
            LOGGER.debug("{}Ignoring ISR update to {} since we have already updated state to {}", logPrefix,
                proposal, partitionState);
            return AnswerOutcome.NONE;
        }
        if (answer != null) {
            return handleAlterPartitionUpdate(proposal, answer) ? AnswerOutcome.ISR_CHANGED : AnswerOutcome.NONE;
        }
        return handleAlterPartitionError(proposal, Errors.forException(failure)) ? AnswerOutcome.RETRY
            : AnswerOutcome.NONE;
    }

    /**
     * A successful answer (under the write side): applied at once when it is of the current leader epoch and not
     * older than the partition epoch we know; a newer partition epoch means the controller committed the change,
     * an equal one that the ISR already was the proposed one. Either way the state is committed again.
     */
    private boolean handleAlterPartitionUpdate(PartitionState.Pending proposal, LeaderAndIsr answer) {
        PartitionRegistration reg = partition.registration();
        if (answer.leaderEpoch() != reg.leaderEpoch()) {
            LOGGER.debug("{}Ignoring new ISR {} since we have a stale leader epoch {}.", logPrefix, answer,
                reg.leaderEpoch());
            return false;
        }
        if (answer.partitionEpoch() < reg.partitionEpoch()) {
            LOGGER.debug("{}Ignoring new ISR {} since we have a newer version {}.", logPrefix, answer,
                reg.partitionEpoch());
            return false;
        }
        partition.setRegistration(new PartitionRegistration(reg.replicas(), answer.isr(), reg.leader(),
            reg.leaderEpoch(), answer.partitionEpoch()));
        partitionState = new PartitionState.Committed(answer.isr());
        LOGGER.info("{}ISR updated to {}{} and version updated to {}", logPrefix, join(answer.isr()),
            partition.isUnderMinIsr() ? " (under-min-isr)" : "", answer.partitionEpoch());
        return !answer.isr().equals(proposal.isr());
    }

    /**
     * A failed answer (under the write side), as Kafka handles it: INELIGIBLE_REPLICA and OPERATION_NOT_ATTEMPTED
     * mean the change was certainly not applied, so the last committed state comes back; an unknown topic or
     * partition, a fenced leader epoch, an invalid partition epoch or request, or a new leader elected leave the
     * state pending until new metadata replaces it; anything else (NOT_CONTROLLER, a timeout) is retried.
     *
     * @return whether to send the proposal again
     */
    private boolean handleAlterPartitionError(PartitionState.Pending proposal, Errors error) {
        switch (error) {
            case OPERATION_NOT_ATTEMPTED, INELIGIBLE_REPLICA -> {
                partitionState = proposal.lastCommitted();
                LOGGER.info("{}Failed to alter partition to {} since the controller rejected the request with {}. "
                    + "Partition state has been reset to the latest committed state {}.", logPrefix, proposal, error,
                    partitionState);
                return false;
            }
            case UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
                 INVALID_REQUEST, NEW_LEADER_ELECTED -> {
                LOGGER.debug("{}Failed to alter partition to {} ({}). Partition state may be out of sync, awaiting "
                    + "the latest metadata.", logPrefix, proposal, error);
                return false;
            }
            default -> {
                LOGGER.warn("{}Failed to update ISR to {} due to unexpected {}. Retrying.", logPrefix, proposal,
                    error);
                return true;
            }
        }
    }
}
