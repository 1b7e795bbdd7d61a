package io.cairn.isr;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.FileSlice;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogOffsetMetadata;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.TimestampAndOffset;
import io.cairn.log.UnexpectedAppendOffsetException;
import io.cairn.log.epoch.EpochEntry;
import io.cairn.log.epoch.LeaderEpochCache;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.image.BrokerRegistration;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
 * the write side, so an append never runs under a stale leader epoch. The high watermark is volatile and only
 * grows while this broker leads.
 *
 * <p>A replica move between log directories (AlterReplicaLogDirs, Kafka's future replica) gives the partition a
 * {@link #futureLog()} that its mover thread fills from the current log ({@link #copyToFutureLog}) and then swaps in
 * under the write side of {@link #stateLock} ({@link #maybeReplaceCurrentWithFutureLog}), so no append, read or
 * truncation sees the swap half done.
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
    /** The log a move into another log directory is writing; written under {@link #stateLock} by the move. */
    private volatile PartitionLog futureLog;
    private final PartitionListener listener;
    private final ReentrantReadWriteLock stateLock = new ReentrantReadWriteLock();
    private final Time time;
    /** What this broker, as leader, knows of each other replica; each entry replaced atomically. */
    private final Map<Integer, ReplicaState> followers = new ConcurrentHashMap<>();
    private final String logPrefix;
    private final IsrContext isrContext;
    private volatile PartitionRegistration registration;
    /**
     * The leader's ISR state: the committed ISR, or a change in flight to the controller. Written under the write
     * side of {@link #stateLock}; read anywhere (a volatile read of an immutable value).
     */
    private volatile PartitionState partitionState;
    private volatile int minInsyncReplicas;
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
            if (old == null || newRegistration.partitionEpoch() > old.partitionEpoch()
                    || newRegistration.leaderEpoch() != old.leaderEpoch() || !partitionState.isInflight()) {
                partitionState = new PartitionState.Committed(newRegistration.isr());
            }
            boolean leader = newRegistration.leader() == localBrokerId;
            if (old == null || old.leaderEpoch() != newRegistration.leaderEpoch()) {
                STATE_CHANGE_LOGGER.info("{}{} in leader epoch {} with partition epoch {} (replicas {}, isr {}{}), "
                    + "log end offset {}, high watermark {}", logPrefix,
                    leader ? "Leader" : "Follower of broker " + newRegistration.leader(),
                    newRegistration.leaderEpoch(), newRegistration.partitionEpoch(), newRegistration.replicas(),
                    newRegistration.isr(), leader && isUnderMinIsr() ? " (under-min-isr)" : "", log.logEndOffset(),
                    highWatermark);
            }
            if (leader && (old == null || old.leaderEpoch() != newRegistration.leaderEpoch())) {
                resetFollowers(newRegistration, old == null || old.leader() != localBrokerId);
            } else if (leader) {
                followers.keySet().retainAll(newRegistration.replicas());
            } else {
                followers.clear();
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
            List<Integer> isr = partitionState.isr();
            int minIsr = effectiveMinIsr();
            if (requiredAcks == -1 && isr.size() < minIsr) {
                throw new NotEnoughReplicasException("The size of the current ISR " + isr
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
        List<Integer> maximalIsr = partitionState.maximalIsr();
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
            return new DeleteRecordsResult(requested, lowWatermark());
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
        return lowWatermark();
    }

    private long lowWatermark() {
        long low = log.logStartOffset();
        for (Map.Entry<Integer, ReplicaState> e : followers.entrySet()) {
            long start = e.getValue().logStartOffset();
            boolean alive = isrContext.brokers().apply(e.getKey()).map(b -> !b.fenced()).orElse(false);
            if (alive && start < low) {
                low = start;
            }
        }
        return low;
    }

    /**
     * What {@link #deleteRecordsOnLeader} did: the offset the log now starts at on the leader (the request's offset
     * resolved) and the low watermark right after.
     */
    public record DeleteRecordsResult(long requestedOffset, long lowWatermark) {
    }

    /** True when this broker leads and the committed ISR is smaller than the effective min ISR. */
    public boolean isUnderMinIsr() {
        return isLeader() && partitionState.isr().size() < effectiveMinIsr();
    }

    /** The committed ISR (while an ISR change is in flight, the one it is based on). */
    public List<Integer> inSyncReplicaIds() {
        return partitionState.isr();
    }

    /** True once the partition left this broker (its topic was deleted, or the broker is stopping). */
    public boolean isRemoved() {
        return removed;
    }

    /**
     * Kafka's reset of the followers' state on election (under the write lock): every other assigned replica starts
     * over, caught up now when in the ISR; a re-elected leader keeps the positions it knew.
     */
    private void resetFollowers(PartitionRegistration reg, boolean newLeader) {
        long now = time.milliseconds();
        long leaderEnd = log.logEndOffset();
        followers.keySet().retainAll(reg.replicas());
        for (int replica : reg.replicas()) {
            if (replica != localBrokerId) {
                ReplicaState current = followers.getOrDefault(replica, ReplicaState.EMPTY);
                followers.put(replica, current.afterElection(now, leaderEnd, newLeader, reg.isr().contains(replica)));
            }
        }
    }

    /** What this broker, as leader, knows of follower {@code replicaId}; empty for an unknown replica. */
    public Optional<ReplicaState> followerState(int replicaId) {
        return Optional.ofNullable(followers.get(replicaId));
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
     */
    public void updateFollowerFetchState(int replicaId, long fetchOffset, long followerStartOffset, long fetchTimeMs,
                                         long leaderEndOffset, long brokerEpoch) {
        ReplicaState before = followers.get(replicaId);
        stateLock.readLock().lock();
        try {
            if (registration.leader() != localBrokerId || !registration.replicas().contains(replicaId)) {
                return;
            }
            long metadataEpoch = isrContext.brokers().apply(replicaId).map(BrokerRegistration::epoch).orElse(-1L);
            if (brokerEpoch != -1L && metadataEpoch > brokerEpoch) {
                throw new NotLeaderOrFollowerException("Received stale fetch state update. broker epoch="
                    + brokerEpoch + " vs expected=" + metadataEpoch);
            }
            followers.compute(replicaId, (id, current) -> (current == null ? ReplicaState.EMPTY : current)
                .afterFetch(fetchOffset, followerStartOffset, fetchTimeMs, leaderEndOffset, brokerEpoch));
        } finally {
            stateLock.readLock().unlock();
        }
        maybeExpandIsr(replicaId);
        if (before == null || before.logEndOffset() != fetchOffset) {
            maybeIncrementHighWatermark(fetchTimeMs);
        }
        if (before == null || before.logStartOffset() != followerStartOffset) {
            listener.onLogStartOffsetChanged(this);
        }
    }

    /**
     * Moves the high watermark forward (Kafka's {@code maybeIncrementLeaderHW}), never while the committed ISR is
     * below the effective {@code min.insync.replicas}: to the smallest log end offset among the leader, the maximal
     * ISR (a joining replica already counts), and every follower that is caught up within
     * {@code replica.lag.time.max.ms} and eligible to join, so that a follower about to join is not left behind by a
     * high watermark it could never reach. Wakes the waiters when it moved.
     */
    private void maybeIncrementHighWatermark(long nowMs) {
        long newHw;
        stateLock.readLock().lock();
        try {
            PartitionRegistration reg = registration;
            if (reg.leader() != localBrokerId || isUnderMinIsr()) {
                return;
            }
            long leaderEnd = log.logEndOffset();
            List<Integer> maximalIsr = partitionState.maximalIsr();
            newHw = leaderEnd;
            for (int replica : reg.replicas()) {
                if (replica == localBrokerId) {
                    continue;
                }
                ReplicaState follower = followers.getOrDefault(replica, ReplicaState.EMPTY);
                if (follower.logEndOffset() < newHw && (maximalIsr.contains(replica)
                        || follower.isCaughtUp(leaderEnd, nowMs, isrContext.replicaLagTimeMaxMs())
                        && isReplicaIsrEligible(replica))) {
                    newHw = follower.logEndOffset();
                }
            }
            synchronized (this) {
                if (newHw <= highWatermark) {
                    return;
                }
                highWatermark = newHw;
                log.updateHighWatermark(newHw);
            }
        } finally {
            stateLock.readLock().unlock();
        }
        listener.onHighWatermarkAdvanced(this);
    }

    /**
     * Adds {@code replicaId} to the ISR when it has caught up (Kafka's {@code maybeExpandIsr}): no change is in
     * flight, it is not in the ISR, it is eligible ({@link #isReplicaIsrEligible}), and its log end offset reached
     * both the high watermark and the start offset of the current leader epoch (so it holds every record a future
     * leader must have). The proposal goes to the controller; until it is answered the replica already counts for the
     * high watermark and acks=all.
     */
    private void maybeExpandIsr(int replicaId) {
        if (partitionState.isInflight()) {
            return;
        }
        boolean needed;
        stateLock.readLock().lock();
        try {
            needed = needsExpandIsr(replicaId);
        } finally {
            stateLock.readLock().unlock();
        }
        if (!needed) {
            return;
        }
        PartitionState.Pending proposal = null;
        stateLock.writeLock().lock();
        try {
            if (partitionState instanceof PartitionState.Committed committed && needsExpandIsr(replicaId)) {
                List<Integer> isr = new ArrayList<>(committed.isr());
                isr.add(replicaId);
                proposal = new PartitionState.PendingExpandIsr(replicaId, proposal(isr), committed);
                partitionState = proposal;
            }
        } finally {
            stateLock.writeLock().unlock();
        }
        if (proposal != null) {
            submitAlterPartition(proposal);
        }
    }

    private boolean needsExpandIsr(int replicaId) {
        PartitionState current = partitionState;
        if (!isLeader() || current.isInflight() || current.isr().contains(replicaId)
                || !isReplicaIsrEligible(replicaId)) {
            return false;
        }
        long followerEnd = followers.get(replicaId).logEndOffset();
        return followerEnd >= highWatermark && followerEnd >= leaderEpochStartOffset();
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
        Optional<BrokerRegistration> broker = isrContext.brokers().apply(replicaId);
        OptionalLong fetchEpoch = state.brokerEpoch();
        return broker.isPresent() && !broker.get().fenced() && !broker.get().inControlledShutdown()
            && fetchEpoch.isPresent() && (fetchEpoch.getAsLong() == -1L || fetchEpoch.getAsLong() == broker.get()
            .epoch());
    }

    /**
     * Removes from the ISR the followers that have not caught up for {@code replica.lag.time.max.ms} (Kafka's
     * {@code maybeShrinkIsr}, run by the broker's ISR expiration task). Nothing happens while a change is in flight.
     * The shrink takes effect only once the controller committed it: until then the leaving followers still hold
     * the high watermark back.
     */
    public void maybeShrinkIsr() {
        if (partitionState.isInflight()) {
            return;
        }
        boolean needed;
        stateLock.readLock().lock();
        try {
            needed = isLeader() && !getOutOfSyncReplicas(isrContext.replicaLagTimeMaxMs()).isEmpty();
        } finally {
            stateLock.readLock().unlock();
        }
        if (!needed) {
            return;
        }
        PartitionState.Pending proposal = null;
        stateLock.writeLock().lock();
        try {
            Set<Integer> outOfSync = getOutOfSyncReplicas(isrContext.replicaLagTimeMaxMs());
            if (isLeader() && partitionState instanceof PartitionState.Committed committed && !outOfSync.isEmpty()) {
                List<Integer> isr = new ArrayList<>(committed.isr());
                isr.removeAll(outOfSync);
                LOGGER.info("{}Shrinking ISR from {} to {}. Leader: (highWatermark: {}, endOffset: {}). Out of sync "
                    + "replicas: {}.", logPrefix, join(committed.isr()), join(isr), highWatermark,
                    log.logEndOffset(), describe(outOfSync));
                proposal = new PartitionState.PendingShrinkIsr(outOfSync, proposal(isr), committed);
                partitionState = proposal;
            }
        } finally {
            stateLock.writeLock().unlock();
        }
        if (proposal != null) {
            submitAlterPartition(proposal);
        }
    }

    /**
     * The ISR followers that are not caught up (Kafka's {@code getOutOfSyncReplicas}): neither at the leader's log
     * end offset nor caught up within {@code maxLagMs}, which covers both a stuck follower (no fetch) and a slow one
     * (fetching, never reaching the end). Empty while an ISR change is in flight.
     */
    Set<Integer> getOutOfSyncReplicas(long maxLagMs) {
        PartitionState current = partitionState;
        Set<Integer> outOfSync = new TreeSet<>();
        if (current.isInflight()) {
            return outOfSync;
        }
        long now = time.milliseconds();
        long leaderEnd = log.logEndOffset();
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
                epoch = isrContext.localBrokerEpoch().getAsLong();
            } else {
                ReplicaState state = followers.get(replica);
                epoch = state == null ? -1L : state.brokerEpoch().orElse(-1L);
            }
            members.add(new LeaderAndIsr.Member(replica, epoch));
        }
        PartitionRegistration reg = registration;
        return new LeaderAndIsr(localBrokerId, reg.leaderEpoch(), members, reg.partitionEpoch());
    }

    /**
     * Sends {@code proposal} to the controller and applies the answer (Kafka's {@code submitAlterPartition}), unless
     * the ISR state has moved on meanwhile (new metadata): then the answer is stale and ignored.
     */
    private void submitAlterPartition(PartitionState.Pending proposal) {
        LOGGER.debug("{}Submitting ISR state change {}", logPrefix, proposal);
        CompletableFuture<LeaderAndIsr> answer = isrContext.alterPartitionManager().submit(topicPartition, topicId,
            proposal.sent());
        answer.whenComplete((leaderAndIsr, failure) -> {
            boolean isrChanged = false;
            boolean retry = false;
            stateLock.writeLock().lock();
            try {
                if (!partitionState.equals(proposal)) {
                    LOGGER.debug("{}Ignoring ISR update to {} since we have already updated state to {}", logPrefix,
                        proposal, partitionState);
                } else if (leaderAndIsr != null) {
                    isrChanged = handleAlterPartitionUpdate(proposal, leaderAndIsr);
                } else {
                    retry = handleAlterPartitionError(proposal, Errors.forException(failure));
                }
            } finally {
                stateLock.writeLock().unlock();
            }
            if (isrChanged) {
                maybeIncrementHighWatermark(time.milliseconds());
                listener.onIsrChanged(this);
            }
            if (retry) {
                submitAlterPartition(proposal);
            }
        });
    }

    /**
     * A successful answer (under the write lock): applied at once when it is of the current leader epoch and not
     * older than the partition epoch we know; a newer partition epoch means the controller committed the change,
     * an equal one that the ISR already was the proposed one. Either way the state is committed again.
     */
    private boolean handleAlterPartitionUpdate(PartitionState.Pending proposal, LeaderAndIsr answer) {
        PartitionRegistration reg = registration;
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
        registration = new PartitionRegistration(reg.replicas(), answer.isr(), reg.leader(), reg.leaderEpoch(),
            answer.partitionEpoch());
        partitionState = new PartitionState.Committed(answer.isr());
        LOGGER.info("{}ISR updated to {}{} and version updated to {}", logPrefix, join(answer.isr()),
            isUnderMinIsr() ? " (under-min-isr)" : "", answer.partitionEpoch());
        return !answer.isr().equals(proposal.isr());
    }

    /**
     * A failed answer (under the write lock), as Kafka handles it: INELIGIBLE_REPLICA and OPERATION_NOT_ATTEMPTED
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

    /**
     * Restores the high watermark checkpointed before a restart, bounded by the log start and end offsets (Kafka's
     * {@code UnifiedLog.updateHighWatermark}), so that consumers see what they saw before at once instead of
     * waiting for the followers to report again. Never lowers the high watermark.
     */
    void restoreHighWatermark(long checkpointed) {
        long bounded = Math.min(Math.max(checkpointed, log.logStartOffset()), log.logEndOffset());
        synchronized (this) {
            if (bounded <= highWatermark) {
                return;
            }
            highWatermark = bounded;
            log.updateHighWatermark(bounded);
        }
        listener.onHighWatermarkAdvanced(this);
    }

    /**
     * Marks the partition as gone from this broker (topic deleted, broker stopping); the caller then tells the
     * listener, so that the operations waiting on it answer at once.
     */
    void close() {
        removed = true;
    }

    // ----- replica move between log directories (Kafka's future replica) ---------------------------------------

    /** The future log of a move in progress, if any. */
    public Optional<PartitionLog> futureLog() {
        return Optional.ofNullable(futureLog);
    }

    /** Starts a move: {@code future} (of another log directory) becomes the future log. */
    void setFutureLog(PartitionLog future) {
        stateLock.writeLock().lock();
        try {
            futureLog = future;
        } finally {
            stateLock.writeLock().unlock();
        }
    }

    /** Ends a move without swapping (cancelled, or the partition leaves); returns the future log it had. */
    PartitionLog removeFutureLog() {
        stateLock.writeLock().lock();
        try {
            PartitionLog future = futureLog;
            futureLog = null;
            return future;
        } finally {
            stateLock.writeLock().unlock();
        }
    }

    /** How far the future log is behind the current one (Kafka's DescribeLogDirs lag of a future log), or -1. */
    public long futureLogLag() {
        PartitionLog future = futureLog;
        return future == null ? -1L : log.logEndOffset() - future.logEndOffset();
    }

    /** Roughly how many bytes the future log is behind the current one (their sizes' difference), or -1. */
    long futureLogBytesBehind() {
        PartitionLog future = futureLog;
        return future == null ? -1L : log.size() - future.size();
    }

    /**
     * One copy step of the move: the future log gives up what the current log no longer has, then takes the current
     * log's next batches, up to {@code maxBytes}. Returns the bytes copied; -1 when there is no move (any more).
     */
    int copyToFutureLog(int maxBytes) {
        stateLock.readLock().lock();
        try {
            PartitionLog future = futureLog;
            return future == null || removed ? -1 : FutureLogSync.copyOnce(log, future, maxBytes);
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
            PartitionLog future = futureLog;
            if (future == null || removed) {
                return false;
            }
            // The current log cannot grow while the write lock is held: each step brings the future closer.
            int steps = 0;
            while (FutureLogSync.copyOnce(log, future, maxBytes) > 0) {
                if (++steps >= maxSteps) {
                    return false;
                }
            }
            if (!FutureLogSync.caughtUp(log, future)) {
                return false;
            }
            if (log.logStartOffset() > future.logStartOffset()) {
                future.deleteRecordsBefore(log.logStartOffset());
            }
            future.flush(future.logEndOffset());
            PartitionLog replaced = log;
            log = swap.apply(replaced, future);
            futureLog = null;
            log.updateHighWatermark(highWatermark);
            LOGGER.info("{}Replaced the log in {} with its future log, now in {} (log end offset {})", logPrefix,
                replaced.dir().getParent(), log.dir().getParent(), log.logEndOffset());
        } finally {
            stateLock.writeLock().unlock();
        }
        listener.onLogEndOffsetAdvanced(this);
        return true;
    }

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
     * lock (re-entered from {@link #fetchRecords}), so a log swap of a replica move never happens under it.
     */
    public LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                              boolean minOneMessage, boolean fetchOnlyFromLeader) {
        stateLock.readLock().lock();
        try {
            checkReadable(currentLeaderEpoch, fetchOnlyFromLeader);
            long hw = highWatermark;
            long lso = lastStableOffset();
            long start = log.logStartOffset();
            long end = log.logEndOffset();
            FetchDataInfo info = switch (isolation) {
                case LOG_END -> log.read(fetchOffset, maxBytes, Long.MAX_VALUE, minOneMessage);
                case HIGH_WATERMARK -> log.read(fetchOffset, maxBytes, hw, minOneMessage);
                case TXN_COMMITTED -> log.readCommitted(fetchOffset, maxBytes, lso, minOneMessage);
            };
            return new LogReadResult(info, hw, lso, start, end, null);
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
     * {@code updateFetchState}, the record of its position ({@link #updateFollowerFetchState}); for a consumer, the
     * read to what {@code isolation} allows. The caller closes the result.
     */
    public LogReadResult fetchRecords(LogReadRequest request, FetchIsolation isolation, int maxBytes,
                                      boolean minOneMessage, boolean updateFetchState) {
        long fetchTimeMs = time.milliseconds();
        LogReadResult result;
        stateLock.readLock().lock();
        try {
            checkReadable(request.currentLeaderEpoch(), request.fetchOnlyFromLeader());
            if (request.isFromFollower() && !registration.replicas().contains(request.replicaId())) {
                String message = "Replica " + request.replicaId() + " is not recognized as a valid replica of "
                    + topicPartition + " in leader epoch " + registration.leaderEpoch() + " with partition epoch "
                    + registration.partitionEpoch();
                throw request.currentLeaderEpoch() != NO_EPOCH ? new UnknownLeaderEpochException(message)
                    : new NotLeaderOrFollowerException(message);
            }
            result = divergence(request);
            if (result == null) {
                result = read(request.fetchOffset(), request.currentLeaderEpoch(), maxBytes, isolation,
                    minOneMessage, request.fetchOnlyFromLeader());
            }
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
     * Kafka's check of a follower's {@code last_fetched_epoch}: null when none was given or the follower's log
     * agrees with ours up to its fetch offset, else an empty read carrying the epoch and end offset it must truncate
     * to. An epoch this log cannot place, or a fetch offset below the log start, is OFFSET_OUT_OF_RANGE.
     */
    private LogReadResult divergence(LogReadRequest request) {
        if (request.lastFetchedEpoch() < 0) {
            return null;
        }
        long hw = highWatermark;
        long lso = lastStableOffset();
        long start = log.logStartOffset();
        long end = log.logEndOffset();
        EpochEndOffset epochEnd = lastOffsetForLeaderEpoch(request.currentLeaderEpoch(), request.lastFetchedEpoch(),
            false);
        if (epochEnd.endOffset() == EpochEndOffset.UNDEFINED_EPOCH_OFFSET
                || epochEnd.leaderEpoch() == EpochEndOffset.UNDEFINED_EPOCH) {
            throw new OffsetOutOfRangeException("Could not determine the end offset of the last fetched epoch "
                + request.lastFetchedEpoch() + " from the request");
        }
        if (request.fetchOffset() < start) {
            throw new OffsetOutOfRangeException("Received request for offset " + request.fetchOffset() + " for "
                + "partition " + topicPartition + ", but we only have log segments in the range " + start + " to "
                + end + ".");
        }
        if (epochEnd.leaderEpoch() < request.lastFetchedEpoch() || epochEnd.endOffset() < request.fetchOffset()) {
            FetchDataInfo empty = new FetchDataInfo(LogOffsetMetadata.offsetOnly(request.fetchOffset()),
                FileSlice.empty(), false, List.of());
            return new LogReadResult(empty, hw, lso, start, end, epochEnd);
        }
        return null;
    }

    /**
     * Whether a follower fetching at {@code fetchOffset} with {@code lastFetchedEpoch} has diverged from this log
     * (a delayed fetch then answers at once, with the diverging epoch); false when no epoch was given.
     */
    public boolean hasDiverged(int currentLeaderEpoch, int lastFetchedEpoch, long fetchOffset) {
        if (lastFetchedEpoch < 0) {
            return false;
        }
        EpochEndOffset end = lastOffsetForLeaderEpoch(currentLeaderEpoch, lastFetchedEpoch, false);
        return end.endOffset() == EpochEndOffset.UNDEFINED_EPOCH_OFFSET
            || end.leaderEpoch() == EpochEndOffset.UNDEFINED_EPOCH
            || end.leaderEpoch() < lastFetchedEpoch || end.endOffset() < fetchOffset;
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
            checkLeaderEpoch(currentLeaderEpoch, requireLeader);
            long hw = highWatermark;
            long lastFetchable = isolation == null || isolation == FetchIsolation.LOG_END ? log.logEndOffset()
                : isolation == FetchIsolation.TXN_COMMITTED ? lastStableOffset() : hw;
            long epochStart = leaderEpochStartOffset();
            RuntimeException offsetsError = isolation != null && epochStart > hw
                ? Errors.OFFSET_NOT_AVAILABLE.exception("Failed to fetch offsets for partition " + topicPartition
                    + " with leader epoch " + (currentLeaderEpoch == NO_EPOCH ? "unknown" : currentLeaderEpoch)
                    + " as this partition's high watermark (" + hw + ") is lagging behind the start offset from "
                    + "the beginning of this epoch (" + epochStart + ").")
                : null;
            if (timestamp == TimestampAndOffset.LATEST_TIMESTAMP) {
                if (offsetsError != null) {
                    throw offsetsError;
                }
                return Optional.of(new TimestampAndOffset(-1L, lastFetchable, registration.leaderEpoch()));
            }
            if (timestamp == TimestampAndOffset.EARLIEST_TIMESTAMP
                    || timestamp == TimestampAndOffset.EARLIEST_LOCAL_TIMESTAMP) {
                long start = log.logStartOffset();
                return Optional.of(new TimestampAndOffset(-1L, start, earliestEpoch(start)));
            }
            Optional<TimestampAndOffset> found = timestamp == LATEST_TIERED_TIMESTAMP
                ? Optional.of(new TimestampAndOffset(-1L, -1L, -1))
                : log.fetchOffsetByTimestamp(timestamp);
            if (found.isPresent() && found.get().offset() < lastFetchable) {
                return found;
            }
            if (offsetsError != null) {
                throw offsetsError;
            }
            return Optional.empty();
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * The leader-epoch history as Kafka's leader keeps it: the log's entries (written when a batch of a new epoch
     * is appended) plus, while leading in an epoch nothing was appended in yet, that epoch starting at the log end
     * offset (Kafka assigns it when the broker becomes leader), replacing entries that start there.
     */
    private List<EpochEntry> epochHistory() {
        List<EpochEntry> entries = log.epochEntries();
        PartitionRegistration reg = registration;
        if (reg.leader() != localBrokerId
                || !entries.isEmpty() && entries.get(entries.size() - 1).epoch() >= reg.leaderEpoch()) {
            return entries;
        }
        long start = log.logEndOffset();
        List<EpochEntry> history = new ArrayList<>();
        for (EpochEntry entry : entries) {
            if (entry.startOffset() < start) {
                history.add(entry);
            }
        }
        history.add(new EpochEntry(reg.leaderEpoch(), start));
        return history;
    }

    /** Where the current leader epoch starts (Kafka's {@code leaderEpochStartOffsetOpt}). */
    private long leaderEpochStartOffset() {
        List<EpochEntry> entries = epochHistory();
        if (!entries.isEmpty()) {
            EpochEntry latest = entries.get(entries.size() - 1);
            if (latest.epoch() == registration.leaderEpoch()) {
                return latest.startOffset();
            }
        }
        return log.logEndOffset();
    }

    /** The epoch of the first history entry when it starts at or before {@code logStartOffset}, else -1. */
    private int earliestEpoch(long logStartOffset) {
        List<EpochEntry> entries = epochHistory();
        if (entries.isEmpty() || entries.get(0).startOffset() > logStartOffset) {
            return -1;
        }
        return entries.get(0).epoch();
    }

    /**
     * OffsetForLeaderEpoch (Kafka's {@code Partition.lastOffsetForLeaderEpoch}): {@link LeaderEpochCache#endOffsetFor}
     * over the leader's history ({@link #epochHistory}), after the leader-epoch check:
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
            checkLeaderEpoch(currentLeaderEpoch, requireLeader);
            EpochEntry end = LeaderEpochCache.endOffsetFor(epochHistory(), leaderEpoch, log.logEndOffset());
            return new EpochEndOffset(end.epoch(), end.startOffset());
        } finally {
            stateLock.readLock().unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Follower side: what this broker's replica fetcher does to the partition while another broker leads it
    // (Kafka's appendRecordsToFollowerOrFutureReplica, truncateTo, truncateFullyAndStartAt and the follower's
    // UnifiedLog.maybeUpdateHighWatermark / maybeIncrementLogStartOffset). Each call names the leader epoch the
    // fetcher fetched in and holds the read side of the state lock: a fetch from a former leader, or one that
    // completes after this broker became leader, never touches the log.
    // ---------------------------------------------------------------------------------------------------------

    /**
     * Appends batches fetched from the leader with the leader's offsets and epochs through
     * {@link PartitionLog#appendAsFollower}. A first fetch into an empty log whose first batch starts before the
     * log start offset (the leader's log start moved into that batch) restarts the log at the batch's base offset,
     * as Kafka does; any other overlap is the log's {@link UnexpectedAppendOffsetException}.
     *
     * @throws FencedLeaderEpochException   when the partition moved to another leader epoch meanwhile
     * @throws NotLeaderOrFollowerException when this broker leads the partition or it left this broker
     */
    public LogAppendInfo appendRecordsToFollower(ByteBuffer records, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            checkFollowing(fetchLeaderEpoch);
            try {
                return log.appendAsFollower(records.duplicate());
            } catch (UnexpectedAppendOffsetException e) {
                long end = log.logEndOffset();
                if (end != log.logStartOffset() || e.firstOffset() >= end || e.lastOffset() < end) {
                    throw e;
                }
                LOGGER.info("{}Unexpected offset in append: first offset {} is below the log start offset {}; as "
                    + "this is the follower's first append, its log starts at {}", logPrefix, e.firstOffset(), end,
                    e.firstOffset());
                log.truncateFullyAndStartAt(e.firstOffset());
                return log.appendAsFollower(records.duplicate());
            }
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
            checkFollowing(fetchLeaderEpoch);
            advanced = setFollowerHighWatermark(leaderHighWatermark);
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
            checkFollowing(fetchLeaderEpoch);
            if (leaderLogStartOffset > highWatermark) {
                throw new OffsetOutOfRangeException("Cannot increment the log start offset to " + leaderLogStartOffset
                    + " of partition " + topicPartition + " since it is larger than the high watermark "
                    + highWatermark);
            }
            if (leaderLogStartOffset > log.logStartOffset()) {
                log.deleteRecordsBefore(leaderLogStartOffset);
                LOGGER.info("{}Incremented log start offset to {} due to leader offset increment", logPrefix,
                    leaderLogStartOffset);
            }
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
            checkFollowing(fetchLeaderEpoch);
            log.truncateTo(offset);
            if (highWatermark > log.logEndOffset()) {
                setFollowerHighWatermark(log.logEndOffset());
            }
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** Deletes the follower's whole log and starts it empty at {@code offset}, the new high watermark too. */
    public void truncateFullyAndStartAtAsFollower(long offset, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            checkFollowing(fetchLeaderEpoch);
            log.truncateFullyAndStartAt(offset);
            synchronized (this) {
                highWatermark = offset;
                log.updateHighWatermark(offset);
            }
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** Under the read lock: this broker follows in {@code fetchLeaderEpoch} and still hosts the partition. */
    private void checkFollowing(int fetchLeaderEpoch) {
        PartitionRegistration reg = registration;
        if (removed || reg.leader() == localBrokerId) {
            throw new NotLeaderOrFollowerException("Broker " + localBrokerId + " no longer follows "
                + topicPartition + " (leader " + reg.leader() + ")");
        }
        if (reg.leaderEpoch() != fetchLeaderEpoch) {
            throw new FencedLeaderEpochException("The fetch of " + topicPartition + " in leader epoch "
                + fetchLeaderEpoch + " is not of the current leader epoch " + reg.leaderEpoch());
        }
    }

    /** Sets the follower's high watermark within [log start, log end]; true when it advanced. */
    private boolean setFollowerHighWatermark(long offset) {
        long bounded = Math.max(log.logStartOffset(), Math.min(offset, log.logEndOffset()));
        synchronized (this) {
            long old = highWatermark;
            if (bounded == old) {
                return false;
            }
            if (bounded < old) {
                LOGGER.warn("{}Non-monotonic update of high watermark from {} to {}", logPrefix, old, bounded);
            }
            highWatermark = bounded;
            log.updateHighWatermark(bounded);
            return bounded > old;
        }
    }

    @Override
    public String toString() {
        return "Partition(" + topicPartition + ", " + registration + ", hw=" + highWatermark + ")";
    }
}
