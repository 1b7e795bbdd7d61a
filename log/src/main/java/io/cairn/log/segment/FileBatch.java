package io.cairn.log.segment;

import io.cairn.log.record.BatchHeader;
import java.nio.ByteBuffer;

/**
 * The header of one batch found in a segment file, with its byte position: what scans, index rebuilds and
 * lookups need without reading the records. Immutable.
 *
 * @param position byte position of the batch in the file
 * @param header   the 61 header bytes (big-endian, position 0)
 */
public record FileBatch(int position, ByteBuffer header) {

    public int sizeInBytes() {
        return BatchHeader.sizeInBytes(header, 0);
    }

    public long baseOffset() {
        return BatchHeader.baseOffset(header, 0);
    }

    public long lastOffset() {
        return BatchHeader.lastOffset(header, 0);
    }

    public long nextOffset() {
        return lastOffset() + 1;
    }

    public long maxTimestamp() {
        return BatchHeader.maxTimestamp(header, 0);
    }

    public int partitionLeaderEpoch() {
        return BatchHeader.partitionLeaderEpoch(header, 0);
    }

    public byte magic() {
        return BatchHeader.magic(header, 0);
    }

    public long producerId() {
        return BatchHeader.producerId(header, 0);
    }

    public boolean isTransactional() {
        return BatchHeader.isTransactional(header, 0);
    }

    public boolean isControl() {
        return BatchHeader.isControl(header, 0);
    }

    public int endPosition() {
        return position + sizeInBytes();
    }
}
