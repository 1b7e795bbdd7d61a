package io.cairn.broker.share;

/**
 * A run of offsets of a share-partition in one delivery state with one delivery count (Kafka's
 * {@code PersisterStateBatch}): what the share-partition leader persists of records it delivered. Ordered as Kafka
 * orders them: by first offset, last offset, delivery count, then delivery state. Immutable.
 *
 * @param firstOffset   the first offset
 * @param lastOffset    the last offset (inclusive)
 * @param deliveryState 0 available, 2 acknowledged, 4 archived
 * @param deliveryCount how often the records were delivered
 */
public record StateBatch(long firstOffset, long lastOffset, byte deliveryState, short deliveryCount)
        implements Comparable<StateBatch> {

    /** This batch's state over {@code first}..{@code last}. */
    StateBatch withOffsets(long first, long last) {
        return new StateBatch(first, last, deliveryState, deliveryCount);
    }

    @Override
    public int compareTo(StateBatch other) {
        int c = Long.compare(firstOffset, other.firstOffset);
        if (c != 0) {
            return c;
        }
        c = Long.compare(lastOffset, other.lastOffset);
        if (c != 0) {
            return c;
        }
        c = Short.compare(deliveryCount, other.deliveryCount);
        if (c != 0) {
            return c;
        }
        return Byte.compare(deliveryState, other.deliveryState);
    }
}
