package io.cairn.broker.share.partition;

import io.cairn.broker.purgatory.Timer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The in-flight records of a share-partition (Kafka's {@code cachedState}): the offsets from the start offset to the
 * end offset, as contiguous runs of records sharing a state, a delivery count and, while acquired, an owner and an
 * acquisition lock. Operations on a range split the runs at its ends, so a run is always wholly inside or outside;
 * {@link #coalesce()} joins neighbours that are alike again. The run count is bounded by the window (at most
 * {@code group.share.partition.max.record.locks} offsets past the records the state was loaded with).
 *
 * <p>Not thread-safe: guarded by its {@link SharePartition}.
 */
final class InFlightRecords {

    /** A run of records in one state. Mutable; only its share-partition touches it. */
    static final class Run {
        long first;
        long last;
        RecordState state;
        int deliveryCount;
        String memberId;
        Lock lock;

        Run(long first, long last, RecordState state, int deliveryCount) {
            this.first = first;
            this.last = last;
            this.state = state;
            this.deliveryCount = deliveryCount;
        }

        long length() {
            return last - first + 1;
        }

        private Run copy(long from, long to) {
            Run r = new Run(from, to, state, deliveryCount);
            r.memberId = memberId;
            r.lock = lock;
            return r;
        }

        private boolean joins(Run next) {
            return last + 1 == next.first && state == next.state && deliveryCount == next.deliveryCount
                && Objects.equals(memberId, next.memberId) && lock == next.lock;
        }

        @Override
        public String toString() {
            return first + "-" + last + ":" + state + "x" + deliveryCount + (memberId == null ? "" : "@" + memberId);
        }
    }

    /**
     * The acquisition lock of the records one fetch acquired: they go back when it expires (Kafka's
     * {@code AcquisitionLockTimerTask}). {@code acquired} counts the records still acquired under it.
     */
    static final class Lock {
        final String memberId;
        final long first;
        final long last;
        long acquired;
        Timer.Timeout timeout;

        Lock(String memberId, long first, long last) {
            this.memberId = memberId;
            this.first = first;
            this.last = last;
        }

        /** One acquired run under this lock left the acquired state; cancels the timer after the last. */
        void released(long records) {
            acquired -= records;
            if (acquired <= 0 && timeout != null) {
                timeout.cancel();
            }
        }
    }

    private final TreeMap<Long, Run> runs = new TreeMap<>();
    private long start;
    private long end;

    InFlightRecords(long startOffset) {
        this.start = startOffset;
        this.end = startOffset - 1;
    }

    long startOffset() {
        return start;
    }

    /** The last in-flight offset; {@code startOffset() - 1} when nothing is in flight. */
    long endOffset() {
        return end;
    }

    /** How many offsets are in flight. */
    long size() {
        return end - start + 1;
    }

    /** Adds the offsets after the end offset up to {@code last} in one run. */
    Run append(long last, RecordState state, int deliveryCount) {
        if (last <= end) {
            throw new IllegalArgumentException("Offset " + last + " is not past the end offset " + end);
        }
        Run run = new Run(end + 1, last, state, deliveryCount);
        runs.put(run.first, run);
        end = last;
        return run;
    }

    /** The runs covering {@code from}..{@code to} clipped to the in-flight range, split at its ends, in order. */
    List<Run> range(long from, long to) {
        long a = Math.max(from, start);
        long b = Math.min(to, end);
        if (a > b) {
            return List.of();
        }
        splitAt(a);
        splitAt(b + 1);
        return new ArrayList<>(runs.subMap(a, true, b, true).values());
    }

    /** The first run in {@code state}, or null. */
    Run first(RecordState state) {
        for (Run run : runs.values()) {
            if (run.state == state) {
                return run;
            }
        }
        return null;
    }

    /** Every run, in order (a copy). */
    List<Run> runs() {
        return new ArrayList<>(runs.values());
    }

    /**
     * Moves the start offset past the leading acknowledged and archived records (Kafka's
     * {@code maybeUpdateCachedStateAndOffsets}); returns whether it moved.
     */
    boolean advancePastTerminal() {
        long next = start;
        for (Run run : runs.values()) {
            if (!run.state.isTerminal()) {
                break;
            }
            next = run.last + 1;
        }
        if (next == start) {
            return false;
        }
        moveStart(next);
        return true;
    }

    /**
     * Moves the start offset to {@code offset} (not backwards), dropping the records before it; past the end offset
     * nothing stays in flight. Returns the runs dropped while acquired, whose locks must be released.
     */
    List<Run> moveStart(long offset) {
        if (offset <= start) {
            return List.of();
        }
        splitAt(offset);
        List<Run> dropped = new ArrayList<>();
        Iterator<Map.Entry<Long, Run>> it = runs.headMap(offset, false).entrySet().iterator();
        while (it.hasNext()) {
            Run run = it.next().getValue();
            if (run.state == RecordState.ACQUIRED) {
                dropped.add(run);
            }
            it.remove();
        }
        start = offset;
        end = Math.max(end, offset - 1);
        return dropped;
    }

    /** Joins neighbouring runs that are alike (acquired ones: by the same member under the same lock). */
    void coalesce() {
        Run previous = null;
        Iterator<Run> it = runs.values().iterator();
        while (it.hasNext()) {
            Run run = it.next();
            if (previous != null && previous.joins(run)) {
                previous.last = run.last;
                it.remove();
            } else {
                previous = run;
            }
        }
    }

    private void splitAt(long offset) {
        Map.Entry<Long, Run> floor = runs.floorEntry(offset);
        if (floor == null) {
            return;
        }
        Run run = floor.getValue();
        if (run.first < offset && offset <= run.last) {
            Run tail = run.copy(offset, run.last);
            run.last = offset - 1;
            runs.put(offset, tail);
        }
    }

    @Override
    public String toString() {
        return "[" + start + ".." + end + "] " + runs.values();
    }
}
