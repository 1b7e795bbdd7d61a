package io.cairn.isr;

import io.cairn.log.FetchDataInfo;
import io.cairn.log.FileSlice;
import io.cairn.log.LogOffsetMetadata;
import io.cairn.log.PartitionLog;
import io.cairn.log.TimestampAndOffset;
import io.cairn.log.epoch.EpochEntry;
import io.cairn.log.epoch.LeaderEpochCache;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The reads of one {@link Partition}: records for consumers and followers (with a follower's replica and divergence
 * checks), ListOffsets, OffsetForLeaderEpoch, the leader-epoch checks of requests and the leader-epoch history they
 * answer from (Kafka's {@code Partition.fetchRecords}, {@code fetchOffsetForTimestamp},
 * {@code lastOffsetForLeaderEpoch}). What a fetch does to the follower's position afterwards is the leader side's
 * ({@link PartitionLeader}), recorded once the lock is released.
 *
 * <p>Thread-safety: a package-private collaborator of {@link Partition} without state of its own. Each read takes the
 * read side of the partition's state lock ({@code Partition.stateLock}, handed in) for its whole work, so a log swap
 * of a replica move (under the write side) never happens under a read and a read never sees a registration half
 * applied; {@link #fetchRecords} records a follower's position only after releasing it. The checks
 * ({@link #checkLeaderEpoch}, {@link #checkReadable}) and {@link #fetchableEnd} read volatile state without the lock,
 * as they did in {@link Partition}; {@link #leaderEpochStartOffset} is for {@link PartitionIsr}, whose caller already
 * holds the lock.
 */
final class PartitionReads {

    private final Partition partition;
    private final ReentrantReadWriteLock stateLock;

    PartitionReads(Partition partition, ReentrantReadWriteLock stateLock) {
        this.partition = partition;
        this.stateLock = stateLock;
    }

    /**
     * Without the lock: checks a request's {@code current_leader_epoch} against ours (Kafka's rule): older is
     * FENCED_LEADER_EPOCH, newer is UNKNOWN_LEADER_EPOCH (our metadata lags), {@link Partition#NO_EPOCH} always
     * passes; then, when {@code requireLeader}, that this broker leads.
     */
    void checkLeaderEpoch(int currentLeaderEpoch, boolean requireLeader) {
        PartitionRegistration reg = partition.registration();
        if (currentLeaderEpoch != Partition.NO_EPOCH) {
            if (currentLeaderEpoch < reg.leaderEpoch()) {
                throw new FencedLeaderEpochException("The leader epoch " + currentLeaderEpoch + " of the request "
                    + "is older than the current leader epoch " + reg.leaderEpoch() + " of "
                    + partition.topicPartition());
            }
            if (currentLeaderEpoch > reg.leaderEpoch()) {
                throw new UnknownLeaderEpochException("The leader epoch " + currentLeaderEpoch + " of the request "
                    + "is newer than the current leader epoch " + reg.leaderEpoch() + " of "
                    + partition.topicPartition());
            }
        }
        if (requireLeader && reg.leader() != partition.localBrokerId()) {
            throw partition.notLeader();
        }
    }

    /**
     * Without the lock: the leader-epoch check of a read (Kafka's {@code localLogWithEpochOrThrow}); a read any
     * replica may serve still needs the partition hosted here.
     */
    void checkReadable(int currentLeaderEpoch, boolean fetchOnlyFromLeader) {
        checkLeaderEpoch(currentLeaderEpoch, fetchOnlyFromLeader);
        if (!fetchOnlyFromLeader && partition.isRemoved()) {
            throw new NotLeaderOrFollowerException("Broker " + partition.localBrokerId() + " no longer hosts "
                + partition.topicPartition());
        }
    }

    /** Without the lock: the end of what a fetch of {@code isolation} may read. */
    long fetchableEnd(FetchIsolation isolation) {
        return switch (isolation) {
            case LOG_END -> partition.log().logEndOffset();
            case HIGH_WATERMARK -> partition.highWatermark();
            case TXN_COMMITTED -> partition.lastStableOffset();
        };
    }

    /**
     * Reads from {@code fetchOffset} up to what {@code isolation} allows, after the leader-epoch check
     * ({@link #checkReadable}), holding the read side. As leader ({@code fetchOnlyFromLeader}), an offset
     * below the log start or beyond the log end is OFFSET_OUT_OF_RANGE and an offset between the high watermark and
     * the log end reads nothing. With {@code fetchOnlyFromLeader} false a follower replica reads too (a consumer's
     * fetch, KIP-392): with its own log start and end offsets, up to its own high watermark (learnt from the leader,
     * so possibly behind it: an offset between the two reads nothing) and last stable offset;
     * NOT_LEADER_OR_FOLLOWER once the partition left this broker. The caller closes the result.
     */
    LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                       boolean minOneMessage, boolean fetchOnlyFromLeader) {
        stateLock.readLock().lock();
        try {
            return readLocked(fetchOffset, currentLeaderEpoch, maxBytes, isolation, minOneMessage,
                fetchOnlyFromLeader);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** {@link #read} with the read side held. */
    private LogReadResult readLocked(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                                     boolean minOneMessage, boolean fetchOnlyFromLeader) {
        checkReadable(currentLeaderEpoch, fetchOnlyFromLeader);
        PartitionLog log = partition.log();
        long hw = partition.highWatermark();
        long lso = partition.lastStableOffset();
        long start = log.logStartOffset();
        long end = log.logEndOffset();
        FetchDataInfo info = switch (isolation) {
            case LOG_END -> log.read(fetchOffset, maxBytes, Long.MAX_VALUE, minOneMessage);
            case HIGH_WATERMARK -> log.read(fetchOffset, maxBytes, hw, minOneMessage);
            case TXN_COMMITTED -> log.readCommitted(fetchOffset, maxBytes, lso, minOneMessage);
        };
        return new LogReadResult(info, hw, lso, start, end, null);
    }

    /**
     * One fetcher's read of this partition (Kafka's {@code Partition.fetchRecords}): under the read side, the
     * leader-epoch check (the leader only, unless {@link LogReadRequest#fetchOnlyFromLeader} is false: a consumer
     * may read from a follower replica, see {@link #read}); for a follower, that it is an assigned replica (else
     * UNKNOWN_LEADER_EPOCH when the request named an epoch, NOT_LEADER_OR_FOLLOWER when not: the follower retries),
     * the divergence check of its last fetched epoch and the read to the log end; for a consumer, the read to what
     * {@code isolation} allows. Then, for a follower without divergence and with {@code updateFetchState}, the
     * record of its position ({@link Partition#updateFollowerFetchState}) once the read side is released. The caller
     * closes the result.
     */
    LogReadResult fetchRecords(LogReadRequest request, FetchIsolation isolation, int maxBytes,
                               boolean minOneMessage, boolean updateFetchState) {
        long fetchTimeMs = partition.time().milliseconds();
        LogReadResult result;
        stateLock.readLock().lock();
        try {
            result = fetchRecordsLocked(request, isolation, maxBytes, minOneMessage);
        } finally {
            stateLock.readLock().unlock();
        }
        if (request.isFromFollower() && updateFetchState && result.divergingEpoch() == null) {
            try {
                partition.updateFollowerFetchState(request.replicaId(), request.fetchOffset(),
                    request.logStartOffset(), fetchTimeMs, result.logEndOffset(), request.replicaEpoch());
            } catch (RuntimeException e) {
                result.close();
                throw e;
            }
        }
        return result;
    }

    /** The read part of {@link #fetchRecords}, with the read side held. */
    private LogReadResult fetchRecordsLocked(LogReadRequest request, FetchIsolation isolation, int maxBytes,
                                             boolean minOneMessage) {
        checkReadable(request.currentLeaderEpoch(), request.fetchOnlyFromLeader());
        PartitionRegistration reg = partition.registration();
        if (request.isFromFollower() && !reg.replicas().contains(request.replicaId())) {
            String message = "Replica " + request.replicaId() + " is not recognized as a valid replica of "
                + partition.topicPartition() + " in leader epoch " + reg.leaderEpoch() + " with partition epoch "
                + reg.partitionEpoch();
            throw request.currentLeaderEpoch() != Partition.NO_EPOCH ? new UnknownLeaderEpochException(message)
                : new NotLeaderOrFollowerException(message);
        }
        LogReadResult result = divergence(request);
        if (result == null) {
            result = readLocked(request.fetchOffset(), request.currentLeaderEpoch(), maxBytes, isolation,
                minOneMessage, request.fetchOnlyFromLeader());
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
        PartitionLog log = partition.log();
        long hw = partition.highWatermark();
        long lso = partition.lastStableOffset();
        long start = log.logStartOffset();
        long end = log.logEndOffset();
        EpochEndOffset epochEnd = lastOffsetForLeaderEpochLocked(request.currentLeaderEpoch(),
            request.lastFetchedEpoch(), false);
        if (epochEnd.endOffset() == EpochEndOffset.UNDEFINED_EPOCH_OFFSET
                || epochEnd.leaderEpoch() == EpochEndOffset.UNDEFINED_EPOCH) {
            throw new OffsetOutOfRangeException("Could not determine the end offset of the last fetched epoch "
                + request.lastFetchedEpoch() + " from the request");
        }
        if (request.fetchOffset() < start) {
            throw new OffsetOutOfRangeException("Received request for offset " + request.fetchOffset() + " for "
                + "partition " + partition.topicPartition() + ", but we only have log segments in the range " + start
                + " to " + end + ".");
        }
        if (epochEnd.leaderEpoch() < request.lastFetchedEpoch() || epochEnd.endOffset() < request.fetchOffset()) {
            FetchDataInfo empty = new FetchDataInfo(LogOffsetMetadata.offsetOnly(request.fetchOffset()),
                FileSlice.empty(), false, List.of());
            return new LogReadResult(empty, hw, lso, start, end, epochEnd);
        }
        return null;
    }

    /**
     * Whether a follower fetching at {@code fetchOffset} with {@code lastFetchedEpoch} has diverged from this log (a
     * delayed fetch then answers at once, with the diverging epoch); false, without the lock, when no epoch was
     * given, else decided under the read side.
     */
    boolean hasDiverged(int currentLeaderEpoch, int lastFetchedEpoch, long fetchOffset) {
        if (lastFetchedEpoch < 0) {
            return false;
        }
        stateLock.readLock().lock();
        try {
            EpochEndOffset end = lastOffsetForLeaderEpochLocked(currentLeaderEpoch, lastFetchedEpoch, false);
            return end.endOffset() == EpochEndOffset.UNDEFINED_EPOCH_OFFSET
                || end.leaderEpoch() == EpochEndOffset.UNDEFINED_EPOCH
                || end.leaderEpoch() < lastFetchedEpoch || end.endOffset() < fetchOffset;
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /**
     * ListOffsets for one partition under the read side (Kafka's {@code Partition.fetchOffsetForTimestamp}, after
     * the leader-epoch check). The visible end is the high watermark for a read_uncommitted consumer, the last
     * stable offset for read_committed and the log end offset for a replica ({@code isolation} null). Latest is the
     * visible end in the current leader epoch; earliest and earliest-local (no tiered storage) are the log start
     * offset with the epoch of the first epoch entry when that entry starts at or before it; latest-tiered is offset
     * -1 (no tiered storage); max-timestamp and a timestamp search are answered only when the record found is below
     * the visible end. Empty means no record qualifies (Kafka answers offset -1 without an error).
     *
     * <p>For a consumer ({@code isolation} not null), a leader whose high watermark has not yet reached the start
     * offset of its leader epoch answers OFFSET_NOT_AVAILABLE for latest and for a lookup that found nothing
     * visible, as Kafka does after a leader election.
     *
     * @param isolation     null for a replica's (or a debugging) request: no visibility bound
     * @param requireLeader false only for Kafka's debugging replica id (-2), which may ask a follower
     */
    Optional<TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, FetchIsolation isolation,
                                                         int currentLeaderEpoch, boolean requireLeader) {
        stateLock.readLock().lock();
        try {
            return fetchOffsetForTimestampLocked(timestamp, isolation, currentLeaderEpoch, requireLeader);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** {@link #fetchOffsetForTimestamp} with the read side held. */
    private Optional<TimestampAndOffset> fetchOffsetForTimestampLocked(long timestamp, FetchIsolation isolation,
                                                                       int currentLeaderEpoch,
                                                                       boolean requireLeader) {
        checkLeaderEpoch(currentLeaderEpoch, requireLeader);
        PartitionLog log = partition.log();
        long hw = partition.highWatermark();
        long lastFetchable = isolation == null || isolation == FetchIsolation.LOG_END ? log.logEndOffset()
            : isolation == FetchIsolation.TXN_COMMITTED ? partition.lastStableOffset() : hw;
        long epochStart = leaderEpochStartOffset();
        RuntimeException offsetsError = isolation != null && epochStart > hw
            ? Errors.OFFSET_NOT_AVAILABLE.exception("Failed to fetch offsets for partition "
                + partition.topicPartition() + " with leader epoch "
                + (currentLeaderEpoch == Partition.NO_EPOCH ? "unknown" : currentLeaderEpoch)
                + " as this partition's high watermark (" + hw + ") is lagging behind the start offset from "
                + "the beginning of this epoch (" + epochStart + ").")
            : null;
        if (timestamp == TimestampAndOffset.LATEST_TIMESTAMP) {
            if (offsetsError != null) {
                throw offsetsError;
            }
            return Optional.of(new TimestampAndOffset(-1L, lastFetchable, partition.registration().leaderEpoch()));
        }
        if (timestamp == TimestampAndOffset.EARLIEST_TIMESTAMP
                || timestamp == TimestampAndOffset.EARLIEST_LOCAL_TIMESTAMP) {
            long start = log.logStartOffset();
            return Optional.of(new TimestampAndOffset(-1L, start, earliestEpoch(start)));
        }
        Optional<TimestampAndOffset> found = timestamp == Partition.LATEST_TIERED_TIMESTAMP
            ? Optional.of(new TimestampAndOffset(-1L, -1L, -1))
            : log.fetchOffsetByTimestamp(timestamp);
        if (found.isPresent() && found.get().offset() < lastFetchable) {
            return found;
        }
        if (offsetsError != null) {
            throw offsetsError;
        }
        return Optional.empty();
    }

    /**
     * The leader-epoch history as Kafka's leader keeps it: the log's entries (written when a batch of a new epoch
     * is appended) plus, while leading in an epoch nothing was appended in yet, that epoch starting at the log end
     * offset (Kafka assigns it when the broker becomes leader), replacing entries that start there.
     */
    private List<EpochEntry> epochHistory() {
        PartitionLog log = partition.log();
        List<EpochEntry> entries = log.epochEntries();
        PartitionRegistration reg = partition.registration();
        if (reg.leader() != partition.localBrokerId()
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

    /**
     * With the lock held (by {@link PartitionIsr}'s caller, or a read here): where the current leader epoch starts
     * (Kafka's {@code leaderEpochStartOffsetOpt}).
     */
    long leaderEpochStartOffset() {
        List<EpochEntry> entries = epochHistory();
        if (!entries.isEmpty()) {
            EpochEntry latest = entries.get(entries.size() - 1);
            if (latest.epoch() == partition.registration().leaderEpoch()) {
                return latest.startOffset();
            }
        }
        return partition.log().logEndOffset();
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
     * OffsetForLeaderEpoch under the read side (Kafka's {@code Partition.lastOffsetForLeaderEpoch}):
     * {@link LeaderEpochCache#endOffsetFor} over the leader's history ({@link #epochHistory}), after the leader-epoch
     * check:
     * <ul>
     *   <li>the latest epoch of the history: that epoch and the log end offset;</li>
     *   <li>an older epoch: the largest epoch at most {@code leaderEpoch} and the start of the next one;</li>
     *   <li>an epoch older than the whole history: {@code leaderEpoch} itself and the start of the first entry;</li>
     *   <li>{@link EpochEndOffset#UNDEFINED_EPOCH}, an epoch newer than the history, or an empty history:
     *       UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET.</li>
     * </ul>
     */
    EpochEndOffset lastOffsetForLeaderEpoch(int currentLeaderEpoch, int leaderEpoch, boolean requireLeader) {
        stateLock.readLock().lock();
        try {
            return lastOffsetForLeaderEpochLocked(currentLeaderEpoch, leaderEpoch, requireLeader);
        } finally {
            stateLock.readLock().unlock();
        }
    }

    /** {@link #lastOffsetForLeaderEpoch} with the read side held. */
    private EpochEndOffset lastOffsetForLeaderEpochLocked(int currentLeaderEpoch, int leaderEpoch,
                                                          boolean requireLeader) {
        checkLeaderEpoch(currentLeaderEpoch, requireLeader);
        EpochEntry end = LeaderEpochCache.endOffsetFor(epochHistory(), leaderEpoch, partition.log().logEndOffset());
        return new EpochEndOffset(end.epoch(), end.startOffset());
    }
}
