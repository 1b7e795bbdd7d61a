package io.cairn.isr;

import java.util.Comparator;

/**
 * One replica as a replica selector sees it when choosing where a consumer should read (Kafka's {@code ReplicaView}):
 * its broker, that broker's rack, its log end offset and how long ago it was last caught up with the leader (0 for
 * the leader). Immutable.
 *
 * @param brokerId                the replica's broker
 * @param rack                    the broker's {@code broker.rack}, or null when it has none
 * @param logEndOffset            the replica's log end offset as the leader knows it
 * @param timeSinceLastCaughtUpMs milliseconds since the replica last had everything the leader had
 */
public record ReplicaView(int brokerId, String rack, long logEndOffset, long timeSinceLastCaughtUpMs) {

    /**
     * "Most caught up" order, the tie-break of a selection: a larger log end offset, then a more recent catch-up,
     * then a larger broker id comes last (is the maximum).
     */
    public static final Comparator<ReplicaView> MOST_CAUGHT_UP = Comparator.comparingLong(ReplicaView::logEndOffset)
        .thenComparing(Comparator.comparingLong(ReplicaView::timeSinceLastCaughtUpMs).reversed())
        .thenComparingInt(ReplicaView::brokerId);
}
