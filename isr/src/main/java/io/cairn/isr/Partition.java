package io.cairn.isr;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.TimestampAndOffset;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
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
 * sits in the broker's purgatory, and the partition tells its {@link PartitionListener} when the log end offset,
 * the high watermark, the ISR or the leadership changed, so that the purgatory retries exactly those operations.
 *
 * <p>Thread-safety: thread-safe. Appends, reads, truncations and copy steps hold the read side of
 * {@link #stateLock}; leadership changes, ISR proposals and answers and a replica move's swap of the log hold the
 * write side, so an append never runs under a stale leader epoch and nothing sees a swap half done. The high
 * watermark is volatile, changed under this object's monitor (several holders of the read side may move it at
 * once), and only grows while this broker leads. The listener is called only once the lock is released.
 *
 * <p>Design note: this class owns the state (log, registration, high watermark, removal), the lock and the public
 * surface; the operations are its package-private collaborators', which it creates with that lock and listener and
 * delegates to. Each collaborator method says which side of the lock it takes (or that its caller holds), and
 * calls the listener after releasing it; getters of volatile state, the acks=all check and the leader-epoch checks
 * take no lock. {@link PartitionLeader} (appends as leader, acks=all, DeleteRecords, followers' fetches, ISR expand
 * and shrink with their AlterPartition round trips) over {@link PartitionIsr} (the leader's state and decisions:
 * followers' positions, ISR state, high watermark computation, AlterPartition answers; called with the lock held),
 * {@link PartitionReads} (records, ListOffsets, OffsetForLeaderEpoch), {@link PartitionFollower} (the fetcher's
 * appends, truncations, high watermark and log start) and {@link PartitionFutureLog} (a replica move's future log,
 * copy steps and swap).
 */
public final class Partition {

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
    /** The lock of this partition, handed to its collaborators (see the class comment). */
    private final ReentrantReadWriteLock stateLock = new ReentrantReadWriteLock();
    private final Time time;
    private final String logPrefix;
    private final PartitionReads reads;
    private final PartitionIsr isr;
    private final PartitionLeader leader;
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
        this.minInsyncReplicas = minInsyncReplicas;
        this.logPrefix = "[Partition " + topicPartition + " broker=" + localBrokerId + "] ";
        this.reads = new PartitionReads(this, stateLock);
        this.isr = new PartitionIsr(this, reads, isrContext, localBrokerId, logPrefix);
        this.leader = new PartitionLeader(this, isr, stateLock, listener, isrContext, logPrefix);
        this.follower = new PartitionFollower(this, stateLock, listener, logPrefix);
        this.future = new PartitionFutureLog(this, stateLock, listener, logPrefix);
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
     * Applies a committed registration under the write side: becoming leader or follower, or an ISR change. One
     * older than the partition epoch this broker knows (an AlterPartition answer may have taught it a newer one
     * first) is skipped; the ISR state and the followers follow ({@link PartitionIsr#onRegistration}). Then the high
     * watermark is recomputed and the listener hears of a leadership or ISR change, so that waiters re-check.
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
            boolean leading = newRegistration.leader() == localBrokerId;
            if (old == null || old.leaderEpoch() != newRegistration.leaderEpoch()) {
                STATE_CHANGE_LOGGER.info("{}{} in leader epoch {} with partition epoch {} (replicas {}, isr {}{}), "
                    + "log end offset {}, high watermark {}", logPrefix,
                    leading ? "Leader" : "Follower of broker " + newRegistration.leader(),
                    newRegistration.leaderEpoch(), newRegistration.partitionEpoch(), newRegistration.replicas(),
                    newRegistration.isr(), leading && isUnderMinIsr() ? " (under-min-isr)" : "", log.logEndOffset(),
                    highWatermark);
            }
        } finally {
            stateLock.writeLock().unlock();
        }
        leader.maybeIncrementHighWatermark(time.milliseconds());
        if (leadershipChanged) {
            listener.onLeadershipChanged(this);
        } else if (isrChanged) {
            listener.onIsrChanged(this);
        }
    }

    /** A request's leader-epoch check: FENCED_ or UNKNOWN_LEADER_EPOCH ({@link PartitionReads#checkLeaderEpoch}). */
    public void checkLeaderEpoch(int currentLeaderEpoch, boolean requireLeader) {
        reads.checkLeaderEpoch(currentLeaderEpoch, requireLeader);
    }

    // ----- leader side: PartitionLeader (takes the lock), over PartitionIsr (the leader's state) -----------------

    /** {@link #appendRecordsToLeader(ByteBuffer, AppendOrigin, int, VerificationGuard)} without verification. */
    public LogAppendInfo appendRecordsToLeader(ByteBuffer records, AppendOrigin origin, int requiredAcks) {
        return leader.appendRecordsToLeader(records, origin, requiredAcks, null);
    }

    /** Appends as leader; acks=all then waits for the HW ({@link PartitionLeader#appendRecordsToLeader}). */
    public LogAppendInfo appendRecordsToLeader(ByteBuffer records, AppendOrigin origin, int requiredAcks,
                                               VerificationGuard verification) {
        return leader.appendRecordsToLeader(records, origin, requiredAcks, verification);
    }

    /** {@link #maybeStartTransactionVerification(long, int, short, boolean)} of a producer before Produce v12. */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short epoch) {
        return leader.maybeStartTransactionVerification(producerId, sequence, epoch, false);
    }

    /** A transactional append's guard (KIP-890; {@link PartitionLeader#maybeStartTransactionVerification}). */
    public VerificationGuard maybeStartTransactionVerification(long producerId, int sequence, short epoch,
                                                               boolean supportsEpochBump) {
        return leader.maybeStartTransactionVerification(producerId, sequence, epoch, supportsEpochBump);
    }

    /** {@link #checkEnoughReplicasReachOffset(long, int)} for an append in the current leader epoch. */
    public Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset) {
        return leader.checkEnoughReplicasReachOffset(requiredOffset, leaderEpoch());
    }

    /** The acks=all outcome, empty until reached ({@link PartitionLeader#checkEnoughReplicasReachOffset}). */
    public Optional<Errors> checkEnoughReplicasReachOffset(long requiredOffset, int appendLeaderEpoch) {
        return leader.checkEnoughReplicasReachOffset(requiredOffset, appendLeaderEpoch);
    }

    /** DeleteRecords on the leader ({@link PartitionLeader#deleteRecordsOnLeader}). */
    public DeleteRecordsResult deleteRecordsOnLeader(long offset) {
        return leader.deleteRecordsOnLeader(offset);
    }

    /** The low watermark while leading ({@link PartitionIsr#lowWatermark}), else NOT_LEADER_OR_FOLLOWER. */
    public long lowWatermarkIfLeader() {
        return leader.lowWatermarkIfLeader();
    }

    /**
     * What {@link #deleteRecordsOnLeader} did: the offset the log now starts at on the leader (the request's offset
     * resolved) and the low watermark right after.
     */
    public record DeleteRecordsResult(long requestedOffset, long lowWatermark) {
    }

    /** True when this broker leads and the committed ISR is smaller than the effective min ISR. */
    public boolean isUnderMinIsr() {
        return isLeader() && isr.state().isr().size() < isr.effectiveMinIsr();
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

    /** Records a follower's fetch; it may join the ISR ({@link PartitionLeader#updateFollowerFetchState}). */
    public void updateFollowerFetchState(int replicaId, long fetchOffset, long followerStartOffset, long fetchTimeMs,
                                         long leaderEndOffset, long brokerEpoch) {
        leader.updateFollowerFetchState(replicaId, fetchOffset, followerStartOffset, fetchTimeMs, leaderEndOffset,
            brokerEpoch);
    }

    /** Proposes the ISR without its lagging followers ({@link PartitionLeader#maybeShrinkIsr}). */
    public void maybeShrinkIsr() {
        leader.maybeShrinkIsr();
    }

    /**
     * Restores the high watermark checkpointed before a restart within the log (Kafka's
     * {@code UnifiedLog.updateHighWatermark}), so consumers see at once what they saw before; never lowers it.
     */
    void restoreHighWatermark(long checkpointed) {
        long bounded = Math.min(Math.max(checkpointed, log.logStartOffset()), log.logEndOffset());
        if (advanceHighWatermark(bounded)) {
            listener.onHighWatermarkAdvanced(this);
        }
    }

    /** Marks the partition as gone (topic deleted, broker stopping); the caller then tells the listener. */
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
        future.set(futureLog);
    }

    /** Ends a move without swapping (cancelled, or the partition leaves); returns the future log it had. */
    PartitionLog removeFutureLog() {
        return future.set(null);
    }

    /** How far the future log is behind the current one (Kafka's DescribeLogDirs lag of a future log), or -1. */
    public long futureLogLag() {
        return future.lag();
    }

    /** Roughly how many bytes the future log is behind the current one (their sizes' difference), or -1. */
    long futureLogBytesBehind() {
        return future.bytesBehind();
    }

    /** One copy step of the move ({@link PartitionFutureLog#copy}): the bytes copied, -1 without a move. */
    int copyToFutureLog(int maxBytes) {
        return future.copy(maxBytes);
    }

    /** Swaps the future log in once caught up; whether it did ({@link PartitionFutureLog#maybeReplaceCurrent}). */
    boolean maybeReplaceCurrentWithFutureLog(int maxSteps, int maxBytes, BinaryOperator<PartitionLog> swap) {
        return future.maybeReplaceCurrent(maxSteps, maxBytes, swap);
    }

    // ----- reads: PartitionReads ---------------------------------------------------------------------------------

    /** {@link #read(long, int, int, FetchIsolation, boolean, boolean)} as leader. */
    public LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                              boolean minOneMessage) {
        return reads.read(fetchOffset, currentLeaderEpoch, maxBytes, isolation, minOneMessage, true);
    }

    /** Reads as leader or, if not {@code fetchOnlyFromLeader}, any replica ({@link PartitionReads#read}). */
    public LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                              boolean minOneMessage, boolean fetchOnlyFromLeader) {
        return reads.read(fetchOffset, currentLeaderEpoch, maxBytes, isolation, minOneMessage, fetchOnlyFromLeader);
    }

    /** The leader-epoch check of a read ({@link PartitionReads#checkReadable}). */
    public void checkReadable(int currentLeaderEpoch, boolean fetchOnlyFromLeader) {
        reads.checkReadable(currentLeaderEpoch, fetchOnlyFromLeader);
    }

    /** One fetcher's read, then a follower's position recorded ({@link PartitionReads#fetchRecords}). */
    public LogReadResult fetchRecords(LogReadRequest request, FetchIsolation isolation, int maxBytes,
                                      boolean minOneMessage, boolean updateFetchState) {
        return reads.fetchRecords(request, isolation, maxBytes, minOneMessage, updateFetchState);
    }

    /** Whether a follower's fetch diverged from this log ({@link PartitionReads#hasDiverged}). */
    public boolean hasDiverged(int currentLeaderEpoch, int lastFetchedEpoch, long fetchOffset) {
        return reads.hasDiverged(currentLeaderEpoch, lastFetchedEpoch, fetchOffset);
    }

    /** The end of what a fetch of {@code isolation} may read: log end, high watermark or last stable offset. */
    public long fetchableEnd(FetchIsolation isolation) {
        return reads.fetchableEnd(isolation);
    }

    /** {@link #fetchOffsetForTimestamp(long, FetchIsolation, int, boolean)} from the leader only. */
    public Optional<TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, FetchIsolation isolation,
                                                                int currentLeaderEpoch) {
        return reads.fetchOffsetForTimestamp(timestamp, isolation, currentLeaderEpoch, true);
    }

    /** ListOffsets for one partition ({@link PartitionReads#fetchOffsetForTimestamp}); empty when none qualifies. */
    public Optional<TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, FetchIsolation isolation,
                                                                int currentLeaderEpoch, boolean requireLeader) {
        return reads.fetchOffsetForTimestamp(timestamp, isolation, currentLeaderEpoch, requireLeader);
    }

    /** OffsetForLeaderEpoch ({@link PartitionReads#lastOffsetForLeaderEpoch}). */
    public EpochEndOffset lastOffsetForLeaderEpoch(int currentLeaderEpoch, int leaderEpoch, boolean requireLeader) {
        return reads.lastOffsetForLeaderEpoch(currentLeaderEpoch, leaderEpoch, requireLeader);
    }

    // ----- follower side (the replica fetcher's calls, each in the leader epoch it fetched in): PartitionFollower -

    /** Appends batches fetched from the leader ({@link PartitionFollower#append}). */
    public LogAppendInfo appendRecordsToFollower(ByteBuffer records, int fetchLeaderEpoch) {
        return follower.append(records, fetchLeaderEpoch);
    }

    /** Takes the leader's high watermark, which may move back ({@link PartitionFollower#updateHighWatermark}). */
    public void updateFollowerHighWatermark(long leaderHighWatermark, int fetchLeaderEpoch) {
        follower.updateHighWatermark(leaderHighWatermark, fetchLeaderEpoch);
    }

    /** Moves the log start offset up to the leader's ({@link PartitionFollower#maybeIncrementLogStartOffset}). */
    public void maybeIncrementLogStartOffsetAsFollower(long leaderLogStartOffset, int fetchLeaderEpoch) {
        follower.maybeIncrementLogStartOffset(leaderLogStartOffset, fetchLeaderEpoch);
    }

    /** Truncates the follower's log to {@code offset} ({@link PartitionFollower#truncateTo}). */
    public void truncateAsFollower(long offset, int fetchLeaderEpoch) {
        follower.truncateTo(offset, fetchLeaderEpoch);
    }

    /** Deletes the follower's whole log and starts it empty at {@code offset}, the new high watermark too. */
    public void truncateFullyAndStartAtAsFollower(long offset, int fetchLeaderEpoch) {
        follower.truncateFullyAndStartAt(offset, fetchLeaderEpoch);
    }

    // ----- for the collaborators ---------------------------------------------------------------------------------

    int localBrokerId() {
        return localBrokerId;
    }

    Time time() {
        return time;
    }

    /** NOT_LEADER_OR_FOLLOWER naming the leader this broker knows. */
    NotLeaderOrFollowerException notLeader() {
        return new NotLeaderOrFollowerException("Broker " + localBrokerId + " is not the leader of " + topicPartition
            + " (leader " + registration.leader() + ")");
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
