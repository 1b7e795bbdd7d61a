package io.cairn.log.producer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * What the partition knows about one producer id: its epoch, the last {@value #NUM_BATCHES_TO_RETAIN} batches
 * (Kafka keeps five, the producer's maximum in-flight requests with idempotence), the coordinator epoch of its last
 * marker and the first offset of its open transaction. Not thread-safe: owned by {@link ProducerStateManager}.
 */
public final class ProducerStateEntry {

    public static final int NUM_BATCHES_TO_RETAIN = 5;

    private final long producerId;
    private short producerEpoch;
    private int coordinatorEpoch;
    private long lastTimestamp;
    private long currentTxnFirstOffset;
    private final Deque<BatchMetadata> batches = new ArrayDeque<>();

    public ProducerStateEntry(long producerId, short producerEpoch, int coordinatorEpoch, long lastTimestamp,
                              long currentTxnFirstOffset) {
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.coordinatorEpoch = coordinatorEpoch;
        this.lastTimestamp = lastTimestamp;
        this.currentTxnFirstOffset = currentTxnFirstOffset;
    }

    public long producerId() {
        return producerId;
    }

    public short producerEpoch() {
        return producerEpoch;
    }

    public int coordinatorEpoch() {
        return coordinatorEpoch;
    }

    public long lastTimestamp() {
        return lastTimestamp;
    }

    public long currentTxnFirstOffset() {
        return currentTxnFirstOffset;
    }

    public List<BatchMetadata> batches() {
        return List.copyOf(batches);
    }

    /** The last sequence written, or -1. */
    public int lastSeq() {
        return batches.isEmpty() ? -1 : batches.getLast().lastSeq();
    }

    public BatchMetadata lastBatch() {
        return batches.peekLast();
    }

    /** A retained batch with exactly this sequence range, or {@code null}. */
    public BatchMetadata findDuplicate(int firstSeq, int lastSeq) {
        for (BatchMetadata b : batches) {
            if (b.firstSeq() == firstSeq && b.lastSeq() == lastSeq) {
                return b;
            }
        }
        return null;
    }

    void addBatch(short epoch, BatchMetadata batch) {
        if (epoch != producerEpoch) {
            batches.clear();
            producerEpoch = epoch;
        }
        batches.addLast(batch);
        while (batches.size() > NUM_BATCHES_TO_RETAIN) {
            batches.removeFirst();
        }
        lastTimestamp = batch.timestamp();
    }

    /**
     * Puts back a batch written before the last retained one, as a restart reads it again from the log: a snapshot
     * keeps only each producer's last batch. Ignored when it is of another epoch, not older than the last retained
     * batch, or already retained; the oldest are dropped beyond {@value #NUM_BATCHES_TO_RETAIN}.
     */
    void restoreEarlier(short epoch, BatchMetadata batch) {
        if (epoch != producerEpoch || batches.isEmpty() || batch.lastOffset() >= batches.getLast().lastOffset()) {
            return;
        }
        List<BatchMetadata> restored = new ArrayList<>(batches);
        int at = 0;
        while (restored.get(at).lastOffset() < batch.lastOffset()) {
            at++;
        }
        if (restored.get(at).lastOffset() == batch.lastOffset()) {
            return;
        }
        restored.add(at, batch);
        batches.clear();
        batches.addAll(restored.subList(Math.max(0, restored.size() - NUM_BATCHES_TO_RETAIN), restored.size()));
    }

    void setEpoch(short epoch) {
        if (epoch != producerEpoch) {
            batches.clear();
            producerEpoch = epoch;
        }
    }

    void setCoordinatorEpoch(int coordinatorEpoch) {
        this.coordinatorEpoch = coordinatorEpoch;
    }

    void setCurrentTxnFirstOffset(long offset) {
        this.currentTxnFirstOffset = offset;
    }

    void setLastTimestamp(long timestamp) {
        this.lastTimestamp = timestamp;
    }
}
