package io.cairn.broker.share.partition;

import io.cairn.broker.purgatory.Timer;
import io.cairn.broker.share.SharePartitionKey;
import io.cairn.broker.share.StateBatch;
import io.cairn.broker.share.partition.InFlightRecords.Lock;
import io.cairn.broker.share.partition.InFlightRecords.Run;
import io.cairn.broker.share.partition.ShareRecordTypes.AckBatch;
import io.cairn.broker.share.partition.ShareRecordTypes.AcquiredRange;
import io.cairn.broker.share.partition.ShareRecordTypes.Acquisition;
import io.cairn.broker.share.partition.ShareRecordTypes.LogBatch;
import io.cairn.wire.error.Errors;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The delivery state of one share-partition, a (share group, topic partition) this broker leads (Kafka's
 * {@code SharePartition}). Records move AVAILABLE → ACQUIRED (by a fetch, for one member, under a lock of
 * {@code group.share.record.lock.duration.ms}) → ACKNOWLEDGED (accept), ARCHIVED (reject, gap) or back to AVAILABLE
 * (release, lock expiry); a record released after {@code group.share.delivery.count.limit} deliveries is archived
 * instead. At most {@code group.share.partition.max.record.locks} offsets are in flight: new records are acquired only
 * while the window between the start and end offsets is smaller. The start offset moves past acknowledged and
 * archived records; each change is written to the share coordinator (the start offset and the changed batches), one
 * write after the other. A write that fails fences the share-partition: its manager drops it, and the next fetch
 * reloads the persisted state (a failed write's changes are thus rolled back to what was persisted).
 *
 * <p>Thread-safety: thread-safe; every state change is under this object's monitor. Callbacks ({@code onAvailable},
 * {@code onFenced}) run outside it.
 */
public final class SharePartition {

    private static final Logger LOGGER = LogManager.getLogger(SharePartition.class);

    private final SharePartitionKey key;
    private final int leaderEpoch;
    private final int stateEpoch;
    private final SharePartitionConfig config;
    private final IntSupplier lockDurationMs;
    private final Timer timer;
    private final StatePersister persister;
    private final Consumer<SharePartition> onAvailable;
    private final Consumer<SharePartition> onFenced;
    private final InFlightRecords records;
    /** The last write; the next one starts after it. Guarded by {@code this}. */
    private CompletableFuture<Errors> writes = CompletableFuture.completedFuture(Errors.NONE);
    private boolean fenced;

    /**
     * A share-partition of {@code state} (read at {@code leaderEpoch}; a start offset of -1 is taken as
     * {@code latestOffset}). {@code onAvailable} is told when records became available again (release, expiry),
     * {@code onFenced} when a write failed.
     */
    public SharePartition(SharePartitionKey key, int leaderEpoch, StatePersister.PersistedState state,
                          long latestOffset, SharePartitionConfig config, Timer timer, StatePersister persister,
                          Consumer<SharePartition> onAvailable, Consumer<SharePartition> onFenced) {
        this(key, leaderEpoch, state, latestOffset, config, config::lockDurationMs, timer, persister, onAvailable,
            onFenced);
    }

    /**
     * As above, with the lock duration of each acquisition read from {@code lockDurationMs} (the share group's
     * {@code share.record.lock.duration.ms}, which may change while the share-partition is loaded) instead of
     * {@code config}.
     */
    public SharePartition(SharePartitionKey key, int leaderEpoch, StatePersister.PersistedState state,
                          long latestOffset, SharePartitionConfig config, IntSupplier lockDurationMs, Timer timer,
                          StatePersister persister, Consumer<SharePartition> onAvailable,
                          Consumer<SharePartition> onFenced) {
        this.lockDurationMs = lockDurationMs;
        this.key = key;
        this.leaderEpoch = leaderEpoch;
        this.stateEpoch = state.stateEpoch();
        this.config = config;
        this.timer = timer;
        this.persister = persister;
        this.onAvailable = onAvailable;
        this.onFenced = onFenced;
        long start = state.startOffset() < 0 ? Math.max(0L, latestOffset) : state.startOffset();
        this.records = new InFlightRecords(start);
        for (StateBatch batch : state.stateBatches().stream().sorted().toList()) {
            long first = Math.max(Math.max(batch.firstOffset(), start), records.endOffset() + 1);
            if (batch.lastOffset() < first) {
                continue;
            }
            if (first > records.endOffset() + 1) {
                records.append(first - 1, RecordState.AVAILABLE, 0);
            }
            records.append(batch.lastOffset(), RecordState.ofPersisted(batch.deliveryState()), batch.deliveryCount());
        }
        records.advancePastTerminal();
        records.coalesce();
    }

    public SharePartitionKey key() {
        return key;
    }

    public int leaderEpoch() {
        return leaderEpoch;
    }

    public synchronized boolean isFenced() {
        return fenced;
    }

    public synchronized long startOffset() {
        return records.startOffset();
    }

    public synchronized long endOffset() {
        return records.endOffset();
    }

    /** The runs of in-flight records, for tests: "first-last:STATExCOUNT[@member]". */
    synchronized List<String> describe() {
        return records.runs().stream().map(Run::toString).toList();
    }

    /**
     * Where the next read starts: the first available in-flight record, else the offset after the end; -1 when the
     * window is full and nothing in it is available.
     */
    public synchronized long nextFetchOffset() {
        if (fenced) {
            return -1L;
        }
        Run available = records.first(RecordState.AVAILABLE);
        if (available != null) {
            return available.first;
        }
        return records.size() >= config.maxRecordLocks() ? -1L : records.endOffset() + 1;
    }

    /** Whether a fetch could acquire something now, the log's readable end being {@code highWatermark}. */
    public synchronized boolean canAcquire(long highWatermark) {
        long next = nextFetchOffset();
        return next >= 0 && next < highWatermark;
    }

    /**
     * Acquires for {@code memberId} what a read returned ({@code batches}, in log order): the available in-flight
     * records in them, and, while the window allows, the new records past the end offset, whole batches at a time
     * (Kafka's alignment to batch boundaries). Stops once {@code maxRecords} are acquired. Offsets between the end
     * offset and a later batch hold no record (compaction) and are archived at once.
     */
    public Acquisition acquire(String memberId, int maxRecords, List<LogBatch> batches) {
        List<AcquiredRange> ranges = new ArrayList<>();
        int bytes = 0;
        synchronized (this) {
            if (fenced || batches.isEmpty()) {
                return Acquisition.NONE;
            }
            Lock lock = new Lock(memberId, Math.max(batches.get(0).baseOffset(), records.startOffset()),
                batches.get(batches.size() - 1).lastOffset());
            long count = 0;
            for (LogBatch batch : batches) {
                if (count >= maxRecords) {
                    break;
                }
                long first = Math.max(batch.baseOffset(), records.startOffset());
                long acquiredBefore = count;
                for (Run run : records.range(first, batch.lastOffset())) {
                    if (run.state != RecordState.AVAILABLE || count >= maxRecords) {
                        continue;
                    }
                    if (run.length() > maxRecords - count) {
                        run = records.range(run.first, run.first + (maxRecords - count) - 1).get(0);
                    }
                    take(run, memberId, lock, ranges);
                    count += run.length();
                }
                if (batch.lastOffset() > records.endOffset() && count < maxRecords
                        && records.size() < config.maxRecordLocks()) {
                    long newFirst = Math.max(first, records.endOffset() + 1);
                    if (newFirst > records.endOffset() + 1) {
                        records.append(newFirst - 1, RecordState.ARCHIVED, 0);
                    }
                    Run run = records.append(batch.lastOffset(), RecordState.AVAILABLE, 0);
                    take(run, memberId, lock, ranges);
                    count += run.length();
                }
                if (count > acquiredBefore) {
                    bytes = batch.endPosition();
                }
            }
            if (count > 0) {
                lock.timeout = timer.schedule(() -> expire(lock), lockDurationMs.getAsInt());
            }
            records.coalesce();
        }
        return new Acquisition(List.copyOf(ranges), bytes);
    }

    private static void take(Run run, String memberId, Lock lock, List<AcquiredRange> ranges) {
        run.state = RecordState.ACQUIRED;
        run.deliveryCount++;
        run.memberId = memberId;
        run.lock = lock;
        lock.acquired += run.length();
        if (!ranges.isEmpty()) {
            AcquiredRange previous = ranges.get(ranges.size() - 1);
            if (previous.lastOffset() + 1 == run.first && previous.deliveryCount() == run.deliveryCount) {
                ranges.set(ranges.size() - 1, new AcquiredRange(previous.firstOffset(), run.last,
                    run.deliveryCount));
                return;
            }
        }
        ranges.add(new AcquiredRange(run.first, run.last, run.deliveryCount));
    }

    /**
     * Acknowledges records {@code memberId} acquired: accept, release, reject or gap (Kafka's
     * {@code SharePartition.acknowledge}). All or nothing: INVALID_RECORD_STATE when a record is not acquired by the
     * member (or the batch lies before the start offset), INVALID_REQUEST when a batch goes past the acquired
     * records; otherwise the outcome of the write.
     */
    public CompletableFuture<Errors> acknowledge(String memberId, List<AckBatch> batches) {
        CompletableFuture<Errors> write;
        boolean released = false;
        synchronized (this) {
            if (fenced) {
                return CompletableFuture.completedFuture(Errors.NOT_LEADER_OR_FOLLOWER);
            }
            Errors invalid = validate(memberId, batches);
            if (invalid != Errors.NONE) {
                records.coalesce();
                return CompletableFuture.completedFuture(invalid);
            }
            List<StateBatch> changed = new ArrayList<>();
            for (AckBatch batch : batches) {
                long first = Math.max(batch.firstOffset(), records.startOffset());
                if (batch.types().length == 1) {
                    for (Run run : records.range(first, batch.lastOffset())) {
                        released |= settle(run, batch.types()[0], changed);
                    }
                } else {
                    for (long offset = first; offset <= batch.lastOffset(); offset++) {
                        released |= settle(records.range(offset, offset).get(0), batch.typeOf(offset), changed);
                    }
                }
            }
            write = persistChanges(changed);
        }
        if (released) {
            onAvailable.accept(this);
        }
        return write;
    }

    private Errors validate(String memberId, List<AckBatch> batches) {
        for (AckBatch batch : batches) {
            if (batch.lastOffset() < records.startOffset()) {
                return Errors.INVALID_RECORD_STATE;
            }
            if (batch.firstOffset() > records.endOffset() || batch.lastOffset() > records.endOffset()) {
                return Errors.INVALID_REQUEST;
            }
            long first = Math.max(batch.firstOffset(), records.startOffset());
            for (Run run : records.range(first, batch.lastOffset())) {
                if (run.state != RecordState.ACQUIRED || !memberId.equals(run.memberId)) {
                    return Errors.INVALID_RECORD_STATE;
                }
            }
        }
        return Errors.NONE;
    }

    /** Moves an acquired run to the acknowledgement's state; returns whether it became available again. */
    private boolean settle(Run run, byte type, List<StateBatch> changed) {
        RecordState next;
        switch (type) {
            case ShareRecordTypes.ACCEPT:
                next = RecordState.ACKNOWLEDGED;
                break;
            case ShareRecordTypes.RELEASE:
                next = run.deliveryCount >= config.deliveryCountLimit() ? RecordState.ARCHIVED : RecordState.AVAILABLE;
                break;
            default:
                next = RecordState.ARCHIVED;
                break;
        }
        releaseLock(run);
        run.state = next;
        changed.add(new StateBatch(run.first, run.last, next.persisted(), (short) run.deliveryCount));
        return next == RecordState.AVAILABLE;
    }

    private static void releaseLock(Run run) {
        if (run.lock != null) {
            run.lock.released(run.length());
        }
        run.lock = null;
        run.memberId = null;
    }

    /** Lock expiry: what is still acquired under {@code lock} goes back (or is archived at the delivery limit). */
    private void expire(Lock lock) {
        synchronized (this) {
            if (fenced) {
                return;
            }
            List<StateBatch> changed = new ArrayList<>();
            for (Run run : records.range(lock.first, lock.last)) {
                if (run.lock == lock && run.state == RecordState.ACQUIRED) {
                    settle(run, ShareRecordTypes.RELEASE, changed);
                }
            }
            if (changed.isEmpty()) {
                return;
            }
            LOGGER.debug("Acquisition lock of {} on {} expired: {}", lock.memberId, key, changed);
            persistChanges(changed);
        }
        onAvailable.accept(this);
    }

    /** Releases every record {@code memberId} holds (its share session ended; Kafka's releaseAcquiredRecords). */
    public CompletableFuture<Errors> releaseAcquired(String memberId) {
        CompletableFuture<Errors> write;
        synchronized (this) {
            if (fenced) {
                return CompletableFuture.completedFuture(Errors.NONE);
            }
            List<StateBatch> changed = new ArrayList<>();
            for (Run run : records.runs()) {
                if (run.state == RecordState.ACQUIRED && memberId.equals(run.memberId)) {
                    settle(run, ShareRecordTypes.RELEASE, changed);
                }
            }
            if (changed.isEmpty()) {
                return CompletableFuture.completedFuture(Errors.NONE);
            }
            write = persistChanges(changed);
        }
        onAvailable.accept(this);
        return write;
    }

    /**
     * The log start offset moved past the start offset (records deleted): the share-partition starts there (Kafka's
     * {@code updateCacheAndOffsets}).
     */
    public void moveStartTo(long logStartOffset) {
        synchronized (this) {
            if (fenced || logStartOffset <= records.startOffset()) {
                return;
            }
            for (Run run : records.moveStart(logStartOffset)) {
                releaseLock(run);
            }
            persistChanges(List.of());
        }
    }

    /** Moves the start offset, coalesces and writes; under the monitor. */
    private CompletableFuture<Errors> persistChanges(List<StateBatch> changed) {
        records.advancePastTerminal();
        records.coalesce();
        long startOffset = records.startOffset();
        List<StateBatch> batches = new ArrayList<>();
        for (StateBatch b : changed) {
            if (b.lastOffset() < startOffset) {
                continue;
            }
            StateBatch clipped = b.firstOffset() < startOffset
                ? new StateBatch(startOffset, b.lastOffset(), b.deliveryState(), b.deliveryCount()) : b;
            StateBatch last = batches.isEmpty() ? null : batches.get(batches.size() - 1);
            if (last != null && last.lastOffset() + 1 == clipped.firstOffset()
                    && last.deliveryState() == clipped.deliveryState()
                    && last.deliveryCount() == clipped.deliveryCount()) {
                batches.set(batches.size() - 1, new StateBatch(last.firstOffset(), clipped.lastOffset(),
                    last.deliveryState(), last.deliveryCount()));
            } else {
                batches.add(clipped);
            }
        }
        CompletableFuture<Errors> result = writes.thenCompose(previous ->
            persister.write(key, stateEpoch, leaderEpoch, startOffset, batches))
            .exceptionally(Errors::forException).thenApply(SharePartitionManager::persisterError);
        writes = result;
        result.thenAccept(error -> {
            if (error != Errors.NONE) {
                LOGGER.info("Writing the state of {} failed ({}); fencing it", key, error);
                fence();
            }
        });
        return result;
    }

    /**
     * Fences this share-partition (a failed write, a new leader): nothing more is acquired or acknowledged here and
     * the locks are dropped; its manager forgets it.
     */
    public void fence() {
        synchronized (this) {
            if (fenced) {
                return;
            }
            fenced = true;
            for (Run run : records.runs()) {
                if (run.lock != null && run.lock.timeout != null) {
                    run.lock.timeout.cancel();
                }
            }
        }
        onFenced.accept(this);
    }

    @Override
    public String toString() {
        return "SharePartition(" + key + ", leaderEpoch=" + leaderEpoch + ")";
    }
}
