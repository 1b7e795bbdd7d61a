package io.cairn.isr;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.PartitionLog;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotEnoughReplicasException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.error.PolicyViolationException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The leader-side operations of one {@link Partition}: appends as leader (with the min-ISR check) and transaction
 * verification, the acks=all outcome, DeleteRecords and the low watermark, a follower's fetch recorded with the ISR
 * expansion and high watermark it may bring, the ISR shrink, and the AlterPartition round trip of a proposal (Kafka's
 * {@code appendRecordsToLeader}, {@code checkEnoughReplicasReachOffset}, {@code deleteRecordsOnLeader},
 * {@code updateFollowerFetchState}, {@code maybeExpandIsr}, {@code maybeShrinkIsr}, {@code submitAlterPartition}).
 * The leader's replication state and the decisions on it are {@link PartitionIsr}'s; this class takes the lock,
 * asks it, and wakes the waiters of the broker's purgatory (acks=all, delayed fetches, DeleteRecords) through the
 * partition's {@link PartitionListener}.
 *
 * <p>Thread-safety: a package-private collaborator of {@link Partition} without state of its own. Each method takes
 * the partition's state lock ({@code Partition.stateLock}, handed in) itself, for as long and on the side it says
 * (the read side for appends, reads of the ISR state and recording a fetch; the write side only to make a proposal
 * the ISR state or to apply its answer), calls {@link PartitionIsr} under it, and calls the listener only once the
 * lock is released. No lock is held while the proposal goes to the controller.
 */
final class PartitionLeader {

    /** The partition's logger: these are the partition's log lines, under the name Kafka users filter on. */
    private static final Logger LOGGER = LogManager.getLogger(Partition.class);

    private final Partition partition;
    private final PartitionIsr isr;
    private final ReentrantReadWriteLock stateLock;
    private final PartitionListener listener;
    private final IsrContext isrContext;
    private final String logPrefix;

    PartitionLeader(Partition partition, PartitionIsr isr, ReentrantReadWriteLock stateLock,
                    PartitionListener listener, IsrContext isrContext, String logPrefix) {
        this.partition = partition;
        this.isr = isr;
        this.stateLock = stateLock;
        this.listener = listener;
        this.isrContext = isrContext;
        this.logPrefix = logPrefix;
    }

    /**
     * Appends a producer's (or a coordinator's) batches as leader in the current leader epoch, under the read side,
     * with the transaction verification guard of {@link #maybeStartTransactionVerification} (KIP-890; null when the
     * broker does not verify). With {@code requiredAcks} = -1 the ISR must have at least {@code min.insync.replicas}
     * members first (NOT_ENOUGH_REPLICAS). The returned append may still be above the high watermark: acks=all waits
     * in the purgatory, which the listener wakes when the high watermark moves.
     */
    LogAppendInfo appendRecordsToLeader(ByteBuffer records, AppendOrigin origin, int requiredAcks,
                                        VerificationGuard verification) {
        LogAppendInfo info;
        stateLock.readLock().lock();
        try {
            PartitionRegistration reg = partition.registration();
            if (reg.leader() != partition.localBrokerId()) {
                throw partition.notLeader();
            }
            List<Integer> inSync = isr.state().isr();
            int minIsr = isr.effectiveMinIsr();
            if (requiredAcks == -1 && inSync.size() < minIsr) {
                throw new NotEnoughReplicasException("The size of the current ISR " + inSync
                    + " is insufficient to satisfy the min.isr requirement of " + minIsr
                    + " for partition " + partition.topicPartition());
            }
            info = partition.log().appendAsLeader(records, reg.leaderEpoch(), origin, verification);
        } finally {
            stateLock.readLock().unlock();
        }
        if (!info.duplicate()) {
            listener.onLogEndOffsetAdvanced(partition);
        }
        maybeIncrementHighWatermark(partition.time().milliseconds());
        return info;
    }

    /**
     * Under the read side: starts verifying a transactional batch of {@code producerId} as leader (Kafka's
     * {@code Partition.maybeStartTransactionVerification}): the guard its append must carry, or
     * {@link VerificationGuard#SENTINEL} when the transaction is already ongoing here; NOT_LEADER_OR_FOLLOWER when
     * this broker does not lead. {@code supportsEpochBump}: the producer speaks transaction.version 2 (Produce v12+).
     */
    VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short epoch,
                                                        boolean supportsEpochBump) {
        stateLock.readLock().lock();
        try {
            if (partition.registration().leader() != partition.localBrokerId()) {
                throw partition.notLeader();
            }
            return partition.log().maybeStartTransactionVerification(producerId, sequence, epoch, supportsEpochBump);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * Without the lock: whether {@code requiredOffset}, appended in leader epoch {@code appendLeaderEpoch}, is
     * replicated to the ISR (Kafka's {@code checkEnoughReplicasReachOffset}): empty while the high watermark is below
     * it; NOT_LEADER_OR_FOLLOWER once the partition left this broker or is in another leader epoch, even one this
     * broker leads again (the new epoch's leader may have truncated the append away before this broker took over);
     * once reached NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR (a joining replica counts, see
     * {@link PartitionState}) is smaller than the effective {@code min.insync.replicas}: the ISR shrank after the
     * append.
     */
    Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset, int appendLeaderEpoch) {
        if (partition.isRemoved() || !partition.isLeader() || partition.leaderEpoch() != appendLeaderEpoch) {
            return Optional.of(Errors.NOT_LEADER_OR_FOLLOWER);
        }
        List<Integer> maximalIsr = isr.state().maximalIsr();
        if (partition.highWatermark() < requiredOffset) {
            return Optional.empty();
        }
        return Optional.of(maximalIsr.size() < isr.effectiveMinIsr()
            ? Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND : Errors.NONE);
    }

    /**
     * Under the read side: DeleteRecords on the leader (Kafka's {@code deleteRecordsOnLeader}): moves the log start
     * offset up to {@code offset} ({@link Partition#DELETE_TO_HIGH_WATERMARK}: the high watermark) and returns the
     * offset the request waits for with the low watermark now. A topic whose {@code cleanup.policy} lacks
     * {@code delete} is POLICY_VIOLATION, a negative offset or one above the high watermark OFFSET_OUT_OF_RANGE; the
     * log start offset never moves down.
     *
     * @throws NotLeaderOrFollowerException when this broker does not lead the partition
     */
    Partition.DeleteRecordsResult deleteRecordsOnLeader(long offset) {
        stateLock.readLock().lock();
        try {
            if (partition.isRemoved() || partition.registration().leader() != partition.localBrokerId()) {
                throw partition.notLeader();
            }
            PartitionLog log = partition.log();
            if (!log.config().delete()) {
                throw new PolicyViolationException("Records of partition " + partition.topicPartition()
                    + " can not be deleted due to the configured policy");
            }
            long requested = offset == Partition.DELETE_TO_HIGH_WATERMARK ? partition.highWatermark() : offset;
            if (requested < 0) {
                throw new OffsetOutOfRangeException("The offset " + requested + " for partition "
                    + partition.topicPartition() + " is not valid");
            }
            if (requested > partition.highWatermark()) {
                throw new OffsetOutOfRangeException("Cannot increment the log start offset to " + requested
                    + " of partition " + partition.topicPartition() + " since it is larger than the high watermark "
                    + partition.highWatermark());
            }
            if (requested > log.logStartOffset()) {
                log.deleteRecordsBefore(requested);
                LOGGER.info("{}Incremented log start offset to {} due to client delete records request", logPrefix,
                    requested);
            }
            return new Partition.DeleteRecordsResult(requested, isr.lowWatermark());
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * Without the lock: the low watermark (Kafka's {@code lowWatermarkIfLeader}, {@link PartitionIsr#lowWatermark}).
     *
     * @throws NotLeaderOrFollowerException when this broker does not lead the partition
     */
    long lowWatermarkIfLeader() {
        if (partition.isRemoved() || !partition.isLeader()) {
            throw partition.notLeader();
        }
        return isr.lowWatermark();
    }

    /**
     * Records a follower's fetch (Kafka's {@code updateFollowerFetchState}): its position is its fetch offset, its
     * last caught-up time follows {@link ReplicaState#afterFetch}; then the follower may join the ISR
     * ({@link #maybeExpandIsr}) and a moved position may move the high watermark. {@code leaderEndOffset} is the
     * leader's log end offset before the read, so appends after the fetch do not keep the follower from counting as
     * caught up. A replica that is not assigned is ignored. A fetch carrying a broker epoch older than the metadata's
     * for that broker (a fetch of an earlier incarnation; -1: none) is refused with NOT_LEADER_OR_FOLLOWER (KIP-903).
     *
     * <p>A follower of the committed ISR (the steady state: every fetch of every replicated partition) has nothing to
     * join, so its position and the high watermark move under one hold of the read lock, as Kafka takes its lock
     * once here; any other follower goes through {@link #maybeExpandIsr} first. The waiters hear of a moved high
     * watermark once the lock is released.
     */
    void updateFollowerFetchState(int replicaId, long fetchOffset, long followerStartOffset, long fetchTimeMs,
                                  long leaderEndOffset, long brokerEpoch) {
        ReplicaState before = isr.follower(replicaId);
        boolean endMoved = before == null || before.logEndOffset() != fetchOffset;
        boolean inIsr;
        boolean advanced = false;
        stateLock.readLock().lock();
        try {
            if (!isr.recordFetch(replicaId, fetchOffset, followerStartOffset, fetchTimeMs, leaderEndOffset,
                    brokerEpoch)) {
                return;
            }
            inIsr = isr.state().isr().contains(replicaId);
            if (inIsr && endMoved) {
                advanced = isr.maybeIncrementHighWatermark(fetchTimeMs);
            }
        } finally {
            stateLock.readLock().unlock();
        }
        if (!inIsr) {
            maybeExpandIsr(replicaId);
            if (endMoved) {
                maybeIncrementHighWatermark(fetchTimeMs);
            }
        } else if (advanced) {
            listener.onHighWatermarkAdvanced(partition);
        }
        if (before == null || before.logStartOffset() != followerStartOffset) {
            listener.onLogStartOffsetChanged(partition);
        }
    }

    /** {@link PartitionIsr#maybeIncrementHighWatermark} under the read lock; wakes the waiters when it moved. */
    void maybeIncrementHighWatermark(long nowMs) {
        boolean advanced;
        stateLock.readLock().lock();
        try {
            advanced = isr.maybeIncrementHighWatermark(nowMs);
        } finally {
            stateLock.readLock().unlock();
        }
        if (advanced) {
            listener.onHighWatermarkAdvanced(partition);
        }
    }

    /**
     * Adds {@code replicaId} to the ISR when it has caught up (Kafka's {@code maybeExpandIsr}, the rule in
     * {@link PartitionIsr#needsExpandIsr}): checked under the read lock, then again under the write lock before the
     * proposal becomes the ISR state. The proposal goes to the controller; until it is answered the replica already
     * counts for the high watermark and acks=all.
     */
    private void maybeExpandIsr(int replicaId) {
        proposeIsrChange(() -> isr.needsExpandIsr(replicaId), () -> isr.proposeExpandIsr(replicaId));
    }

    /**
     * Removes from the ISR the followers that have not caught up for {@code replica.lag.time.max.ms} (Kafka's
     * {@code maybeShrinkIsr}, run by the broker's ISR expiration task; the rule in
     * {@link PartitionIsr#needsShrinkIsr}): checked under the read lock, then again under the write lock before the
     * proposal becomes the ISR state. Nothing happens while a change is in flight. The shrink takes effect only
     * once the controller committed it: until then the leaving followers still hold the high watermark back.
     */
    void maybeShrinkIsr() {
        proposeIsrChange(isr::needsShrinkIsr, isr::proposeShrinkIsr);
    }

    /**
     * An ISR change: nothing while a change is in flight; else {@code needed} under the read lock, then
     * {@code propose} under the write lock (it checks again and makes its proposal the ISR state, or answers null),
     * and the proposal goes to the controller once the lock is released.
     */
    private void proposeIsrChange(BooleanSupplier needed, Supplier<PartitionState.Pending> propose) {
        if (isr.state().isInflight()) {
            return;
        }
        boolean changeNeeded;
        stateLock.readLock().lock();
        try {
            changeNeeded = needed.getAsBoolean();
        } finally {
            stateLock.readLock().unlock();
        }
        if (!changeNeeded) {
            return;
        }
        PartitionState.Pending proposal;
        stateLock.writeLock().lock();
        try {
            proposal = propose.get();
        } finally {
            stateLock.writeLock().unlock();
        }
        if (proposal != null) {
            submitAlterPartition(proposal);
        }
    }

    /**
     * Sends {@code proposal} to the controller and applies the answer under the write lock (Kafka's
     * {@code submitAlterPartition}; {@link PartitionIsr#onAlterPartitionAnswer}), then moves the high watermark and
     * wakes the waiters when the ISR changed, or sends it again.
     */
    private void submitAlterPartition(PartitionState.Pending proposal) {
        LOGGER.debug("{}Submitting ISR state change {}", logPrefix, proposal);
        CompletableFuture<LeaderAndIsr> answer = isrContext.alterPartitionManager().submit(partition.topicPartition(),
            partition.topicId(), proposal.sent());
        answer.whenComplete((leaderAndIsr, failure) -> {
            PartitionIsr.AnswerOutcome outcome;
            stateLock.writeLock().lock();
            try {
                outcome = isr.onAlterPartitionAnswer(proposal, leaderAndIsr, failure);
            } finally {
                stateLock.writeLock().unlock();
            }
            if (outcome == PartitionIsr.AnswerOutcome.ISR_CHANGED) {
                maybeIncrementHighWatermark(partition.time().milliseconds());
                listener.onIsrChanged(partition);
            } else if (outcome == PartitionIsr.AnswerOutcome.RETRY) {
                submitAlterPartition(proposal);
            }
        });
    }
}
