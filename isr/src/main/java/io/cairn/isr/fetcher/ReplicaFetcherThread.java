package io.cairn.isr.fetcher;

import io.cairn.isr.Partition;
import io.cairn.isr.ReplicationQuota;
import io.cairn.isr.client.SourceBroker;
import io.cairn.isr.fetcher.LeaderEndpoint.EpochEndOffsetResult;
import io.cairn.isr.fetcher.LeaderEndpoint.EpochRequest;
import io.cairn.isr.fetcher.LeaderEndpoint.FetchedPartition;
import io.cairn.isr.fetcher.LeaderEndpoint.OffsetAndEpoch;
import io.cairn.isr.fetcher.LeaderEndpoint.PartitionFetchRequest;
import io.cairn.isr.fetcher.PartitionFetchState.Phase;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import io.cairn.wire.error.UnknownTopicOrPartitionException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One replica fetcher (Kafka's {@code AbstractFetcherThread} with {@code ReplicaFetcherThread}): fetches the
 * partitions this broker follows from one leader broker, in a loop of two steps. First the partitions that must be
 * truncated ({@link Phase#TRUNCATING}: added without an epoch history) are truncated, by OffsetForLeaderEpoch when the
 * log has epochs and to the initial fetch offset when it has none. Then one Fetch of every partition ready to fetch;
 * each partition of the response is appended as follower (with the leader's offsets and epochs), takes the leader's
 * high watermark and log start offset, or is handled by its error: a diverging epoch truncates to where the logs
 * agree, OFFSET_OUT_OF_RANGE resets to the leader's log start or end, a fenced epoch waits for metadata to re-add it,
 * other errors back off for {@code replica.fetch.backoff.ms}.
 *
 * <p>Thread-safety: the partition states are guarded by one lock, held while a response is applied, so a partition
 * removed by the manager is never appended to afterwards; the network calls (Fetch, OffsetForLeaderEpoch and the
 * ListOffsets of an out-of-range partition) run outside it, so the metadata applier adding or removing partitions never
 * waits for a leader that does not answer. Unlike Kafka's thread, an unexpected error does not end the thread: it is
 * logged and the thread backs off and goes on. The replication lag of each partition fetched (Kafka's
 * {@code FetcherLagStats}) is one volatile per partition, written by this thread on every answer and read by metrics
 * scrapes from any thread.
 */
public final class ReplicaFetcherThread extends Thread {

    private static final Logger LOGGER = LogManager.getLogger(ReplicaFetcherThread.class);

    private final LeaderEndpoint leader;
    private final Function<TopicPartition, Partition> partitions;
    private final Set<TopicPartition> failedPartitions;
    private final Time time;
    private final long backoffMs;
    private final int fetchMaxBytes;
    private final ReplicationQuota quota;
    private final String logPrefix;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    /** In fetch order; a partition moves to the end whenever its state changes (Kafka's PartitionStates). */
    private final LinkedHashMap<TopicPartition, PartitionFetchState> states = new LinkedHashMap<>();
    /** The lag of each partition fetched once at least (Kafka's {@code FetcherLagMetrics}); written under the lock. */
    private final ConcurrentHashMap<TopicPartition, FetcherLag> lags = new ConcurrentHashMap<>();
    private volatile boolean running = true;

    /**
     * @param name             the thread name ({@code ReplicaFetcherThread-<fetcherId>-<leaderId>})
     * @param leader           the leader's endpoint; closed when the thread ends
     * @param partitions       this broker's hosted partition of a topic partition, or null
     * @param failedPartitions partitions given up on until metadata adds them again (shared with the manager)
     * @param time             the clock of the back-offs
     * @param backoffMs        {@code replica.fetch.backoff.ms}
     * @param fetchMaxBytes    {@code replica.fetch.max.bytes}: the per-partition limit of a fetch
     */
    public ReplicaFetcherThread(String name, LeaderEndpoint leader, Function<TopicPartition, Partition> partitions,
                                Set<TopicPartition> failedPartitions, Time time, long backoffMs, int fetchMaxBytes) {
        this(name, leader, partitions, failedPartitions, time, backoffMs, fetchMaxBytes, new ReplicationQuota(time));
    }

    /**
     * As above, with the follower side of the replication throttle (KIP-73): a throttled partition that is not in
     * sync is left out of fetches while the quota is exceeded, and every throttled partition's fetched bytes count.
     */
    public ReplicaFetcherThread(String name, LeaderEndpoint leader, Function<TopicPartition, Partition> partitions,
                                Set<TopicPartition> failedPartitions, Time time, long backoffMs, int fetchMaxBytes,
                                ReplicationQuota quota) {
        super(name);
        this.quota = quota;
        setDaemon(true);
        this.leader = leader;
        this.partitions = partitions;
        this.failedPartitions = failedPartitions;
        this.time = time;
        this.backoffMs = backoffMs;
        this.fetchMaxBytes = fetchMaxBytes;
        this.logPrefix = "[" + name + " leader=" + leader.sourceBroker().id() + "] ";
    }

    public SourceBroker sourceBroker() {
        return leader.sourceBroker();
    }

    @Override
    public void run() {
        LOGGER.info("{}Starting", logPrefix);
        try {
            while (running) {
                try {
                    doWork();
                } catch (RuntimeException e) {
                    if (running) {
                        LOGGER.error("{}Error in fetcher loop; backing off for {} ms", logPrefix, backoffMs, e);
                        awaitChange(backoffMs);
                    }
                }
            }
        } finally {
            leader.close();
            LOGGER.info("{}Stopped", logPrefix);
        }
    }

    /** Stops the loop and fails a blocked network call; returns at once. */
    public void initiateShutdown() {
        running = false;
        leader.initiateClose();
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** {@link #initiateShutdown} and waits for the thread to end. */
    public void shutdown() {
        initiateShutdown();
        try {
            join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One round: truncation, then one fetch (or a back-off wait when nothing is ready). */
    void doWork() {
        maybeTruncate();
        if (!maybeFetch()) {
            awaitChange(backoffMs);
        }
    }

    private void awaitChange(long ms) {
        lock.lock();
        try {
            if (running) {
                changed.await(ms, TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running = false;
        } finally {
            lock.unlock();
        }
    }

    // ----- partition states -----------------------------------------------------------------------------------

    /**
     * Adds partitions, or re-adds them in a new leader epoch (Kafka's {@code addPartitions}): a partition already
     * fetched in the same leader epoch keeps its state; otherwise it starts at its initial offset, fetching with its
     * log's latest epoch as last fetched epoch, or truncating first when the log has no epoch history.
     */
    public void addPartitions(Map<TopicPartition, InitialFetchState> initial) {
        lock.lock();
        try {
            failedPartitions.removeAll(initial.keySet());
            initial.forEach((tp, init) -> moveToEnd(tp, initialState(tp, init, states.get(tp))));
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private PartitionFetchState initialState(TopicPartition tp, InitialFetchState init, PartitionFetchState current) {
        if (current != null && current.currentLeaderEpoch() == init.currentLeaderEpoch()) {
            return current;
        }
        int lastFetchedEpoch = latestEpoch(tp);
        Phase state = lastFetchedEpoch != PartitionFetchState.NO_EPOCH ? Phase.FETCHING : Phase.TRUNCATING;
        return PartitionFetchState.of(init.topicId(), init.initOffset(), PartitionFetchState.UNKNOWN_LAG,
            init.currentLeaderEpoch(), state, lastFetchedEpoch);
    }

    /** Removes partitions; returns the states they had (the manager may move them to another thread). */
    public Map<TopicPartition, PartitionFetchState> removePartitions(Set<TopicPartition> toRemove) {
        lock.lock();
        try {
            Map<TopicPartition, PartitionFetchState> removed = new LinkedHashMap<>();
            for (TopicPartition tp : toRemove) {
                PartitionFetchState state = states.remove(tp);
                lags.remove(tp);
                if (state != null) {
                    removed.put(tp, state);
                }
            }
            return removed;
        } finally {
            lock.unlock();
        }
    }

    /** The partitions this thread fetches now. */
    public Set<TopicPartition> partitions() {
        lock.lock();
        try {
            return Set.copyOf(states.keySet());
        } finally {
            lock.unlock();
        }
    }

    public int partitionCount() {
        lock.lock();
        try {
            return states.size();
        } finally {
            lock.unlock();
        }
    }

    /** The state of {@code tp}, or null when this thread does not fetch it. */
    public PartitionFetchState fetchState(TopicPartition tp) {
        lock.lock();
        try {
            return states.get(tp);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Calls {@code action} with each partition's replication lag (the leader's high watermark minus this replica's
     * fetch offset at the last answer; Kafka's {@code ConsumerLag}), for the partitions answered at least once.
     * Any thread; the values are read without the lock.
     */
    public void forEachLag(BiConsumer<TopicPartition, Long> action) {
        lags.forEach((tp, lag) -> action.accept(tp, lag.value));
    }

    private void moveToEnd(TopicPartition tp, PartitionFetchState state) {
        states.remove(tp);
        states.put(tp, state);
    }

    /** Backs each partition off for {@code replica.fetch.backoff.ms} unless it already is. */
    private void delayPartitions(Set<TopicPartition> delayed) {
        if (delayed.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            long until = time.milliseconds() + backoffMs;
            for (TopicPartition tp : delayed) {
                PartitionFetchState state = states.get(tp);
                if (state != null && !state.isDelayed(time.milliseconds())) {
                    moveToEnd(tp, state.delayedUntil(until));
                }
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Gives up on a partition until metadata adds it again (Kafka's {@code markPartitionFailed}). */
    private void markPartitionFailed(TopicPartition tp) {
        failedPartitions.add(tp);
        states.remove(tp);
        lags.remove(tp);
        LOGGER.warn("{}Partition {} marked as failed", logPrefix, tp);
    }

    // ----- truncation -------------------------------------------------------------------------------------------

    /** The truncation step: OffsetForLeaderEpoch for partitions with epochs, the fetch offset for the others. */
    void maybeTruncate() {
        Map<TopicPartition, EpochRequest> withEpochs = new LinkedHashMap<>();
        Set<TopicPartition> withoutEpochs = new HashSet<>();
        lock.lock();
        try {
            long now = time.milliseconds();
            states.forEach((tp, state) -> {
                if (state.isTruncating(now)) {
                    int epoch = latestEpoch(tp);
                    if (epoch != PartitionFetchState.NO_EPOCH) {
                        withEpochs.put(tp, new EpochRequest(state.currentLeaderEpoch(), epoch));
                    } else {
                        withoutEpochs.add(tp);
                    }
                }
            });
        } finally {
            lock.unlock();
        }
        if (!withEpochs.isEmpty()) {
            truncateToEpochEndOffsets(withEpochs);
        }
        if (!withoutEpochs.isEmpty()) {
            truncateToFetchOffset(withoutEpochs);
        }
    }

    private void truncateToEpochEndOffsets(Map<TopicPartition, EpochRequest> requests) {
        Map<TopicPartition, EpochEndOffsetResult> endOffsets = leader.fetchEpochEndOffsets(requests);
        lock.lock();
        try {
            Map<TopicPartition, EpochEndOffsetResult> current = new LinkedHashMap<>();
            endOffsets.forEach((tp, result) -> {
                PartitionFetchState state = states.get(tp);
                EpochRequest request = requests.get(tp);
                // The partition may have moved to another leader epoch while the request was out.
                if (state != null && request != null && request.currentLeaderEpoch() == state.currentLeaderEpoch()) {
                    current.put(tp, result);
                }
            });
            Set<TopicPartition> errors = new HashSet<>();
            Map<TopicPartition, Long> fetchOffsets = truncateToEndOffsets(current, requests, errors);
            delayPartitions(errors);
            completeTruncation(fetchOffsets);
        } finally {
            lock.unlock();
        }
    }

    /** A diverging epoch in a fetch response: truncate as for an OffsetForLeaderEpoch answer. */
    private void truncateOnFetchResponse(Map<TopicPartition, EpochEndOffsetResult> divergingEndOffsets) {
        lock.lock();
        try {
            Set<TopicPartition> errors = new HashSet<>();
            Map<TopicPartition, Long> fetchOffsets = truncateToEndOffsets(divergingEndOffsets, Map.of(), errors);
            delayPartitions(errors);
            completeTruncation(fetchOffsets);
        } finally {
            lock.unlock();
        }
    }

    /** Partitions with no epoch history truncate to their fetch offset (the high watermark they started from). */
    private void truncateToFetchOffset(Set<TopicPartition> truncating) {
        lock.lock();
        try {
            Map<TopicPartition, Long> fetchOffsets = new LinkedHashMap<>();
            for (TopicPartition tp : truncating) {
                PartitionFetchState state = states.get(tp);
                if (state != null) {
                    LOGGER.info("{}Truncating partition {} to its initial fetch offset {} (no leader epoch history)",
                        logPrefix, tp, state.fetchOffset());
                    if (doTruncate(tp, state, state.fetchOffset())) {
                        fetchOffsets.put(tp, state.fetchOffset());
                    }
                }
            }
            completeTruncation(fetchOffsets);
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: truncates each partition by its leader's answer; errors go to {@code errors}. */
    private Map<TopicPartition, Long> truncateToEndOffsets(Map<TopicPartition, EpochEndOffsetResult> results,
                                                           Map<TopicPartition, EpochRequest> requests,
                                                           Set<TopicPartition> errors) {
        Map<TopicPartition, Long> fetchOffsets = new LinkedHashMap<>();
        results.forEach((tp, result) -> {
            PartitionFetchState state = states.get(tp);
            if (state == null) {
                return;
            }
            if (result.error() == Errors.NONE) {
                long offset = truncationOffset(tp, state, result);
                LOGGER.info("{}Truncating partition {} to offset {} due to leader epoch and offset {}", logPrefix, tp,
                    offset, result);
                if (doTruncate(tp, state, offset)) {
                    fetchOffsets.put(tp, offset);
                }
            } else if (result.error() == Errors.FENCED_LEADER_EPOCH) {
                EpochRequest request = requests.get(tp);
                if (onPartitionFenced(tp, request == null ? null : request.currentLeaderEpoch())) {
                    errors.add(tp);
                }
            } else {
                LOGGER.info("{}Retrying leader epoch request for partition {} as the leader reported an error: {}",
                    logPrefix, tp, result.error());
                errors.add(tp);
            }
        });
        return fetchOffsets;
    }

    /** Where {@code tp} truncates to by the leader's answer ({@link TruncationPoint}). */
    private long truncationOffset(TopicPartition tp, PartitionFetchState state, EpochEndOffsetResult leaderEnd) {
        Partition partition = partitionOrThrow(tp);
        return TruncationPoint.offset(state.fetchOffset(), partition.logEndOffset(), partition.log().epochEntries(),
            leaderEnd.leaderEpoch(), leaderEnd.endOffset());
    }

    private boolean doTruncate(TopicPartition tp, PartitionFetchState state, long offset) {
        try {
            Partition partition = partitionOrThrow(tp);
            if (offset < partition.highWatermark()) {
                LOGGER.warn("{}Truncating {} to offset {} below the high watermark {}", logPrefix, tp, offset,
                    partition.highWatermark());
            }
            partition.truncateAsFollower(offset, state.currentLeaderEpoch());
            return true;
        } catch (RuntimeException e) {
            LOGGER.error("{}Unexpected error during truncation of {} at offset {}", logPrefix, tp, offset, e);
            markPartitionFailed(tp);
            return false;
        }
    }

    /** Under the lock: truncated partitions fetch from their new offset with the log's latest epoch. */
    private void completeTruncation(Map<TopicPartition, Long> fetchOffsets) {
        fetchOffsets.forEach((tp, offset) -> {
            PartitionFetchState state = states.get(tp);
            if (state != null) {
                moveToEnd(tp, new PartitionFetchState(state.topicId(), offset, state.lag(),
                    state.currentLeaderEpoch(), state.delayedUntilMs(), Phase.FETCHING, latestEpoch(tp)));
            }
        });
    }

    /**
     * A fenced leader epoch: when the request was made in the current epoch the leader is ahead of our metadata, so
     * the partition waits for metadata to re-add it (failed, returns false); else our epoch moved on meanwhile and
     * the partition retries after a back-off (true).
     */
    private boolean onPartitionFenced(TopicPartition tp, Integer requestEpoch) {
        PartitionFetchState state = states.get(tp);
        if (state == null) {
            return false;
        }
        if (requestEpoch != null && requestEpoch == state.currentLeaderEpoch()) {
            LOGGER.info("{}Partition {} has an older epoch ({}) than the current leader; will await the new leader "
                + "and ISR state before resuming fetching", logPrefix, tp, state.currentLeaderEpoch());
            markPartitionFailed(tp);
            return false;
        }
        LOGGER.info("{}Partition {} has a newer epoch ({}) than the current leader; retrying later", logPrefix, tp,
            state.currentLeaderEpoch());
        return true;
    }

    // ----- fetch ------------------------------------------------------------------------------------------------

    /** The fetch step; false when no partition was ready (the caller backs off). */
    boolean maybeFetch() {
        Map<TopicPartition, PartitionFetchRequest> request = new LinkedHashMap<>();
        Set<TopicPartition> errors = new HashSet<>();
        lock.lock();
        try {
            long now = time.milliseconds();
            states.forEach((tp, state) -> {
                if (state.isReadyForFetch(now) && !shouldThrottle(tp, state)) {
                    Partition partition = partitions.apply(tp);
                    if (partition == null) {
                        errors.add(tp);
                    } else {
                        request.put(tp, new PartitionFetchRequest(state.topicId(), state.fetchOffset(),
                            partition.logStartOffset(), fetchMaxBytes, state.currentLeaderEpoch(),
                            state.lastFetchedEpoch()));
                    }
                }
            });
        } finally {
            lock.unlock();
        }
        delayPartitions(errors);
        if (request.isEmpty()) {
            return false;
        }
        processFetchRequest(request);
        return true;
    }

    /** Kafka's {@code shouldFollowerThrottle}: only replicas that have not caught up are held back. */
    private boolean shouldThrottle(TopicPartition tp, PartitionFetchState state) {
        return !state.isReplicaInSync() && quota.isThrottled(tp) && quota.isQuotaExceeded();
    }

    private void processFetchRequest(Map<TopicPartition, PartitionFetchRequest> request) {
        Map<TopicPartition, FetchedPartition> response;
        try {
            response = leader.fetch(request);
        } catch (RuntimeException e) {
            if (running) {
                LOGGER.warn("{}Error in response for fetch request of {} partition(s): {}", logPrefix,
                    request.size(), e.toString());
                delayPartitions(request.keySet());
            }
            return;
        }
        Set<TopicPartition> errors = new HashSet<>();
        Map<TopicPartition, EpochEndOffsetResult> diverging = new LinkedHashMap<>();
        Map<TopicPartition, PartitionFetchState> outOfRange = new LinkedHashMap<>();
        lock.lock();
        try {
            response.forEach((tp, data) -> {
                PartitionFetchState state = states.get(tp);
                PartitionFetchRequest asked = request.get(tp);
                // Removed, re-added or truncated while the fetch was out: the response is stale.
                if (state == null || asked == null || asked.fetchOffset() != state.fetchOffset()
                        || !state.isReadyForFetch(time.milliseconds())) {
                    return;
                }
                if (data.error() == Errors.OFFSET_OUT_OF_RANGE) {
                    outOfRange.put(tp, state);
                } else {
                    processPartition(tp, state, asked, data, errors, diverging);
                }
            });
        } finally {
            lock.unlock();
        }
        if (!diverging.isEmpty()) {
            truncateOnFetchResponse(diverging);
        }
        outOfRange.forEach((tp, state) -> {
            if (!handleOutOfRange(tp, state)) {
                errors.add(tp);
            }
        });
        delayPartitions(errors);
    }

    private void processPartition(TopicPartition tp, PartitionFetchState state, PartitionFetchRequest asked,
                                  FetchedPartition data, Set<TopicPartition> errors,
                                  Map<TopicPartition, EpochEndOffsetResult> diverging) {
        switch (data.error()) {
            case NONE -> {
                if (data.divergingEpoch() != null) {
                    diverging.put(tp, new EpochEndOffsetResult(Errors.NONE, data.divergingEpoch().leaderEpoch(),
                        data.divergingEpoch().endOffset()));
                } else {
                    appendFetched(tp, state, data, errors);
                }
            }
            case FENCED_LEADER_EPOCH -> {
                if (onPartitionFenced(tp, asked.currentLeaderEpoch())) {
                    errors.add(tp);
                }
            }
            case UNKNOWN_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID,
                 INCONSISTENT_TOPIC_ID -> {
                LOGGER.debug("{}Fetch of {} answered {}; retrying after a back-off", logPrefix, tp, data.error());
                errors.add(tp);
            }
            default -> {
                LOGGER.error("{}Error for partition {} at offset {}: {}", logPrefix, tp, state.fetchOffset(),
                    data.error());
                errors.add(tp);
            }
        }
    }

    /** Appends a partition's records and moves its fetch state on (Kafka's {@code processPartitionData}). */
    private void appendFetched(TopicPartition tp, PartitionFetchState state, FetchedPartition data,
                               Set<TopicPartition> errors) {
        try {
            Partition partition = partitionOrThrow(tp);
            if (state.fetchOffset() != partition.logEndOffset()) {
                throw new IllegalStateException("Offset mismatch for partition " + tp + ": fetched offset = "
                    + state.fetchOffset() + ", log end offset = " + partition.logEndOffset() + ".");
            }
            int epoch = state.currentLeaderEpoch();
            if (quota.isThrottled(tp)) {
                quota.record(data.records().remaining());
            }
            LogAppendInfo info = partition.appendRecordsToFollower(data.records(), epoch);
            partition.updateFollowerHighWatermark(data.highWatermark(), epoch);
            partition.maybeIncrementLogStartOffsetAsFollower(data.logStartOffset(), epoch);
            long nextOffset = info.validBytes() > 0 ? info.lastOffset() + 1 : state.fetchOffset();
            long lag = Math.max(0L, data.highWatermark() - nextOffset);
            recordLag(tp, lag);
            if ((info.validBytes() > 0 || state.lag() == PartitionFetchState.UNKNOWN_LAG) && states.containsKey(tp)) {
                int lastEpoch = info.lastLeaderEpoch();
                moveToEnd(tp, PartitionFetchState.of(state.topicId(), nextOffset, lag, epoch, Phase.FETCHING,
                    lastEpoch >= 0 ? lastEpoch : state.lastFetchedEpoch()));
            }
        } catch (CorruptRecordException | InvalidRecordException e) {
            LOGGER.error("{}Found invalid messages during fetch for partition {} offset {}", logPrefix, tp,
                state.fetchOffset(), e);
            errors.add(tp);
        } catch (FencedLeaderEpochException | NotLeaderOrFollowerException e) {
            LOGGER.debug("{}Partition {} moved on while its fetch was out: {}", logPrefix, tp, e.getMessage());
            errors.add(tp);
        } catch (RuntimeException e) {
            LOGGER.error("{}Unexpected error occurred while processing data for partition {} at offset {}",
                logPrefix, tp, state.fetchOffset(), e);
            markPartitionFailed(tp);
        }
    }

    /**
     * Under the lock: the partition's lag, unless it was removed meanwhile; one holder per partition, so an answer
     * costs a map read and a volatile write.
     */
    void recordLag(TopicPartition tp, long lag) {
        if (!states.containsKey(tp)) {
            return;
        }
        FetcherLag holder = lags.get(tp);
        if (holder == null) {
            holder = new FetcherLag();
            lags.put(tp, holder);
        }
        holder.value = lag;
    }

    /** One partition's last lag; written by the fetcher thread, read by scrapes. */
    private static final class FetcherLag {
        private volatile long value;
    }

    /**
     * OFFSET_OUT_OF_RANGE (Kafka's {@code handleOutOfRangeError}): true when the partition has a new fetch state, was
     * fenced in its current epoch (then failed), or changed while the leader's offsets were asked (the answer is then
     * dropped); false for a retriable error.
     *
     * <p>The leader's offsets are asked without the lock, as the fetch itself is: a leader that stops answering
     * blocks this thread for up to {@code replica.socket.timeout.ms}, and the metadata applier adding or removing
     * partitions of this thread must not wait for that. The answer is applied under the lock only if the partition's
     * state is still the one that was out of range.
     */
    private boolean handleOutOfRange(TopicPartition tp, PartitionFetchState state) {
        LeaderOffsets offsets;
        try {
            offsets = leaderOffsets(tp, state.currentLeaderEpoch());
        } catch (FencedLeaderEpochException e) {
            lock.lock();
            try {
                return states.get(tp) != state || onPartitionFenced(tp, state.currentLeaderEpoch());
            } finally {
                lock.unlock();
            }
        } catch (UnknownTopicOrPartitionException | UnknownLeaderEpochException | NotLeaderOrFollowerException e) {
            LOGGER.info("{}Could not fetch offset for {} due to error: {}", logPrefix, tp, e.getMessage());
            return false;
        } catch (RuntimeException e) {
            if (running) {
                LOGGER.error("{}Error getting offset for partition {}", logPrefix, tp, e);
            }
            return false;
        }
        lock.lock();
        try {
            if (states.get(tp) != state) {
                LOGGER.debug("{}Partition {} changed while its leader's offsets were asked; dropping the answer",
                    logPrefix, tp);
                return true;
            }
            PartitionFetchState next = resetFetchState(tp, state, offsets);
            if (next == null) {
                return false;
            }
            moveToEnd(tp, next);
            LOGGER.info("{}Current offset {} for partition {} is out of range, which typically implies a leader "
                + "change. Reset fetch offset to {}", logPrefix, state.fetchOffset(), tp, next.fetchOffset());
            return true;
        } catch (RuntimeException e) {
            LOGGER.error("{}Error resetting the fetch offset of partition {}", logPrefix, tp, e);
            markPartitionFailed(tp);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The leader's latest offset and, unless its log ends before ours, its earliest; network calls, no lock. */
    private LeaderOffsets leaderOffsets(TopicPartition tp, int currentLeaderEpoch) {
        long replicaEnd = partitionOrThrow(tp).logEndOffset();
        OffsetAndEpoch latest = leader.fetchLatestOffset(tp, currentLeaderEpoch);
        OffsetAndEpoch earliest = latest.offset() < replicaEnd ? null
            : leader.fetchEarliestOffset(tp, currentLeaderEpoch);
        return new LeaderOffsets(latest.offset(), earliest == null ? -1L : earliest.offset());
    }

    /** The leader's log offsets asked for an out-of-range partition; {@code earliest} is -1 when not asked. */
    private record LeaderOffsets(long latest, long earliest) {
    }

    /**
     * Under the lock, Kafka's {@code fetchOffsetAndTruncate} with the leader's answer: a leader whose log ends before
     * ours (an unclean election) makes us truncate to its end; otherwise we fetch from our end, or, when that is below
     * the leader's log start offset, start an empty log at the leader's log start. Null when the answer no longer
     * fits our log (retried after a back-off).
     */
    private PartitionFetchState resetFetchState(TopicPartition tp, PartitionFetchState state, LeaderOffsets leaderAt) {
        Partition partition = partitionOrThrow(tp);
        int currentLeaderEpoch = state.currentLeaderEpoch();
        long replicaEnd = partition.logEndOffset();
        if (leaderAt.latest() < replicaEnd) {
            LOGGER.warn("{}Reset fetch offset for partition {} from {} to current leader's latest offset {}",
                logPrefix, tp, replicaEnd, leaderAt.latest());
            partition.truncateAsFollower(leaderAt.latest(), currentLeaderEpoch);
            return PartitionFetchState.of(state.topicId(), leaderAt.latest(), 0L, currentLeaderEpoch, Phase.FETCHING,
                latestEpoch(tp));
        }
        if (leaderAt.earliest() < 0) {
            // Our log end moved below the leader's latest meanwhile (only this thread appends, so it should not have):
            // ask again after a back-off.
            return null;
        }
        long offsetToFetch = Math.max(leaderAt.earliest(), replicaEnd);
        if (leaderAt.earliest() > replicaEnd) {
            LOGGER.warn("{}Truncate fully and reset fetch offset for partition {} from {} to the current leader's "
                + "start offset {} because the local replica's end offset is smaller than the current leader's start "
                + "offset", logPrefix, tp, replicaEnd, leaderAt.earliest());
            partition.truncateFullyAndStartAtAsFollower(leaderAt.earliest(), currentLeaderEpoch);
        } else {
            LOGGER.info("{}Reset fetch offset for partition {} from {} to the current local replica's end offset {}",
                logPrefix, tp, replicaEnd, offsetToFetch);
        }
        return PartitionFetchState.of(state.topicId(), offsetToFetch, leaderAt.latest() - offsetToFetch,
            currentLeaderEpoch, Phase.FETCHING, latestEpoch(tp));
    }

    private Partition partitionOrThrow(TopicPartition tp) {
        Partition partition = partitions.apply(tp);
        if (partition == null) {
            throw new NotLeaderOrFollowerException("Broker no longer hosts " + tp);
        }
        return partition;
    }

    private int latestEpoch(TopicPartition tp) {
        Partition partition = partitions.apply(tp);
        return partition == null ? PartitionFetchState.NO_EPOCH : Math.max(PartitionFetchState.NO_EPOCH,
            partition.log().latestEpoch());
    }
}
