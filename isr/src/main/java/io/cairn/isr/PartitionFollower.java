package io.cairn.isr;

import io.cairn.log.LogAppendInfo;
import io.cairn.log.PartitionLog;
import io.cairn.log.UnexpectedAppendOffsetException;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The follower side of one {@link Partition}: what this broker's replica fetcher does to the partition while another
 * broker leads it (Kafka's {@code appendRecordsToFollowerOrFutureReplica}, {@code truncateTo},
 * {@code truncateFullyAndStartAt} and the follower's {@code UnifiedLog.maybeUpdateHighWatermark} /
 * {@code maybeIncrementLogStartOffset}). Each call names the leader epoch the fetcher fetched in and first checks
 * that the partition still follows in it ({@link #checkFollowing}): a fetch from a former leader, or one that
 * completes after this broker became leader, never touches the log.
 *
 * <p>Thread-safety: a package-private collaborator of {@link Partition} without state of its own. Each method
 * takes the read side of the partition's state lock ({@code Partition.stateLock}, handed in) for its whole work, so
 * a leadership change (under the write side) cannot interleave with an append or truncation; the listener hears of
 * an advanced high watermark once it is released. The high watermark it sets is the partition's
 * ({@link Partition#setHighWatermark}).
 */
final class PartitionFollower {

    /** The partition's logger: these are the partition's log lines, under the name Kafka users filter on. */
    private static final Logger LOGGER = LogManager.getLogger(Partition.class);

    private final Partition partition;
    private final ReentrantReadWriteLock stateLock;
    private final PartitionListener listener;
    private final String logPrefix;

    PartitionFollower(Partition partition, ReentrantReadWriteLock stateLock, PartitionListener listener,
                      String logPrefix) {
        this.partition = partition;
        this.stateLock = stateLock;
        this.listener = listener;
        this.logPrefix = logPrefix;
    }

    /**
     * Under the read side: appends batches fetched from the leader with the leader's offsets and epochs through
     * {@link PartitionLog#appendAsFollower}. A first fetch into an empty log whose first batch starts before the
     * log start offset (the leader's log start moved into that batch) restarts the log at the batch's base offset,
     * as Kafka does; any other overlap is the log's {@link UnexpectedAppendOffsetException}.
     *
     * @throws FencedLeaderEpochException   when the partition moved to another leader epoch meanwhile
     * @throws NotLeaderOrFollowerException when this broker leads the partition or it left this broker
     */
    LogAppendInfo append(ByteBuffer records, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            checkFollowing(fetchLeaderEpoch);
            PartitionLog log = partition.log();
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
     * Under the read side: takes the leader's high watermark as Kafka's follower does, bounded below by the log
     * start offset and above by the log end offset; it may move back (after a truncation the leader's value is the
     * truth). Waiters hear of an advance once the lock is released.
     */
    void updateHighWatermark(long leaderHighWatermark, int fetchLeaderEpoch) {
        boolean advanced;
        stateLock.readLock().lock();
        try {
            checkFollowing(fetchLeaderEpoch);
            advanced = setFollowerHighWatermark(leaderHighWatermark);
        } finally {
            stateLock.readLock().unlock();
        }
        if (advanced) {
            listener.onHighWatermarkAdvanced(partition);
        }
    }

    /**
     * Under the read side: moves the log start offset up to the leader's (Kafka's
     * {@code maybeIncrementLogStartOffset} with reason LeaderOffsetIncremented); never above the high watermark
     * (OFFSET_OUT_OF_RANGE, as Kafka) and never down.
     */
    void maybeIncrementLogStartOffset(long leaderLogStartOffset, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            checkFollowing(fetchLeaderEpoch);
            long hw = partition.highWatermark();
            if (leaderLogStartOffset > hw) {
                throw new OffsetOutOfRangeException("Cannot increment the log start offset to "
                    + leaderLogStartOffset + " of partition " + partition.topicPartition()
                    + " since it is larger than the high watermark " + hw);
            }
            PartitionLog log = partition.log();
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
     * Under the read side: truncates the follower's log to {@code offset} (its epoch history and producer state
     * follow); a high watermark beyond the new log end comes down to it, as Kafka's {@code UnifiedLog.truncateTo}
     * does.
     */
    void truncateTo(long offset, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            checkFollowing(fetchLeaderEpoch);
            PartitionLog log = partition.log();
            log.truncateTo(offset);
            if (partition.highWatermark() > log.logEndOffset()) {
                setFollowerHighWatermark(log.logEndOffset());
            }
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** Under the read side: deletes the whole log and starts it empty at {@code offset}, the new high watermark too. */
    void truncateFullyAndStartAt(long offset, int fetchLeaderEpoch) {
        stateLock.readLock().lock();
        try {
            checkFollowing(fetchLeaderEpoch);
            partition.log().truncateFullyAndStartAt(offset);
            partition.setHighWatermark(offset);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** This broker follows in {@code fetchLeaderEpoch} and still hosts the partition. */
    private void checkFollowing(int fetchLeaderEpoch) {
        PartitionRegistration reg = partition.registration();
        if (partition.isRemoved() || reg.leader() == partition.localBrokerId()) {
            throw new NotLeaderOrFollowerException("Broker " + partition.localBrokerId() + " no longer follows "
                + partition.topicPartition() + " (leader " + reg.leader() + ")");
        }
        if (reg.leaderEpoch() != fetchLeaderEpoch) {
            throw new FencedLeaderEpochException("The fetch of " + partition.topicPartition() + " in leader epoch "
                + fetchLeaderEpoch + " is not of the current leader epoch " + reg.leaderEpoch());
        }
    }

    /** Sets the follower's high watermark within [log start, log end]; true when it advanced. */
    private boolean setFollowerHighWatermark(long offset) {
        PartitionLog log = partition.log();
        long bounded = Math.max(log.logStartOffset(), Math.min(offset, log.logEndOffset()));
        long old = partition.setHighWatermark(bounded);
        if (bounded < old) {
            LOGGER.warn("{}Non-monotonic update of high watermark from {} to {}", logPrefix, old, bounded);
        }
        return bounded > old;
    }
}
