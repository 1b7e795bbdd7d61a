package io.cairn.log.recovery;

import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.epoch.LeaderEpochCache;
import io.cairn.log.index.AbortedTxn;
import io.cairn.log.index.OffsetIndex;
import io.cairn.log.io.CheckpointFile;
import io.cairn.log.io.FileLayer;
import io.cairn.log.producer.ProducerSnapshots;
import io.cairn.log.producer.ProducerStateEntry;
import io.cairn.log.producer.ProducerStateManager;
import io.cairn.log.segment.FileBatch;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.record.RecordBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.stream.Stream;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Opens a partition directory (Kafka's {@code LogLoader}): removes leftovers of interrupted deletes and cleans,
 * completes interrupted swaps, opens the segments, and after an unclean shutdown recovers every segment from the
 * one holding the recovery point: validates each batch, rebuilds the indexes, truncates the torn tail and drops
 * the segments after it. Then rebuilds producer state from the latest snapshot and the batches after it.
 *
 * <p>Thread-safety: runs once, on the thread that opens the partition, before the log is shared.
 */
public final class LogLoader {

    /** Per-partition checkpoint of the recovery point and the log start offset. */
    public static final String OFFSETS_CHECKPOINT = "log-offsets-checkpoint";
    private static final Logger LOGGER = LogManager.getLogger(LogLoader.class);
    /** How far below a producer snapshot a restart reads batches back (see {@link #restoreRecentBatches}). */
    static final int RECENT_BATCHES_WINDOW_BYTES = 1 << 20;

    private LogLoader() {
    }

    /** The opened log: its segments and the offsets that bound it. */
    public record Loaded(ConcurrentSkipListMap<Long, LogSegment> segments, long logStartOffset, long recoveryPoint,
                         long logEndOffset, boolean recovered) {
    }

    /** Loads {@code dir}; {@code epochs} and {@code producers} are filled in. */
    public static Loaded load(Path dir, LogConfig config, LogEnvironment env, boolean hadCleanShutdown,
                              LeaderEpochCache epochs, ProducerStateManager producers) throws IOException {
        Files.createDirectories(dir);
        cleanLeftovers(dir, env.layer());
        long[] checkpoint = readOffsets(dir);
        long recoveryPoint = checkpoint[0];
        long logStartOffset = checkpoint[1];
        LogSegment.Options options = new LogSegment.Options(env.layer(), env.handles(), env.mappings(),
            config.segmentIndexBytes(), config.indexIntervalBytes(), 0L, env.time().milliseconds(),
            config.initFileSize());
        ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();
        TreeSet<Long> missingIndexes = new TreeSet<>();
        for (long base : segmentBaseOffsets(dir)) {
            String name = LogSegment.fileName(base);
            if (!Files.exists(dir.resolve(name + LogSegment.INDEX_SUFFIX))
                || !Files.exists(dir.resolve(name + LogSegment.TIME_INDEX_SUFFIX))) {
                missingIndexes.add(base);
            }
            segments.put(base, LogSegment.open(dir, base, options, false));
        }
        boolean recovered = false;
        if (!segments.isEmpty()) {
            Long from = hadCleanShutdown ? null : segments.floorKey(Math.max(recoveryPoint, 0L));
            if (!hadCleanShutdown && from == null) {
                from = segments.firstKey();
            }
            if (!missingIndexes.isEmpty() && (from == null || missingIndexes.first() < from)) {
                from = missingIndexes.first();
            }
            if (from != null) {
                rebuildProducerState(dir, segments, Math.max(logStartOffset, segments.firstKey()), from, producers);
                recoverFrom(dir, segments, from, epochs, producers, config.segmentIndexBytes());
                recovered = true;
            }
        }
        if (segments.isEmpty()) {
            long base = Math.max(logStartOffset, 0L);
            segments.put(base, LogSegment.open(dir, base, options, true));
        }
        LogSegment last = segments.lastEntry().getValue();
        last.onBecomeActive(config.segmentIndexBytes());
        long logEndOffset = last.readNextOffset();
        if (logStartOffset < 0) {
            logStartOffset = segments.firstKey();
        }
        logStartOffset = Math.min(Math.max(logStartOffset, segments.firstKey()), logEndOffset);
        epochs.truncateFromEnd(logEndOffset);
        epochs.truncateFromStart(logStartOffset);
        ProducerSnapshots.deleteAfter(dir, logEndOffset);
        rebuildProducerState(dir, segments, logStartOffset, logEndOffset, producers);
        recoveryPoint = recovered ? logEndOffset : Math.min(Math.max(recoveryPoint, 0L), logEndOffset);
        return new Loaded(segments, logStartOffset, recoveryPoint, logEndOffset, recovered);
    }

    /**
     * Recovers the segments from {@code from} on, as Kafka's {@code LogSegment.recover}: {@code producers} holds the
     * state at {@code from} and takes every recovered batch, and each transaction an ABORT marker completes is
     * appended again to the {@code .txnindex} of the segment holding the marker, with the last stable offset of
     * that moment (the index was reset with the others, and read_committed fetches and the cleaner rely on it).
     */
    private static void recoverFrom(Path dir, ConcurrentSkipListMap<Long, LogSegment> segments, long from,
                                    LeaderEpochCache epochs, ProducerStateManager producers, int maxIndexSize)
            throws IOException {
        LOGGER.info("Recovering {} from segment {} (unclean shutdown or missing index)", dir, from);
        List<Long> bases = new ArrayList<>(segments.tailMap(from, true).keySet());
        for (int i = 0; i < bases.size(); i++) {
            LogSegment segment = segments.get(bases.get(i));
            segment.onBecomeActive(maxIndexSize);
            int truncated = segment.recover(batch -> {
                RecordBatch view = RecordBatch.of(batch, batch.position());
                epochs.assign(view.partitionLeaderEpoch(), view.baseOffset());
                ProducerStateManager.CompletedTxn txn = producers.update(view);
                if (txn != null && txn.aborted()) {
                    segment.appendAbortedTxn(new AbortedTxn(txn.producerId(), txn.firstOffset(), txn.lastOffset(),
                        producers.lastStableOffsetAfter(txn.lastOffset())));
                }
            });
            if (i < bases.size() - 1 && truncated == 0) {
                segment.onBecomeInactive();
            }
            segment.flush();
            if (truncated > 0) {
                LOGGER.warn("Truncated {} invalid bytes at the end of {}; deleting {} later segment(s)", truncated,
                    segment.log().file(), bases.size() - i - 1);
                for (int j = i + 1; j < bases.size(); j++) {
                    segments.remove(bases.get(j)).deleteIfExists();
                }
                break;
            }
        }
        // A segment left empty by truncation is harmless; one that starts after an emptied predecessor is not
        // possible because later segments were deleted above.
        while (segments.size() > 1 && segments.lastEntry().getValue().size() == 0
            && segments.lowerEntry(segments.lastKey()).getValue().readNextOffset() < segments.lastKey()) {
            segments.pollLastEntry().getValue().deleteIfExists();
        }
    }

    /**
     * Rebuilds {@code producers} as of {@code upTo}: the latest readable snapshot in [logStartOffset, upTo], then the
     * batches after it below {@code upTo} (Kafka's {@code UnifiedLog.rebuildProducerState}). Used on load, before a
     * recovery (the state at the first recovered segment) and after a follower's truncation, so none of them
     * rescans more of the log than lies after the snapshot.
     */
    public static void rebuildProducerState(Path dir, ConcurrentSkipListMap<Long, LogSegment> segments,
                                            long logStartOffset, long upTo, ProducerStateManager producers) {
        long replayFrom = logStartOffset;
        producers.clear();
        TreeMap<Long, Path> snapshots = ProducerSnapshots.list(dir);
        for (Map.Entry<Long, Path> e : snapshots.headMap(upTo, true).descendingMap().entrySet()) {
            if (e.getKey() < logStartOffset) {
                break;
            }
            Optional<List<ProducerStateEntry>> entries = ProducerSnapshots.read(e.getValue());
            if (entries.isPresent()) {
                producers.load(entries.get(), e.getKey());
                replayFrom = e.getKey();
                restoreRecentBatches(segments, replayFrom, producers);
                break;
            }
            LOGGER.warn("Ignoring corrupt producer snapshot {}", e.getValue());
        }
        Long first = segments.floorKey(replayFrom);
        if (first == null) {
            first = segments.firstKey();
        }
        for (LogSegment segment : segments.tailMap(first, true).values()) {
            if (segment.baseOffset() >= upTo) {
                break;
            }
            int end = segment.size();
            int position = replayFrom <= segment.baseOffset() ? 0 : segment.offsetIndex().lookup(replayFrom)
                .position();
            while (true) {
                FileBatch batch = segment.log().batchAt(position, end);
                if (batch == null || batch.baseOffset() >= upTo) {
                    break;
                }
                if (batch.lastOffset() >= replayFrom && batch.producerId() >= 0) {
                    producers.update(RecordBatch.of(segment.log().readBatch(batch), 0));
                }
                position = batch.endPosition();
            }
        }
    }

    /**
     * A snapshot keeps one batch per producer (Kafka's format), but a producer may have up to five batches in flight
     * when the broker stops; retried after the restart, every one but the last would fail with
     * OUT_OF_ORDER_SEQUENCE_NUMBER, and the epoch bump the producer answers that with appends the later ones a second
     * time. So the batches of the last {@value #RECENT_BATCHES_WINDOW_BYTES} bytes below the snapshot are read back
     * into the producers' retained batches, and those retries are answered as the duplicates they are.
     */
    private static void restoreRecentBatches(ConcurrentSkipListMap<Long, LogSegment> segments, long snapshotOffset,
                                             ProducerStateManager producers) {
        if (producers.isEmpty()) {
            return;
        }
        Map.Entry<Long, LogSegment> holding = segments.floorEntry(snapshotOffset);
        List<LogSegment> window = new ArrayList<>();
        int startPosition = 0;
        long budget = RECENT_BATCHES_WINDOW_BYTES;
        for (LogSegment segment : segments.headMap(snapshotOffset, false).descendingMap().values()) {
            window.add(0, segment);
            int end = holding != null && holding.getValue() == segment
                ? segment.offsetIndex().lookup(snapshotOffset).position() : segment.size();
            if (end >= budget) {
                startPosition = batchPositionAtOrBefore(segment, (int) (end - budget));
                break;
            }
            budget -= end;
        }
        for (int i = 0; i < window.size(); i++) {
            LogSegment segment = window.get(i);
            int position = i == 0 ? startPosition : 0;
            int end = segment.size();
            FileBatch batch;
            while ((batch = segment.log().batchAt(position, end)) != null && batch.lastOffset() < snapshotOffset) {
                if (batch.producerId() >= 0) {
                    producers.restoreEarlierBatch(batch.view());
                }
                position = batch.endPosition();
            }
        }
    }

    /** The position of the last indexed batch at or before {@code position} in {@code segment}, or 0. */
    private static int batchPositionAtOrBefore(LogSegment segment, int position) {
        OffsetIndex index = segment.offsetIndex();
        int low = 0;
        int high = index.entries() - 1;
        int found = 0;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            int at = index.entry(mid).position();
            if (at <= position) {
                found = at;
                low = mid + 1;
            } else {
                high = mid - 1;
            }
        }
        return found;
    }

    private static void cleanLeftovers(Path dir, FileLayer layer) throws IOException {
        List<Path> swaps = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String name = p.getFileName().toString();
                if (name.endsWith(".tmp") || name.endsWith(LogSegment.DELETED_SUFFIX)
                    || name.endsWith(LogSegment.CLEANED_SUFFIX)) {
                    Files.deleteIfExists(p);
                } else if (name.endsWith(LogSegment.SWAP_SUFFIX)) {
                    swaps.add(p);
                }
            }
        }
        // A swap cut short may have renamed some of a cleaned segment's files and not others (the cleaner renames
        // them .swap one by one, then into place one by one), which would pair the cleaned log with the old one's
        // indexes. So only the log of a swap is trusted, as Kafka's loader trusts only a swap's log: every index of
        // a segment with a .swap file goes, the cleaned log takes its name, and load() rebuilds the missing indexes.
        TreeSet<String> stems = new TreeSet<>();
        for (Path swap : swaps) {
            String name = swap.getFileName().toString();
            stems.add(name.substring(0, name.indexOf('.')));
        }
        for (String stem : stems) {
            for (String index : List.of(LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX,
                    LogSegment.TXN_INDEX_SUFFIX)) {
                Files.deleteIfExists(dir.resolve(stem + index));
                Files.deleteIfExists(dir.resolve(stem + index + LogSegment.SWAP_SUFFIX));
            }
            Path log = dir.resolve(stem + LogSegment.LOG_SUFFIX + LogSegment.SWAP_SUFFIX);
            if (Files.exists(log)) {
                Path target = dir.resolve(stem + LogSegment.LOG_SUFFIX);
                LOGGER.info("Completing interrupted swap of {}; its indexes are rebuilt", target);
                layer.atomicMove(log, target);
            }
        }
    }

    /** Base offsets of the {@code .log} files in {@code dir}, ascending. */
    public static TreeSet<Long> segmentBaseOffsets(Path dir) {
        TreeSet<Long> out = new TreeSet<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(p -> {
                String name = p.getFileName().toString();
                if (name.endsWith(LogSegment.LOG_SUFFIX) && name.length() == 20 + LogSegment.LOG_SUFFIX.length()) {
                    out.add(Long.parseLong(name.substring(0, 20)));
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
        return out;
    }

    /** {recoveryPoint, logStartOffset}, -1 when unknown. */
    static long[] readOffsets(Path dir) {
        long[] out = {-1L, -1L};
        for (String line : CheckpointFile.readEntries(dir.resolve(OFFSETS_CHECKPOINT), 0)) {
            String[] parts = line.trim().split("\\s+");
            if (parts.length == 2 && parts[0].equals("recovery-point")) {
                out[0] = Long.parseLong(parts[1]);
            } else if (parts.length == 2 && parts[0].equals("log-start-offset")) {
                out[1] = Long.parseLong(parts[1]);
            }
        }
        return out;
    }

    /** Writes the recovery point and the log start offset. */
    public static void writeOffsets(LogEnvironment env, Path dir, long recoveryPoint, long logStartOffset) {
        CheckpointFile.writeEntries(env.layer(), dir.resolve(OFFSETS_CHECKPOINT), 0,
            List.of("recovery-point " + recoveryPoint, "log-start-offset " + logStartOffset));
    }
}
