package io.cairn.broker.share.partition;

import java.util.List;

/** The values that cross a share-partition's boundary: acknowledgements, acquisitions, log batches. */
public final class ShareRecordTypes {

    /** Kafka's AcknowledgeType codes. */
    public static final byte GAP = 0;
    public static final byte ACCEPT = 1;
    public static final byte RELEASE = 2;
    public static final byte REJECT = 3;

    private ShareRecordTypes() {
    }

    /**
     * One acknowledgement batch: {@code types} has one type for the whole range or one per offset. Immutable by
     * convention (the array is not copied).
     */
    public record AckBatch(long firstOffset, long lastOffset, byte[] types) {

        /** The type of {@code offset}. */
        byte typeOf(long offset) {
            return types.length == 1 ? types[0] : types[(int) (offset - firstOffset)];
        }
    }

    /** Offsets acquired together with their delivery count (the AcquiredRecords of a ShareFetch response). */
    public record AcquiredRange(long firstOffset, long lastOffset, int deliveryCount) {
    }

    /** A batch of the log as a read returned it, and where it ends in the read's bytes. */
    public record LogBatch(long baseOffset, long lastOffset, int endPosition) {
    }

    /** What one acquisition took: the ranges, and how many bytes of the read hold them (0 when none). */
    public record Acquisition(List<AcquiredRange> ranges, int bytes) {

        public static final Acquisition NONE = new Acquisition(List.of(), 0);

        public boolean isEmpty() {
            return ranges.isEmpty();
        }
    }
}
