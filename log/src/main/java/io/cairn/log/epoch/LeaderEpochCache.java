package io.cairn.log.epoch;

import io.cairn.log.io.CheckpointFile;
import io.cairn.log.io.FileLayer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The partition's leader-epoch history, {@code epoch → start offset}, persisted in {@code leader-epoch-checkpoint}
 * in Kafka's checkpoint format ({@code 0}, count, then {@code "<epoch> <startOffset>"} lines) after each change.
 * Followers use it to answer OffsetForLeaderEpoch and to truncate where their history and the leader's agree.
 *
 * <p>Thread-safety: {@code synchronized}; written by the partition's writer, read by any thread.
 */
public final class LeaderEpochCache {

    public static final String FILE_NAME = "leader-epoch-checkpoint";

    private final FileLayer layer;
    private final Path file;
    private final List<EpochEntry> entries = new ArrayList<>();

    public LeaderEpochCache(FileLayer layer, Path dir) {
        this.layer = layer;
        this.file = dir.resolve(FILE_NAME);
        for (String line : CheckpointFile.readEntries(file, 0)) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length != 2) {
                throw new IllegalStateException("malformed line '" + line + "' in " + file);
            }
            entries.add(new EpochEntry(Integer.parseInt(parts[0]), Long.parseLong(parts[1])));
        }
    }

    public synchronized List<EpochEntry> epochEntries() {
        return List.copyOf(entries);
    }

    /** The latest epoch, or -1. */
    public synchronized int latestEpoch() {
        return entries.isEmpty() ? -1 : entries.get(entries.size() - 1).epoch();
    }

    /**
     * Records that {@code epoch} starts at {@code startOffset}; ignored unless the epoch is newer than the latest
     * (an equal epoch keeps its first start offset). Persists the change.
     */
    public synchronized void assign(int epoch, long startOffset) {
        if (epoch < 0) {
            return;
        }
        if (!entries.isEmpty()) {
            EpochEntry last = entries.get(entries.size() - 1);
            if (epoch <= last.epoch()) {
                return;
            }
            entries.removeIf(e -> e.startOffset() >= startOffset);
        }
        entries.add(new EpochEntry(epoch, startOffset));
        persist();
    }

    /** The epoch of the batch at {@code offset}, or -1. */
    public synchronized int epochForOffset(long offset) {
        int epoch = -1;
        for (EpochEntry e : entries) {
            if (e.startOffset() <= offset) {
                epoch = e.epoch();
            }
        }
        return epoch;
    }

    /** The answer for an epoch the history does not know: epoch -1 and offset -1 (Kafka's UNDEFINED_EPOCH(_OFFSET)). */
    public static final EpochEntry UNDEFINED = new EpochEntry(-1, -1L);

    /** {@link #endOffsetFor(List, int, long)} over this cache's history. */
    public synchronized EpochEntry endOffsetFor(int requested, long logEndOffset) {
        return endOffsetFor(entries, requested, logEndOffset);
    }

    /**
     * The one end-offset-for-leader-epoch lookup (Kafka's {@code LeaderEpochFileCache.endOffsetFor}), over any epoch
     * history in offset order (a log's cache, a leader's history with its current epoch, a follower's or a future
     * log's), with the returned entry's {@code startOffset} holding the end offset:
     * <ul>
     *   <li>the latest epoch: that epoch and {@code logEndOffset};</li>
     *   <li>an older epoch: the largest epoch at most {@code requested} and the start of the next one;</li>
     *   <li>an epoch older than the whole history: {@code requested} itself and the start of the first entry (the
     *       data before it has been removed; a follower replicates from there);</li>
     *   <li>-1, an epoch newer than the history, or an empty history: {@link #UNDEFINED}.</li>
     * </ul>
     */
    public static EpochEntry endOffsetFor(List<EpochEntry> history, int requested, long logEndOffset) {
        if (requested < 0 || history.isEmpty()) {
            return UNDEFINED;
        }
        if (history.get(history.size() - 1).epoch() == requested) {
            return new EpochEntry(requested, logEndOffset);
        }
        EpochEntry floor = null;
        for (EpochEntry entry : history) {
            if (entry.epoch() > requested) {
                return new EpochEntry(floor == null ? requested : floor.epoch(), entry.startOffset());
            }
            floor = entry;
        }
        return UNDEFINED;
    }

    /** Drops epochs that start at or after {@code endOffset} (log truncation). */
    public synchronized void truncateFromEnd(long endOffset) {
        if (entries.removeIf(e -> e.startOffset() >= endOffset)) {
            persist();
        }
    }

    /** Moves the history's start to {@code startOffset} (log start offset moved). */
    public synchronized void truncateFromStart(long startOffset) {
        int keepFrom = 0;
        for (int i = 0; i < entries.size(); i++) {
            if (entries.get(i).startOffset() <= startOffset) {
                keepFrom = i;
            }
        }
        if (keepFrom == 0 && (entries.isEmpty() || entries.get(0).startOffset() >= startOffset)) {
            return;
        }
        EpochEntry covering = entries.get(keepFrom);
        List<EpochEntry> kept = new ArrayList<>(entries.subList(keepFrom, entries.size()));
        kept.set(0, new EpochEntry(covering.epoch(), Math.max(covering.startOffset(), startOffset)));
        entries.clear();
        entries.addAll(kept);
        persist();
    }

    /** Forgets everything. */
    public synchronized void clear() {
        entries.clear();
        persist();
    }

    private void persist() {
        List<String> lines = new ArrayList<>(entries.size());
        for (EpochEntry e : entries) {
            lines.add(e.epoch() + " " + e.startOffset());
        }
        CheckpointFile.writeEntries(layer, file, 0, lines);
    }
}
