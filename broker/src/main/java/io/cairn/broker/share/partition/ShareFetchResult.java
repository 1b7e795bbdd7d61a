package io.cairn.broker.share.partition;

import io.cairn.broker.share.partition.ShareRecordTypes.AcquiredRange;
import io.cairn.wire.error.Errors;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.List;

/**
 * What a share fetch gave for one partition: an error, or the records read (owned: handed to the response or
 * released) and the ranges of them acquired. Immutable apart from the records' reference count.
 *
 * @param error    NONE or the partition's error
 * @param records  the log batches holding the acquired records; empty when none
 * @param acquired the acquired offsets and their delivery counts
 */
public record ShareFetchResult(Errors error, ByteBuf records, List<AcquiredRange> acquired) {

    public static final ShareFetchResult EMPTY = new ShareFetchResult(Errors.NONE, Unpooled.EMPTY_BUFFER, List.of());

    public static ShareFetchResult error(Errors error) {
        return new ShareFetchResult(error, Unpooled.EMPTY_BUFFER, List.of());
    }
}
