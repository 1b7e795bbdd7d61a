package io.cairn.log;

import io.cairn.log.index.AbortedTxn;
import java.util.List;

/**
 * The result of a read: where it started and the bytes to send (Kafka's {@code FetchDataInfo}). The caller owns
 * the slice and must close it. Immutable.
 *
 * @param fetchOffsetMetadata  the fetch offset and its batch's position
 * @param records              the bytes, possibly empty
 * @param firstEntryIncomplete true when maxBytes cut the first batch (only when minOneMessage was false)
 * @param abortedTransactions  aborted transactions overlapping the read (read_committed), or an empty list
 */
public record FetchDataInfo(LogOffsetMetadata fetchOffsetMetadata, FileSlice records, boolean firstEntryIncomplete,
                            List<AbortedTxn> abortedTransactions) implements AutoCloseable {

    @Override
    public void close() {
        records.close();
    }
}
