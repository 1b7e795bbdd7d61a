package io.cairn.log.segment;

import io.cairn.wire.record.RecordBatch;
import java.nio.ByteBuffer;

/**
 * The header of one batch found in a segment file, with its byte position: what scans, index rebuilds and
 * lookups need without reading the records. Immutable.
 *
 * @param position byte position of the batch in the file
 * @param header   the 61 header bytes (big-endian, position 0)
 */
public record FileBatch(int position, ByteBuffer header) {

    /** The header as a {@code wire.record} view. */
    public RecordBatch view() {
        return RecordBatch.of(header, 0);
    }

    public int sizeInBytes() {
        return view().sizeInBytes();
    }

    public long baseOffset() {
        return view().baseOffset();
    }

    public long lastOffset() {
        return view().lastOffset();
    }

    public long nextOffset() {
        return lastOffset() + 1;
    }

    public long maxTimestamp() {
        return view().maxTimestamp();
    }

    public int partitionLeaderEpoch() {
        return view().partitionLeaderEpoch();
    }

    public byte magic() {
        return view().magic();
    }

    public long producerId() {
        return view().producerId();
    }

    public boolean isTransactional() {
        return view().isTransactional();
    }

    public boolean isControl() {
        return view().isControlBatch();
    }

    public int endPosition() {
        return position + sizeInBytes();
    }
}
