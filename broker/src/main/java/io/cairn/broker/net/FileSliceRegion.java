package io.cairn.broker.net;

import io.netty.channel.DefaultFileRegion;

/**
 * The records of a {@link FileSliceByteBuf} as a Netty file region: the transport sends it with {@code sendfile}
 * (epoll's native path for a {@code DefaultFileRegion}, {@code FileChannel.transferTo} on NIO), so the bytes go from
 * the page cache to the socket without entering the heap.
 *
 * <p>Holds one reference on the buffer, released when the region is released (after it was written, or by the
 * channel when the write failed); unlike its parent it never closes the channel, which belongs to the segment.
 * Thread-safety: as {@link DefaultFileRegion}, used by one channel.
 */
final class FileSliceRegion extends DefaultFileRegion {

    private final FileSliceByteBuf records;

    FileSliceRegion(FileSliceByteBuf records) {
        super(records.fileChannel(), records.filePosition() + records.readerIndex(), records.readableBytes());
        this.records = records;
        records.retain();
    }

    @Override
    protected void deallocate() {
        records.release();
    }
}
