package io.cairn.broker.fetch;

import io.cairn.log.LogOffsetMetadata;
import io.cairn.log.index.AbortedTxn;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;

/**
 * What reading one partition of a fetch gave (Kafka's {@code LogReadResult}): the records (owned, to be released
 * or handed to the response), the offsets the response reports, aborted transactions for read_committed, a
 * diverging epoch for a follower, or an error. Immutable apart from the records' reference count.
 *
 * @param tp                  the partition
 * @param error               the error, or NONE
 * @param records             the records, possibly empty; never null
 * @param highWatermark       the high watermark, -1 on error
 * @param lastStableOffset    the last stable offset, -1 on error
 * @param logStartOffset      the log start offset, -1 on error
 * @param abortedTransactions aborted transactions in the read range (read_committed), or null
 * @param divergingEpoch      where a follower's log diverged, or null
 * @param fetchOffsetMetadata the position of the fetch offset, for the delayed fetch's byte count
 * @param preferredReadReplica the replica a consumer should read from instead of this leader (then no records), or
 *                             -1
 */
public record PartitionRead(TopicIdPartition tp, Errors error, ByteBuf records, long highWatermark,
                     long lastStableOffset, long logStartOffset, List<AbortedTxn> abortedTransactions,
                     FetchResponseData.EpochEndOffset divergingEpoch, LogOffsetMetadata fetchOffsetMetadata,
                     int preferredReadReplica) {

    static PartitionRead error(TopicIdPartition tp, Errors error, long fetchOffset) {
        return new PartitionRead(tp, error, Unpooled.EMPTY_BUFFER, FetchResponses.INVALID_OFFSET,
            FetchResponses.INVALID_OFFSET, FetchResponses.INVALID_OFFSET, null, null,
            LogOffsetMetadata.offsetOnly(fetchOffset), -1);
    }

    /** The answer of a leader that sends the consumer to {@code replica}: the leader's offsets and no records. */
    static PartitionRead preferredReplica(TopicIdPartition tp, int replica, long highWatermark, long lastStableOffset,
                                          long logStartOffset, long fetchOffset) {
        return new PartitionRead(tp, Errors.NONE, Unpooled.EMPTY_BUFFER, highWatermark, lastStableOffset,
            logStartOffset, null, null, LogOffsetMetadata.offsetOnly(fetchOffset), replica);
    }

    public int recordsSize() {
        return records.readableBytes();
    }

    public void release() {
        ReferenceCountUtil.release(records);
    }

    /** The response entry; it takes over the records. */
    PartitionData toPartitionData() {
        PartitionData data = new PartitionData().setPartitionIndex(tp.partition()).setErrorCode(error.code())
            .setHighWatermark(highWatermark).setLastStableOffset(lastStableOffset).setLogStartOffset(logStartOffset)
            .setPreferredReadReplica(preferredReadReplica).setRecords(records);
        if (abortedTransactions == null) {
            data.setAbortedTransactions(null);
        } else {
            List<FetchResponseData.AbortedTransaction> aborted = new ArrayList<>(abortedTransactions.size());
            for (AbortedTxn txn : abortedTransactions) {
                aborted.add(new FetchResponseData.AbortedTransaction().setProducerId(txn.producerId())
                    .setFirstOffset(txn.firstOffset()));
            }
            data.setAbortedTransactions(aborted);
        }
        if (divergingEpoch != null) {
            data.setDivergingEpoch(divergingEpoch);
        }
        return data;
    }
}
