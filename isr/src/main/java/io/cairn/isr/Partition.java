package io.cairn.isr;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.PartitionLog;
import io.cairn.log.TimestampAndOffset;
import io.cairn.log.epoch.EpochEntry;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.NotEnoughReplicasException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One partition hosted by this broker (Kafka's {@code Partition}): its log, its replication state as the metadata
 * quorum committed it (replicas, ISR, leader, leader epoch), and the high watermark, the smallest log end offset
 * among the in-sync replicas. A single broker is the case replicas = ISR = {this broker}: every leader append moves
 * the high watermark to the log end offset at once, through the same code that waits for followers.
 *
 * <p>Thread-safety: thread-safe. Appends and reads hold the read side of {@link #stateLock}, leadership changes
 * the write side, so an append never runs under a stale leader epoch. The high watermark is volatile and only
 * grows while this broker leads; waiters for it sit in a map guarded by its own monitor.
 */
public final class Partition {

    private static final Logger LOGGER = LogManager.getLogger(Partition.class);
    /** A request that names no leader epoch ({@code current_leader_epoch} = -1) skips the epoch check. */
    public static final int NO_EPOCH = -1;

    private final TopicPartition topicPartition;
    private final Uuid topicId;
    private final int localBrokerId;
    private final PartitionLog log;
    private final PartitionListener listener;
    private final ReentrantReadWriteLock stateLock = new ReentrantReadWriteLock();
    /** Log end offsets of the other replicas, as their fetches report them (replication issue). */
    private final Map<Integer, Long> followerEndOffsets = new ConcurrentHashMap<>();
    /** acks=all waiters by the offset the high watermark must reach; guarded by its own monitor. */
    private final TreeMap<Long, List<CompletableFuture<Void>>> hwWaiters = new TreeMap<>();
    private final String logPrefix;
    private volatile PartitionRegistration registration;
    private volatile int minInsyncReplicas;
    private volatile long highWatermark;

    Partition(TopicPartition topicPartition, Uuid topicId, int localBrokerId, PartitionLog log,
              PartitionRegistration registration, int minInsyncReplicas, PartitionListener listener) {
        this.topicPartition = topicPartition;
        this.topicId = topicId;
        this.localBrokerId = localBrokerId;
        this.log = log;
        this.listener = listener;
        this.minInsyncReplicas = minInsyncReplicas;
        this.logPrefix = "[Partition " + topicPartition + " broker=" + localBrokerId + "] ";
        this.highWatermark = log.logStartOffset();
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
     * Applies a committed registration. Becoming leader (or a new leader epoch while leading) recomputes the high
     * watermark from the ISR; losing leadership fails the acks=all waiters with NOT_LEADER_OR_FOLLOWER.
     */
    void update(PartitionRegistration newRegistration) {
        stateLock.writeLock().lock();
        try {
            PartitionRegistration old = registration;
            if (old != null && newRegistration.partitionEpoch() < old.partitionEpoch()) {
                return;
            }
            registration = newRegistration;
            boolean leader = newRegistration.leader() == localBrokerId;
            if (old == null || old.leaderEpoch() != newRegistration.leaderEpoch()) {
                LOGGER.info("{}{} in leader epoch {} (replicas {}, isr {}), log end offset {}", logPrefix,
                    leader ? "Leader" : "Follower of broker " + newRegistration.leader(),
                    newRegistration.leaderEpoch(), newRegistration.replicas(), newRegistration.isr(),
                    log.logEndOffset());
                followerEndOffsets.clear();
            }
            if (!leader) {
                failWaiters(new NotLeaderOrFollowerException("Broker " + localBrokerId
                    + " is no longer the leader of " + topicPartition));
            }
        } finally {
            stateLock.writeLock().unlock();
        }
        maybeIncrementHighWatermark();
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
     * (NOT_ENOUGH_REPLICAS). The returned append may still be below the high watermark: acks=all waits with
     * {@link #awaitHighWatermark}.
     */
    public LogAppendInfo appendRecordsToLeader(ByteBuffer records, AppendOrigin origin, int requiredAcks) {
        LogAppendInfo info;
        stateLock.readLock().lock();
        try {
            PartitionRegistration reg = registration;
            if (reg.leader() != localBrokerId) {
                throw notLeader();
            }
            int isrSize = reg.isr().size();
            if (requiredAcks == -1 && isrSize < minInsyncReplicas) {
                throw new NotEnoughReplicasException("The size of the current ISR " + reg.isr()
                    + " is insufficient to satisfy the min.isr requirement of " + minInsyncReplicas
                    + " for partition " + topicPartition);
            }
            info = log.appendAsLeader(records, reg.leaderEpoch(), origin);
        } finally {
            stateLock.readLock().unlock();
        }
        maybeIncrementHighWatermark();
        return info;
    }

    /**
     * Completes when the high watermark reaches {@code offset} (all in-sync replicas have everything before it);
     * fails with NOT_LEADER_OR_FOLLOWER if this broker stops leading first.
     */
    public CompletableFuture<Void> awaitHighWatermark(long offset) {
        if (highWatermark >= offset) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> future = new CompletableFuture<>();
        synchronized (hwWaiters) {
            hwWaiters.computeIfAbsent(offset, k -> new ArrayList<>()).add(future);
        }
        if (!isLeader()) {
            failWaiters(notLeader());
        }
        completeWaiters(highWatermark);
        return future;
    }

    /** A follower's fetch reported its log end offset (the replication issue drives this). */
    public void updateFollowerEndOffset(int replicaId, long logEndOffset) {
        followerEndOffsets.put(replicaId, logEndOffset);
        maybeIncrementHighWatermark();
    }

    /** Moves the high watermark to the smallest log end offset of the ISR, if that is larger, and wakes waiters. */
    private void maybeIncrementHighWatermark() {
        long newHw;
        stateLock.readLock().lock();
        try {
            PartitionRegistration reg = registration;
            if (reg.leader() != localBrokerId) {
                return;
            }
            newHw = log.logEndOffset();
            for (int replica : reg.isr()) {
                if (replica != localBrokerId) {
                    newHw = Math.min(newHw, followerEndOffsets.getOrDefault(replica, -1L));
                }
            }
            synchronized (this) {
                if (newHw <= highWatermark) {
                    return;
                }
                highWatermark = newHw;
            }
        } finally {
            stateLock.readLock().unlock();
        }
        completeWaiters(newHw);
        listener.onHighWatermarkAdvanced(this);
    }

    private void completeWaiters(long hw) {
        List<CompletableFuture<Void>> done = new ArrayList<>();
        synchronized (hwWaiters) {
            while (!hwWaiters.isEmpty() && hwWaiters.firstKey() <= hw) {
                done.addAll(hwWaiters.pollFirstEntry().getValue());
            }
        }
        done.forEach(f -> f.complete(null));
    }

    private void failWaiters(RuntimeException error) {
        List<CompletableFuture<Void>> failed = new ArrayList<>();
        synchronized (hwWaiters) {
            hwWaiters.values().forEach(failed::addAll);
            hwWaiters.clear();
        }
        failed.forEach(f -> f.completeExceptionally(error));
    }

    /** Fails pending waiters when the partition leaves this broker (topic deleted, broker stopping). */
    void close(RuntimeException reason) {
        failWaiters(reason);
    }

    /**
     * Reads from {@code fetchOffset} up to what {@code isolation} allows, after the leader-epoch check (consumers
     * and followers both read from the leader here). An offset below the log start or beyond the log end is
     * OFFSET_OUT_OF_RANGE; an offset between the high watermark and the log end reads nothing. The caller closes
     * the result.
     */
    public LogReadResult read(long fetchOffset, int currentLeaderEpoch, int maxBytes, FetchIsolation isolation,
                              boolean minOneMessage) {
        checkLeaderEpoch(currentLeaderEpoch, true);
        long hw = highWatermark;
        long lso = lastStableOffset();
        long start = log.logStartOffset();
        long end = log.logEndOffset();
        FetchDataInfo info = switch (isolation) {
            case LOG_END -> log.read(fetchOffset, maxBytes, Long.MAX_VALUE, minOneMessage);
            case HIGH_WATERMARK -> log.read(fetchOffset, maxBytes, hw, minOneMessage);
            case TXN_COMMITTED -> log.readCommitted(fetchOffset, maxBytes, lso);
        };
        return new LogReadResult(info, hw, lso, start, end);
    }

    /**
     * ListOffsets for one partition (Kafka's {@code fetchOffsetForTimestamp}): earliest and earliest-local are the
     * log start offset, latest is the high watermark (the last stable offset for read_committed, the log end for
     * a replica), max-timestamp is the record with the largest timestamp; otherwise the first record at or after
     * {@code timestamp}. Records at or beyond the visible end are never returned; empty means none qualifies.
     *
     * @param isolation null for a replica's request (no bound)
     */
    public Optional<TimestampAndOffset> fetchOffsetForTimestamp(long timestamp, FetchIsolation isolation,
                                                                int currentLeaderEpoch) {
        checkLeaderEpoch(currentLeaderEpoch, true);
        long visibleEnd = isolation == null || isolation == FetchIsolation.LOG_END ? log.logEndOffset()
            : isolation == FetchIsolation.TXN_COMMITTED ? lastStableOffset() : highWatermark;
        if (timestamp == TimestampAndOffset.LATEST_TIMESTAMP) {
            return Optional.of(new TimestampAndOffset(-1L, visibleEnd, epochAt(visibleEnd)));
        }
        if (timestamp == TimestampAndOffset.EARLIEST_TIMESTAMP
                || timestamp == TimestampAndOffset.EARLIEST_LOCAL_TIMESTAMP) {
            long start = log.logStartOffset();
            return Optional.of(new TimestampAndOffset(-1L, start, epochAt(start)));
        }
        Optional<TimestampAndOffset> found = log.fetchOffsetByTimestamp(timestamp);
        return found.filter(t -> t.offset() < visibleEnd);
    }

    /** The epoch of the batch holding {@code offset} per the epoch history, or -1 when unknown. */
    private int epochAt(long offset) {
        int epoch = -1;
        for (EpochEntry e : log.epochEntries()) {
            if (e.startOffset() <= offset) {
                epoch = e.epoch();
            }
        }
        return epoch;
    }

    /**
     * OffsetForLeaderEpoch (Kafka's {@code lastOffsetForLeaderEpoch}): the largest epoch at most
     * {@code leaderEpoch} in this log's history and the offset where it ends.
     */
    public EpochEndOffset lastOffsetForLeaderEpoch(int currentLeaderEpoch, int leaderEpoch, boolean requireLeader) {
        checkLeaderEpoch(currentLeaderEpoch, requireLeader);
        EpochEntry entry = log.endOffsetForEpoch(leaderEpoch);
        if (entry.epoch() < 0) {
            return new EpochEndOffset(EpochEndOffset.UNDEFINED_EPOCH, EpochEndOffset.UNDEFINED_EPOCH_OFFSET);
        }
        return new EpochEndOffset(entry.epoch(), entry.startOffset());
    }

    @Override
    public String toString() {
        return "Partition(" + topicPartition + ", " + registration + ", hw=" + highWatermark + ")";
    }
}
