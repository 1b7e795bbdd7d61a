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
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.OffsetOutOfRangeException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The reads of one {@link Partition}: records for consumers and followers (with a follower's replica and divergence
 * checks), ListOffsets, OffsetForLeaderEpoch, and the leader-epoch history they answer from (Kafka's
 * {@code Partition.fetchRecords}, {@code fetchOffsetForTimestamp}, {@code lastOffsetForLeaderEpoch}). What a fetch
 * does to the follower's position afterwards is the leader side's ({@link PartitionIsr}), recorded by the partition
 * once the lock is released.
 *
 * <p>Thread-safety: a package-private collaborator of {@link Partition} without state of its own; every method is
 * called with the read side of the partition's state lock ({@code Partition.stateLock}) held, so a log swap of a
 * replica move (under the write side) never happens under a read, and a read never sees a registration half applied.
 */
final class PartitionReads {

    private final Partition partition;

    PartitionReads(Partition partition) {
        this.partition = partition;
    }

    /**
     * Under the read side: reads from {@code fetchOffset} up to what {@code isolation} allows, after the
     * leader-epoch check (see {@link Partition#read(long, int, int, FetchIsolation, boolean, boolean)}).
     */
    LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                       boolean minOneMessage, boolean fetchOnlyFromLeader) {
        partition.checkReadable(currentLeaderEpoch, fetchOnlyFromLeader);
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
     * Under the read side: the read part of one fetcher's fetch (see {@link Partition#fetchRecords}): the
     * leader-epoch check; for a follower, that it is an assigned replica (else UNKNOWN_LEADER_EPOCH when the request
     * named an epoch, NOT_LEADER_OR_FOLLOWER when not: the follower retries) and the divergence check of its last
     * fetched epoch; then the read. The caller closes the result.
     */
    LogReadResult fetchRecords(LogReadRequest request, FetchIsolation isolation, int maxBytes,
                               boolean minOneMessage) {
        partition.checkReadable(request.currentLeaderEpoch(), request.fetchOnlyFromLeader());
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
            result = read(request.fetchOffset(), request.currentLeaderEpoch(), maxBytes, isolation, minOneMessage,
                request.fetchOnlyFromLeader());
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
        EpochEndOffset epochEnd = lastOffsetForLeaderEpoch(request.currentLeaderEpoch(), request.lastFetchedEpoch(),
            false);
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
     * Under the read side: whether a follower fetching at {@code fetchOffset} with {@code lastFetchedEpoch} (at
     * least 0: the caller answers false for none) has diverged from this log.
     */
    boolean hasDiverged(int currentLeaderEpoch, int lastFetchedEpoch, long fetchOffset) {
        EpochEndOffset end = lastOffsetForLeaderEpoch(currentLeaderEpoch, lastFetchedEpoch, false);
        return end.endOffset() == EpochEndOffset.UNDEFINED_EPOCH_OFFSET
            || end.leaderEpoch() == EpochEndOffset.UNDEFINED_EPOCH
            || end.leaderEpoch() < lastFetchedEpoch || end.endOffset() < fetchOffset;
    }

    /**
     * Under the read side: ListOffsets for one partition (see
     * {@link Partition#fetchOffsetForTimestamp(long, FetchIsolation, int, boolean)} for the rules).
     */
    Optional<TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, FetchIsolation isolation,
                                                         int currentLeaderEpoch, boolean requireLeader) {
        partition.checkLeaderEpoch(currentLeaderEpoch, requireLeader);
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

    /** Under the read side: where the current leader epoch starts (Kafka's {@code leaderEpochStartOffsetOpt}). */
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
     * Under the read side: OffsetForLeaderEpoch over the leader's history ({@link #epochHistory}), after the
     * leader-epoch check (see {@link Partition#lastOffsetForLeaderEpoch} for the cases).
     */
    EpochEndOffset lastOffsetForLeaderEpoch(int currentLeaderEpoch, int leaderEpoch, boolean requireLeader) {
        partition.checkLeaderEpoch(currentLeaderEpoch, requireLeader);
        EpochEntry end = LeaderEpochCache.endOffsetFor(epochHistory(), leaderEpoch, partition.log().logEndOffset());
        return new EpochEndOffset(end.epoch(), end.startOffset());
    }
}
