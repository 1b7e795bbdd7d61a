package io.cairn.isr;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.TimestampAndOffset;
import io.cairn.log.UnexpectedAppendOffsetException;
import io.cairn.log.epoch.LeaderEpochCache;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.NotEnoughReplicasException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.error.PolicyViolationException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.BinaryOperator;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One partition hosted by this broker (Kafka's {@code Partition}): its log, its replication state as the metadata
 * quorum committed it (replicas, ISR, leader, leader epoch), and the high watermark, the smallest log end offset
 * among the in-sync replicas. A single broker is the case replicas = ISR = {this broker}: every leader append moves
 * the high watermark to the log end offset at once, through the same code that waits for followers.
 *
 * <p>Nothing waits inside a partition: whoever waits for an offset (acks=all, a delayed fetch, a coordinator write)
 * sits in the broker's purgatory, and this class tells its {@link PartitionListener} when the log end offset, the
 * high watermark, the ISR or the leadership changed, so that the purgatory retries exactly those operations.
 *
 * <p>Thread-safety: thread-safe. Appends and reads hold the read side of {@link #stateLock}, leadership changes
 * the write side, so an append never runs under a stale leader epoch. The high watermark is volatile, changed under
 * this object's monitor (several holders of the read side may move it at once), and only grows while this broker
 * leads.
 *
 * <p>A replica move between log directories (AlterReplicaLogDirs, Kafka's future replica) gives the partition a
 * {@link #futureLog()} that its mover thread fills from the current log ({@link #copyToFutureLog}) and then swaps in
 * under the write side of {@link #stateLock} ({@link #maybeReplaceCurrentWithFutureLog}), so no append, read or
 * truncation sees the swap half done.
 *
 * <p>Design note: this class owns the state (log, registration, high watermark, removal) and the lock; a method that
 * needs the lock takes it here, calls one of four package-private collaborators under it, and tells the listener
 * after releasing it (getters of volatile state take no lock, as before the split). The collaborators hold no lock
 * of their own and are called only this way:
 * {@link PartitionIsr} (the leader side: followers' positions, ISR state, high watermark computation, expand and
 * shrink, AlterPartition answers), {@link PartitionReads} (records, ListOffsets, OffsetForLeaderEpoch),
 * {@link PartitionFollower} (the fetcher's appends, truncations, high watermark and log start) and
 * {@link PartitionFutureLog} (a replica move's future log and swap). Each says which side of the lock guards it.
 */
public final class Partition {

    private static final Logger LOGGER = LogManager.getLogger(Partition.class);
    /** Kafka's state-change logger, by Kafka's name ({@code state-change.log} in Kafka's log4j2 layout). */
    private static final Logger STATE_CHANGE_LOGGER = LogManager.getLogger("state.change.logger");
    /** A request that names no leader epoch ({@code current_leader_epoch} = -1) skips the epoch check. */
    public static final int NO_EPOCH = -1;
    /** ListOffsets timestamp (v9+): the highest offset in tiered storage; -1 here, as Kafka without tiering. */
    public static final long LATEST_TIERED_TIMESTAMP = -5L;
    /** DeleteRecords offset -1: up to the high watermark (Kafka's {@code DeleteRecordsRequest.HIGH_WATERMARK}). */
    public static final long DELETE_TO_HIGH_WATERMARK = -1L;

    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final int localBrokerId;
    /** Replaced only by {@link #maybeReplaceCurrentWithFutureLog}, under the write side of {@link #stateLock}. */
    private volatile PartitionLog log;
    private final PartitionListener listener;
    /** The lock of this partition and of its four collaborators (see the class comment). */
    private final ReentrantReadWriteLock stateLock = new ReentrantReadWriteLock();
    private final Time time;
    private final String logPrefix;
    private final IsrContext isrContext;
    private final PartitionReads reads;
    private final PartitionIsr isr;
    private final PartitionFollower follower;
    private final PartitionFutureLog future;
    /** Written under the write side of {@link #stateLock}; read anywhere. */
    private volatile PartitionRegistration registration;
    private volatile int minInsyncReplicas;
    /** Written under this object's monitor by whoever moves it ({@link #advanceHighWatermark}); read anywhere. */
    private volatile long highWatermark;
    /** Set once by {@link #close} (the partition left this broker); read by waiters deciding to give up. */
    private volatile boolean removed;

    Partition(TopicPartition topicPartition, Uuid topicId, int localBrokerId, PartitionLog log,
              PartitionRegistration registration, int minInsyncReplicas, PartitionListener listener, Time time,
              IsrContext isrContext) {
        this.time = time;
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.localBrokerId = localBrokerId;
        this.log = log;
        this.listener = listener;
        this.isrContext = isrContext;
        this.minInsyncReplicas = minInsyncReplicas;
        this.logPrefix = "[Partition " + topicPartition + " broker=" + localBrokerId + "] ";
        this.reads = new PartitionReads(this);
        this.isr = new PartitionIsr(this, reads, isrContext, localBrokerId, logPrefix);
        this.follower = new PartitionFollower(this, logPrefix);
        this.future = new PartitionFutureLog(this, logPrefix);
        this.highWatermark = log.logStartOffset();
        log.updateHighWatermark(highWatermark);
        update(registration);
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public String topic() {
        return topicPartition.topic();
    }

    public int partitionIndex() {
        return topicPartition.partition();
    }

    public Uuid topicId() {
        return topicId;
    }

    /** The partition's log; for reads and tests. Appends go through {@link #appendRecordsToLeader}. */
    public PartitionLog log() {
        return log;
    }

    /** The replication state last committed by the metadata quorum. */
    public PartitionRegistration registration() {
        return registration;
    }

    public int leaderEpoch() {
        return registration.leaderEpoch();
    }

    public int leaderId() {
        return registration.leader();
    }

    public boolean isLeader() {
        return registration.leader() == localBrokerId;
    }

    public long highWatermark() {
        return highWatermark;
    }

    public long logStartOffset() {
        return log.logStartOffset();
    }

    public long logEndOffset() {
        return log.logEndOffset();
    }

    /** The first offset a read_committed consumer may not read yet: the oldest open transaction, or the HW. */
    public long lastStableOffset() {
        long hw = highWatermark;
        long unstable = log.firstUnstableOffset();
        return unstable >= 0 ? Math.min(unstable, hw) : hw;
    }

    public int minInsyncReplicas() {
        return minInsyncReplicas;
    }

    void setMinInsyncReplicas(int value) {
        this.minInsyncReplicas = value;
    }

    /**
     * Applies a committed registration. One older than the partition epoch this broker knows (an AlterPartition
     * answer may have taught it a newer one first) is skipped; a newer one (or one of another leader epoch) replaces
     * the ISR state, dropping a change in flight (its answer will then be ignored: the controller refuses a change
     * based on an older partition epoch). The registration of the partition epoch we already have (the metadata's
     * echo of an answer applied earlier) keeps a change in flight: that change is based on this very epoch and may
     * still be committed, so dropping it would let the high watermark pass a replica that is about to join (Kafka
     * resets the state here; the simulation test found that window). Becoming leader (or a new leader epoch while
     * leading) resets the followers' state and recomputes the high watermark; the listener hears of a leadership or
     * ISR change, so that waiters re-check.
     */
    void update(PartitionRegistration newRegistration) {
        boolean leadershipChanged;
        boolean isrChanged;
        stateLock.writeLock().lock();
        try {
            PartitionRegistration old = registration;
            if (old != null && newRegistration.partitionEpoch() < old.partitionEpoch()) {
                STATE_CHANGE_LOGGER.info("{}Skipped the state change to {} since the partition is already at a "
                    + "newer partition epoch {}.", logPrefix, newRegistration, old.partitionEpoch());
                return;
            }
            leadershipChanged = old == null || old.leaderEpoch() != newRegistration.leaderEpoch()
                || old.leader() != newRegistration.leader();
            isrChanged = old != null && !old.isr().equals(newRegistration.isr());
            registration = newRegistration;
            isr.onRegistration(old, newRegistration);
            boolean leader = newRegistration.leader() == localBrokerId;
            if (old == null || old.leaderEpoch() != newRegistration.leaderEpoch()) {
                STATE_CHANGE_LOGGER.info("{}{} in leader epoch {} with partition epoch {} (replicas {}, isr {}{}), "
                    + "log end offset {}, high watermark {}", logPrefix,
                    leader ? "Leader" : "Follower of broker " + newRegistration.leader(),
                    newRegistration.leaderEpoch(), newRegistration.partitionEpoch(), newRegistration.replicas(),
                    newRegistration.isr(), leader && isUnderMinIsr() ? " (under-min-isr)" : "", log.logEndOffset(),
                    highWatermark);
            }
        } finally {
            stateLock.writeLock().unlock();
        }
        maybeIncrementHighWatermark(time.milliseconds());
        if (leadershipChanged) {
            listener.onLeadershipChanged(this);
        } else if (isrChanged) {
            listener.onIsrChanged(this);
        }
    }

    /**
     * Checks a request's {@code current_leader_epoch} against ours (Kafka's rule): older is FENCED_LEADER_EPOCH,
     * newer is UNKNOWN_LEADER_EPOCH (our metadata lags), {@link #NO_EPOCH} always passes; then, when
     * {@code requireLeader}, that this broker leads.
     */
    public void checkLeaderEpoch(int currentLeaderEpoch, boolean requireLeader) {
        PartitionRegistration reg = registration;
        if (currentLeaderEpoch != NO_EPOCH) {
            if (currentLeaderEpoch < reg.leaderEpoch()) {
                throw new FencedLeaderEpochException("The leader epoch " + currentLeaderEpoch + " of the request "
                    + "is older than the current leader epoch " + reg.leaderEpoch() + " of " + topicPartition);
            }
            if (currentLeaderEpoch > reg.leaderEpoch()) {
                throw new UnknownLeaderEpochException("The leader epoch " + currentLeaderEpoch + " of the request "
                    + "is newer than the current leader epoch " + reg.leaderEpoch() + " of " + topicPartition);
            }
        }
        if (requireLeader && reg.leader() != localBrokerId) {
            throw notLeader();
        }
    }

    private NotLeaderOrFollowerException notLeader() {
        return new NotLeaderOrFollowerException("Broker " + localBrokerId + " is not the leader of " + topicPartition
            + " (leader " + registration.leader() + ")");
    }

    /**
     * Appends a producer's (or a coordinator's) batches as leader in the current leader epoch. With
     * {@code requiredAcks} = -1 the ISR must have at least {@code min.insync.replicas} members first
     * (NOT_ENOUGH_REPLICAS). The returned append may still be above the high watermark: acks=all waits in the
     * purgatory, which the listener wakes when the high watermark moves.
     */
    public LogAppendInfo appendRecordsToLeader(ByteBuffer records, AppendOrigin origin, int requiredAcks) {
        return appendRecordsToLeader(records, origin, requiredAcks, null);
    }

    /**
     * As {@link #appendRecordsToLeader(ByteBuffer, AppendOrigin, int)} with the transaction verification guard of
     * {@link #maybeStartTransactionVerification} (KIP-890; null when the broker does not verify).
     */
    public LogAppendInfo appendRecordsToLeader(ByteBuffer records, AppendOrigin origin, int requiredAcks,
                                               VerificationGuard verification) {
        LogAppendInfo info;
        stateLock.readLock().lock();
        try {
            PartitionRegistration reg = registration;
            if (reg.leader() != localBrokerId) {
                throw notLeader();
            }
            List<Integer> inSync = isr.state().isr();
            int minIsr = effectiveMinIsr();
            if (requiredAcks == -1 && inSync.size() < minIsr) {
                throw new NotEnoughReplicasException("The size of the current ISR " + inSync
                    + " is insufficient to satisfy the min.isr requirement of " + minIsr
                    + " for partition " + topicPartition);
            }
            info = log.appendAsLeader(records, reg.leaderEpoch(), origin, verification);
        } finally {
            stateLock.readLock().unlock();
        }
        if (!info.duplicate()) {
            listener.onLogEndOffsetAdvanced(this);
        }
        maybeIncrementHighWatermark(time.milliseconds());
        return info;
    }

    /**
     * Starts verifying a transactional batch of {@code producerId} as leader (Kafka's
     * {@code Partition.maybeStartTransactionVerification}): the guard its append must carry, or
     * {@link VerificationGuard#SENTINEL} when the transaction is already ongoing here; NOT_LEADER_OR_FOLLOWER when
     * this broker does not lead.
     */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short epoch) {
        return maybeStartTransactionVerification(producerId, sequence, epoch, false);
    }

    /** As above; {@code supportsEpochBump}: the producer speaks transaction.version 2 (Produce v12+). */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short epoch,
                                                               boolean supportsEpochBump) {
        stateLock.readLock().lock();
        try {
            if (registration.leader() != localBrokerId) {
                throw notLeader();
            }
            return log.maybeStartTransactionVerification(producerId, sequence, epoch, supportsEpochBump);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * Whether {@code requiredOffset} is replicated to the ISR (Kafka's {@code checkEnoughReplicasReachOffset}):
     * empty while the high watermark is below it; NOT_LEADER_OR_FOLLOWER once this broker stopped leading or the
     * partition left it; once reached NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the maximal ISR (a joining
     * replica counts, see {@link PartitionState}) is smaller than the effective {@code min.insync.replicas}: the ISR
     * shrank after the append.
     */
    public Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset) {
        return checkEnoughReplicasReachOffset(requiredOffset, leaderEpoch());
    }

    /**
     * As {@link #checkEnoughReplicasReachOffset(long)} for an append made in leader epoch {@code appendLeaderEpoch}:
     * NOT_LEADER_OR_FOLLOWER as soon as the partition is in another leader epoch, even when this broker leads it
     * again, since the new epoch's leader may have truncated the append away before this broker took over.
     */
    public Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset, int appendLeaderEpoch) {
        if (removed || !isLeader() || leaderEpoch() != appendLeaderEpoch) {
            return Optional.of(Errors.NOT_LEADER_OR_FOLLOWER);
        }
        List<Integer> maximalIsr = isr.state().maximalIsr();
        if (highWatermark < requiredOffset) {
            return Optional.empty();
        }
        return Optional.of(maximalIsr.size() < effectiveMinIsr()
            ? Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND : Errors.NONE);
    }

    /**
     * {@code min.insync.replicas} bounded by the replication factor (Kafka's {@code effectiveMinIsr}, since 3.7): a
     * topic whose setting exceeds its replica count is held to all its replicas, not made unwritable.
     */
    private int effectiveMinIsr() {
        return Math.min(minInsyncReplicas, registration.replicas().size());
    }

    /**
     * DeleteRecords on the leader (Kafka's {@code deleteRecordsOnLeader}): moves the log start offset up to
     * {@code offset} (-1: the high watermark) and returns the offset the request waits for with the low watermark
     * now. A topic whose {@code cleanup.policy} lacks {@code delete} is POLICY_VIOLATION, a negative offset or one
     * above the high watermark OFFSET_OUT_OF_RANGE; the log start offset never moves down.
     *
     * @throws NotLeaderOrFollowerException when this broker does not lead the partition
     */
    public DeleteRecordsResult deleteRecordsOnLeader(long offset) {
        stateLock.readLock().lock();
        try {
            if (removed || registration.leader() != localBrokerId) {
                throw notLeader();
            }
            if (!log.config().delete()) {
                throw new PolicyViolationException("Records of partition " + topicPartition
                    + " can not be deleted due to the configured policy");
            }
            long requested = offset == DELETE_TO_HIGH_WATERMARK ? highWatermark : offset;
            if (requested < 0) {
                throw new OffsetOutOfRangeException("The offset " + requested + " for partition " + topicPartition
                    + " is not valid");
            }
            if (requested > highWatermark) {
                throw new OffsetOutOfRangeException("Cannot increment the log start offset to " + requested
                    + " of partition " + topicPartition + " since it is larger than the high watermark "
                    + highWatermark);
            }
            if (requested > log.logStartOffset()) {
                log.deleteRecordsBefore(requested);
                LOGGER.info("{}Incremented log start offset to {} due to client delete records request", logPrefix,
                    requested);
            }
            return new DeleteRecordsResult(requested, isr.lowWatermark());
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * The low watermark (Kafka's {@code lowWatermarkIfLeader}): the smallest log start offset of this replica and of
     * every other replica on a live (unfenced) broker, as their fetches reported it (-1 before a follower's first
     * fetch).
     *
     * @throws NotLeaderOrFollowerException when this broker does not lead the partition
     */
    public long lowWatermarkIfLeader() {
        if (removed || !isLeader()) {
            throw notLeader();
        }
        return isr.lowWatermark();
    }

    /**
     * What {@link #deleteRecordsOnLeader} did: the offset the log now starts at on the leader (the request's offset
     * resolved) and the low watermark right after.
     */
    public record DeleteRecordsResult(long requestedOffset, long lowWatermark) {
    }

    /** True when this broker leads and the committed ISR is smaller than the effective min ISR. */
    public boolean isUnderMinIsr() {
        return isLeader() && isr.state().isr().size() < effectiveMinIsr();
    }

    /** The committed ISR (while an ISR change is in flight, the one it is based on). */
    public List<Integer> inSyncReplicaIds() {
        return isr.state().isr();
    }

    /** True once the partition left this broker (its topic was deleted, or the broker is stopping). */
    public boolean isRemoved() {
        return removed;
    }

    /** What this broker, as leader, knows of follower {@code replicaId}; empty for an unknown replica. */
    public Optional<ReplicaState> followerState(int replicaId) {
        return Optional.ofNullable(isr.follower(replicaId));
    }

    /** {@link #updateFollowerFetchState(int, long, long, long, long, long)} of a fetch without broker epoch. */
    public void updateFollowerFetchState(int replicaId, long fetchOffset, long followerStartOffset, long fetchTimeMs,
                                         long leaderEndOffset) {
        updateFollowerFetchState(replicaId, fetchOffset, followerStartOffset, fetchTimeMs, leaderEndOffset, -1L);
    }

    /**
     * Records a follower's fetch (Kafka's {@code updateFollowerFetchState}): its position is its fetch offset, its
     * last caught-up time follows {@link ReplicaState#afterFetch}; then the follower may join the ISR
     * ({@link #maybeExpandIsr}) and a moved position may move the high watermark. {@code leaderEndOffset} is the
     * leader's log end offset before the read, so appends after the fetch do not keep the follower from counting as
     * caught up. A replica that is not assigned is ignored. A fetch carrying a broker epoch older than the metadata's
     * for that broker (a fetch of an earlier incarnation) is refused with NOT_LEADER_OR_FOLLOWER (KIP-903).
     *
     * <p>A follower of the committed ISR (the steady state: every fetch of every replicated partition) has nothing to
     * join, so its position and the high watermark move under one hold of the read lock, as Kafka takes its lock
     * once here; any other follower goes through {@link #maybeExpandIsr} first. The waiters hear of a moved high
     * watermark once the lock is released, as before.
     */
    public void updateFollowerFetchState(int replicaId, long fetchOffset, long followerStartOffset, long fetchTimeMs,
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
            listener.onHighWatermarkAdvanced(this);
        }
        if (before == null || before.logStartOffset() != followerStartOffset) {
            listener.onLogStartOffsetChanged(this);
        }
    }

    /** {@link PartitionIsr#maybeIncrementHighWatermark} under the read lock; wakes the waiters when it moved. */
    private void maybeIncrementHighWatermark(long nowMs) {
        boolean advanced;
        stateLock.readLock().lock();
        try {
            advanced = isr.maybeIncrementHighWatermark(nowMs);
        } finally {
            stateLock.readLock().unlock();
        }
        if (advanced) {
            listener.onHighWatermarkAdvanced(this);
        }
    }

    /**
     * Adds {@code replicaId} to the ISR when it has caught up (Kafka's {@code maybeExpandIsr}, the rule in
     * {@link PartitionIsr#needsExpandIsr}): checked under the read lock, then again under the write lock before the
     * proposal becomes the ISR state. The proposal goes to the controller; until it is answered the replica already
     * counts for the high watermark and acks=all.
     */
    private void maybeExpandIsr(int replicaId) {
        if (isr.state().isInflight()) {
            return;
        }
        boolean needed;
        stateLock.readLock().lock();
        try {
            needed = isr.needsExpandIsr(replicaId);
        } finally {
            stateLock.readLock().unlock();
        }
        if (!needed) {
            return;
        }
        PartitionState.Pending proposal;
        stateLock.writeLock().lock();
        try {
            proposal = isr.proposeExpandIsr(replicaId);
        } finally {
            stateLock.writeLock().unlock();
        }
        if (proposal != null) {
            submitAlterPartition(proposal);
        }
    }

    /**
     * Removes from the ISR the followers that have not caught up for {@code replica.lag.time.max.ms} (Kafka's
     * {@code maybeShrinkIsr}, run by the broker's ISR expiration task). Nothing happens while a change is in flight.
     * The shrink takes effect only once the controller committed it: until then the leaving followers still hold
     * the high watermark back.
     */
    public void maybeShrinkIsr() {
        if (isr.state().isInflight()) {
            return;
        }
        boolean needed;
        stateLock.readLock().lock();
        try {
            needed = isr.needsShrinkIsr();
        } finally {
            stateLock.readLock().unlock();
        }
        if (!needed) {
            return;
        }
        PartitionState.Pending proposal;
        stateLock.writeLock().lock();
        try {
            proposal = isr.proposeShrinkIsr();
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
        CompletableFuture<LeaderAndIsr> answer = isrContext.alterPartitionManager().submit(topicPartition, topicId,
            proposal.sent());
        answer.whenComplete((leaderAndIsr, failure) -> {
            PartitionIsr.AnswerOutcome outcome;
            stateLock.writeLock().lock();
            try {
                outcome = isr.onAlterPartitionAnswer(proposal, leaderAndIsr, failure);
            } finally {
                stateLock.writeLock().unlock();
            }
            if (outcome == PartitionIsr.AnswerOutcome.ISR_CHANGED) {
                maybeIncrementHighWatermark(time.milliseconds());
                listener.onIsrChanged(this);
            } else if (outcome == PartitionIsr.AnswerOutcome.RETRY) {
                submitAlterPartition(proposal);
            }
        });
    }

    /**
     * Restores the high watermark checkpointed before a restart, bounded by the log start and end offsets (Kafka's
     * {@code UnifiedLog.updateHighWatermark}), so that consumers see what they saw before at once instead of
     * waiting for the followers to report again. Never lowers the high watermark.
     */
    void restoreHighWatermark(long checkpointed) {
        long bounded = Math.min(Math.max(checkpointed, log.logStartOffset()), log.logEndOffset());
        if (advanceHighWatermark(bounded)) {
            listener.onHighWatermarkAdvanced(this);
        }
    }

    /**
     * Marks the partition as gone from this broker (topic deleted, broker stopping); the caller then tells the
     * listener, so that the operations waiting on it answer at once.
     */
    void close() {
        removed = true;
    }

    // ----- replica move between log directories (Kafka's future replica): PartitionFutureLog ------------------

    /** The future log of a move in progress, if any. */
    public Optional<PartitionLog> futureLog() {
        return Optional.ofNullable(future.get());
    }

    /** Starts a move: {@code futureLog} (of another log directory) becomes the future log. */
    void setFutureLog(PartitionLog futureLog) {
        stateLock.writeLock().lock();
        try {
            future.set(futureLog);
        } finally {
            stateLock.writeLock().unlock();
        }
    }

    /** Ends a move without swapping (cancelled, or the partition leaves); returns the future log it had. */
    PartitionLog removeFutureLog() {
        stateLock.writeLock().lock();
        try {
            return future.set(null);
        } finally {
            stateLock.writeLock().unlock();
        }
    }

    /** How far the future log is behind the current one (Kafka's DescribeLogDirs lag of a future log), or -1. */
    public long futureLogLag() {
        return future.lag();
    }

    /** Roughly how many bytes the future log is behind the current one (their sizes' difference), or -1. */
    long futureLogBytesBehind() {
        return future.bytesBehind();
    }

    /**
     * One copy step of the move ({@link PartitionFutureLog#copy}, under the read lock): the bytes copied, -1 when
     * there is no move (any more).
     */
    int copyToFutureLog(int maxBytes) {
        stateLock.readLock().lock();
        try {
            return future.copy(maxBytes);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * Swaps the future log in when it catches up within {@code maxSteps} copy steps of {@code maxBytes} (Kafka's
     * {@code maybeReplaceCurrentWithFutureReplica}, with the last steps taken here). Under the write side of the
     * state lock, so appends wait (for at most those steps): the future copies the rest, must then end where the
     * current log ends in the same epoch, takes the current log start offset, is fsynced, and {@code swap} retires
     * the current log and opens the future one in its place (see {@link ReplicaManager}); the high watermark carries
     * over. Returns whether the swap happened.
     */
    boolean maybeReplaceCurrentWithFutureLog(int maxSteps, int maxBytes, BinaryOperator<PartitionLog> swap) {
        stateLock.writeLock().lock();
        try {
            if (!future.maybeReplaceCurrent(maxSteps, maxBytes, swap)) {
                return false;
            }
        } finally {
            stateLock.writeLock().unlock();
        }
        listener.onLogEndOffsetAdvanced(this);
        return true;
    }

    // ----- reads: PartitionReads ---------------------------------------------------------------------------------

    /**
     * Reads from {@code fetchOffset} up to what {@code isolation} allows, as leader, after the leader-epoch check. An
     * offset below the log start or beyond the log end is OFFSET_OUT_OF_RANGE; an offset between the high watermark
     * and the log end reads nothing. The caller closes the result.
     */
    public LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                              boolean minOneMessage) {
        return read(fetchOffset, currentLeaderEpoch, maxBytes, isolation, minOneMessage, true);
    }

    /**
     * As {@link #read(long, int, int, FetchIsolation, boolean)}; with {@code fetchOnlyFromLeader} false a follower
     * replica reads too (a consumer's fetch, KIP-392): with its own log start and end offsets, up to its own high
     * watermark (learnt from the leader, so possibly behind it: an offset between the two reads nothing) and last
     * stable offset; NOT_LEADER_OR_FOLLOWER once the partition left this broker. Holds the read side of the state
     * lock, so a log swap of a replica move never happens under it.
     */
    public LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                              boolean minOneMessage, boolean fetchOnlyFromLeader) {
        stateLock.readLock().lock();
        try {
            return reads.read(fetchOffset, currentLeaderEpoch, maxBytes, isolation, minOneMessage,
                fetchOnlyFromLeader);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * The leader-epoch check of a read (Kafka's {@code localLogWithEpochOrThrow}); a read any replica may serve
     * still needs the partition hosted here.
     */
    public void checkReadable(int currentLeaderEpoch, boolean fetchOnlyFromLeader) {
        checkLeaderEpoch(currentLeaderEpoch, fetchOnlyFromLeader);
        if (!fetchOnlyFromLeader && removed) {
            throw new NotLeaderOrFollowerException("Broker " + localBrokerId + " no longer hosts " + topicPartition);
        }
    }

    /**
     * One fetcher's read of this partition (Kafka's {@code Partition.fetchRecords}): the leader-epoch check (the
     * leader only, unless {@link LogReadRequest#fetchOnlyFromLeader} is false: a consumer may read from a follower
     * replica, see {@link #read(long, int, int, FetchIsolation, boolean, boolean)}); for a follower, that it is an
     * assigned replica (else UNKNOWN_LEADER_EPOCH when the request named an epoch, NOT_LEADER_OR_FOLLOWER when not:
     * the follower retries), the divergence check of its last fetched epoch, the read to the log end and, with
     * {@code updateFetchState}, the record of its position ({@link #updateFollowerFetchState}, after the read lock
     * is released); for a consumer, the read to what {@code isolation} allows. The caller closes the result.
     */
    public LogReadResult fetchRecords(LogReadRequest request, FetchIsolation isolation, int maxBytes,
                                      boolean minOneMessage, boolean updateFetchState) {
        long fetchTimeMs = time.milliseconds();
        LogReadResult result;
        stateLock.readLock().lock();
        try {
            result = reads.fetchRecords(request, isolation, maxBytes, minOneMessage);
        } finally {
            stateLock.readLock().unlock();
        }
        if (request.isFromFollower() && updateFetchState && result.divergingEpoch() == null) {
            try {
                updateFollowerFetchState(request.replicaId(), request.fetchOffset(), request.logStartOffset(),
                    fetchTimeMs, result.logEndOffset(), request.replicaEpoch());
            } catch (RuntimeException e) {
                result.close();
                throw e;
            }
        }
        return result;
    }

    /**
     * Whether a follower fetching at {@code fetchOffset} with {@code lastFetchedEpoch} has diverged from this log
     * (a delayed fetch then answers at once, with the diverging epoch); false when no epoch was given.
     */
    public boolean hasDiverged(int currentLeaderEpoch, int lastFetchedEpoch, long fetchOffset) {
        if (lastFetchedEpoch < 0) {
            return false;
        }
        stateLock.readLock().lock();
        try {
            return reads.hasDiverged(currentLeaderEpoch, lastFetchedEpoch, fetchOffset);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** The end of what a fetch of {@code isolation} may read: log end, high watermark or last stable offset. */
    public long fetchableEnd(FetchIsolation isolation) {
        return switch (isolation) {
            case LOG_END -> log.logEndOffset();
            case HIGH_WATERMARK -> highWatermark;
            case TXN_COMMITTED -> lastStableOffset();
        };
    }

    /** {@link #fetchOffsetForTimestamp(long, FetchIsolation, int, boolean)} from the leader only. */
    public Optional<TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, FetchIsolation isolation,
                                                                int currentLeaderEpoch) {
        return fetchOffsetForTimestamp(timestamp, isolation, currentLeaderEpoch, true);
    }

    /**
     * ListOffsets for one partition (Kafka's {@code Partition.fetchOffsetForTimestamp}, after the leader-epoch check).
     * The visible end is the high watermark for a read_uncommitted consumer, the last stable offset for
     * read_committed and the log end offset for a replica ({@code isolation} null). Latest is the visible end in the
     * current leader epoch; earliest and earliest-local (no tiered storage) are the log start offset with the
     * epoch of the first epoch entry when that entry starts at or before it; latest-tiered is offset -1 (no tiered
     * storage); max-timestamp and a timestamp search are answered only when the record found is below the visible
     * end. Empty means no record qualifies (Kafka answers offset -1 without an error).
     *
     * <p>For a consumer ({@code isolation} not null), a leader whose high watermark has not yet reached the start
     * offset of its leader epoch answers OFFSET_NOT_AVAILABLE for latest and for a lookup that found nothing
     * visible, as Kafka does after a leader election.
     *
     * @param isolation     null for a replica's (or a debugging) request: no visibility bound
     * @param requireLeader false only for Kafka's debugging replica id (-2), which may ask a follower
     */
    public Optional<TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, FetchIsolation isolation,
                                                                int currentLeaderEpoch, boolean requireLeader) {
        stateLock.readLock().lock();
        try {
            return reads.fetchOffsetForTimestamp(timestamp, isolation, currentLeaderEpoch, requireLeader);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * OffsetForLeaderEpoch (Kafka's {@code Partition.lastOffsetForLeaderEpoch}): {@link LeaderEpochCache#endOffsetFor}
     * over the leader's history (the log's epoch entries plus, while leading in an epoch nothing was appended in
     * yet, that epoch at the log end offset), after the leader-epoch check:
     * <ul>
     *   <li>the latest epoch of the history: that epoch and the log end offset;</li>
     *   <li>an older epoch: the largest epoch at most {@code leaderEpoch} and the start of the next one;</li>
     *   <li>an epoch older than the whole history: {@code leaderEpoch} itself and the start of the first entry;</li>
     *   <li>{@link EpochEndOffset#UNDEFINED_EPOCH}, an epoch newer than the history, or an empty history:
     *       UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.</li>
     * </ul>
     */
    public EpochEndOffset lastOffsetForLeaderEpoch(int currentLeaderEpoch, int leaderEpoch, boolean requireLeader) {
        stateLock.readLock().lock();
        try {
            return reads.lastOffsetForLeaderEpoch(currentLeaderEpoch, leaderEpoch, requireLeader);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    // ----- follower side: PartitionFollower ----------------------------------------------------------------------
    // What this broker's replica fetcher does while another broker leads: each call names the leader epoch it
    // fetched in and holds the read lock, so a fetch from a former leader, or one that completes after this broker
    // became leader, never touches the log.

    /**
     * Appends batches fetched from the leader with the leader's offsets and epochs ({@link PartitionFollower#append}:
     * a first fetch into an empty log may restart it at the first batch, as Kafka does).
     *
     * @throws FencedLeaderEpochException   when the partition moved to another leader epoch meanwhile
     * @throws NotLeaderOrFollowerException when this broker leads the partition or it left this broker
     * @throws UnexpectedAppendOffsetException when the batches overlap the log otherwise
     */
    public LogAppendInfo appendRecordsToFollower(ByteBuffer records, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            return follower.append(records, fetchLeaderEpoch);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * Takes the leader's high watermark as Kafka's follower does: bounded below by the log start offset and above by
     * the log end offset; it may move back (after a truncation the leader's value is the truth). Waiters hear of an
     * advance.
     */
    public void updateFollowerHighWatermark(long leaderHighWatermark, int fetchLeaderEpoch) {
        boolean advanced;
        stateLock.readLock().lock();
        try {
            advanced = follower.updateHighWatermark(leaderHighWatermark, fetchLeaderEpoch);
        } finally {
            stateLock.readLock().unlock();
        }
        if (advanced) {
            listener.onHighWatermarkAdvanced(this);
        }
    }

    /**
     * Moves the log start offset up to the leader's (Kafka's {@code maybeIncrementLogStartOffset} with reason
     * LeaderOffsetIncremented); never above the high watermark (OFFSET_OUT_OF_RANGE, as Kafka) and never down.
     */
    public void maybeIncrementLogStartOffsetAsFollower(long leaderLogStartOffset, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            follower.maybeIncrementLogStartOffset(leaderLogStartOffset, fetchLeaderEpoch);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * Truncates the follower's log to {@code offset} (its epoch history and producer state follow); a high
     * watermark beyond the new log end comes down to it, as Kafka's {@code UnifiedLog.truncateTo} does.
     */
    public void truncateAsFollower(long offset, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            follower.truncateTo(offset, fetchLeaderEpoch);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** Deletes the follower's whole log and starts it empty at {@code offset}, the new high watermark too. */
    public void truncateFullyAndStartAtAsFollower(long offset, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            follower.truncateFullyAndStartAt(offset, fetchLeaderEpoch);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    // ----- for the collaborators ---------------------------------------------------------------------------------

    int localBrokerId() {
        return localBrokerId;
    }

    Time time() {
        return time;
    }

    /** Under the write side of {@link #stateLock}: an AlterPartition answer's registration. */
    void setRegistration(PartitionRegistration newRegistration) {
        registration = newRegistration;
    }

    /** Under the write side of {@link #stateLock}: the swapped-in log of a replica move, with the high watermark. */
    void replaceLog(PartitionLog replacement) {
        log = replacement;
        replacement.updateHighWatermark(highWatermark);
    }

    /** Raises the high watermark (here and in the log) to {@code newHw}; false when that is not above it. */
    synchronized boolean advanceHighWatermark(long newHw) {
        if (newHw <= highWatermark) {
            return false;
        }
        highWatermark = newHw;
        log.updateHighWatermark(newHw);
        return true;
    }

    /** Sets the high watermark (here and in the log) to {@code value}, up or down; returns the one it replaced. */
    synchronized long setHighWatermark(long value) {
        long old = highWatermark;
        if (value != old) {
            highWatermark = value;
            log.updateHighWatermark(value);
        }
        return old;
    }

    @Override
    public String toString() {
        return "Partition(" + topicPartition + ", " + registration + ", hw=" + highWatermark + ")";
    }
}
