package io.cairn.broker.share;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;

/**
 * Combines the state batches a share-partition had with those a write brings into one list of non-overlapping
 * batches, as Kafka's {@code PersisterStateBatchCombiner} does, so the share coordinator stores and answers exactly
 * what Kafka's would:
 * <ol>
 *   <li>Batches wholly below the start offset are dropped; one that straddles it keeps only its part from the start
 *       offset on (no pruning when the start offset is -1).</li>
 *   <li>In sorted order, the first pair of batches that overlap, or that touch and have the same delivery count and
 *       state, is resolved; batches before it are final. Touching or overlapping batches of one state become one;
 *       where batches of different states overlap, the offsets go to the batch with the higher delivery count (then
 *       the higher state), and the rest of each batch is kept around it.</li>
 *   <li>Repeat until no pair is left.</li>
 * </ol>
 * Single use; not thread-safe.
 */
final class StateBatchCombiner {

    private final long startOffset;
    private List<StateBatch> combined;
    private TreeSet<StateBatch> sorted;
    private final List<StateBatch> result = new ArrayList<>();

    /**
     * @param soFar       the batches the state has (may be null)
     * @param added       the batches a write brings (may be null)
     * @param startOffset the start offset after the write, or -1 to keep every batch
     */
    StateBatchCombiner(List<StateBatch> soFar, List<StateBatch> added, long startOffset) {
        this.startOffset = startOffset;
        this.combined = new ArrayList<>();
        if (soFar != null) {
            combined.addAll(soFar);
        }
        if (added != null) {
            combined.addAll(added);
        }
    }

    /** The combined batches, in offset order. */
    List<StateBatch> combine() {
        prune();
        if (combined.size() < 2) {
            return combined;
        }
        sorted = new TreeSet<>(combined);
        for (Pair pair = nextPair(); pair != null; pair = nextPair()) {
            sorted.remove(pair.prev);
            sorted.remove(pair.candidate);
            if (compareDelivery(pair.candidate, pair.prev) == 0) {
                sorted.add(pair.prev.withOffsets(pair.prev.firstOffset(),
                    Math.max(pair.prev.lastOffset(), pair.candidate.lastOffset())));
            } else {
                resolveOverlap(pair.prev, pair.candidate);
            }
        }
        result.addAll(sorted);
        return result;
    }

    private void prune() {
        if (startOffset == -1) {
            return;
        }
        List<StateBatch> kept = new ArrayList<>(combined.size());
        for (StateBatch batch : combined) {
            if (batch.lastOffset() < startOffset) {
                continue;
            }
            kept.add(batch.firstOffset() >= startOffset ? batch : batch.withOffsets(startOffset, batch.lastOffset()));
        }
        combined = kept;
    }

    /** Delivery count first, then state: which of two overlapping batches owns the offsets they share. */
    private static int compareDelivery(StateBatch a, StateBatch b) {
        int c = Short.compare(a.deliveryCount(), b.deliveryCount());
        return c != 0 ? c : Byte.compare(a.deliveryState(), b.deliveryState());
    }

    private record Pair(StateBatch prev, StateBatch candidate) {
    }

    /** The first mergeable pair in {@link #sorted}; the batches before it move to the result. Null when none. */
    private Pair nextPair() {
        if (sorted.isEmpty()) {
            return null;
        }
        Iterator<StateBatch> it = sorted.iterator();
        StateBatch prev = it.next();
        List<StateBatch> done = new ArrayList<>();
        Pair found = null;
        while (it.hasNext()) {
            StateBatch candidate = it.next();
            if (candidate.firstOffset() <= prev.lastOffset()
                    || prev.lastOffset() + 1 == candidate.firstOffset() && compareDelivery(prev, candidate) == 0) {
                found = new Pair(prev, candidate);
                break;
            }
            done.add(prev);
            prev = candidate;
        }
        done.forEach(sorted::remove);
        result.addAll(done);
        return found;
    }

    /** Two overlapping batches of different delivery (prev sorts first). */
    private void resolveOverlap(StateBatch prev, StateBatch candidate) {
        boolean candidateLoses = compareDelivery(candidate, prev) < 0;
        if (candidate.firstOffset() == prev.firstOffset()) {
            if (candidate.lastOffset() == prev.lastOffset()) {
                sorted.add(candidate);
            } else if (candidateLoses) {
                sorted.add(prev);
                sorted.add(candidate.withOffsets(prev.lastOffset() + 1, candidate.lastOffset()));
            } else {
                sorted.add(candidate);
            }
        } else if (candidate.lastOffset() < prev.lastOffset()) {
            if (candidateLoses) {
                sorted.add(prev);
            } else {
                sorted.add(prev.withOffsets(prev.firstOffset(), candidate.firstOffset() - 1));
                sorted.add(candidate);
                sorted.add(prev.withOffsets(candidate.lastOffset() + 1, prev.lastOffset()));
            }
        } else if (candidate.lastOffset() == prev.lastOffset()) {
            if (candidateLoses) {
                sorted.add(prev);
            } else {
                sorted.add(prev.withOffsets(prev.firstOffset(), candidate.firstOffset() - 1));
                sorted.add(candidate);
            }
        } else {
            if (candidateLoses) {
                sorted.add(prev);
                sorted.add(candidate.withOffsets(prev.lastOffset() + 1, candidate.lastOffset()));
            } else {
                sorted.add(prev.withOffsets(prev.firstOffset(), candidate.firstOffset() - 1));
                sorted.add(candidate);
            }
        }
    }
}
