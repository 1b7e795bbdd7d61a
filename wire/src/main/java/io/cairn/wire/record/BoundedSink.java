package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import net.jpountz.xxhash.XXHash32;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * The output of one decompression: a heap {@link ByteBuf} that grows only as content actually arrives and never
 * beyond a limit, so a corrupted or hostile size field (or a decompression bomb) cannot exhaust memory. The
 * decoders write into it; {@link #take()} hands the buffer to the caller, {@link #release()} drops it on failure.
 * Not thread-safe; one sink per decompression.
 */
final class BoundedSink {

    private static final int STREAM_CHUNK = 64 * 1024;

    private final ByteBuf buf;
    private final int limit;

    BoundedSink(ByteBufAllocator allocator, int initialCapacity, int limit) {
        this.limit = limit;
        this.buf = allocator.heapBuffer(Math.max(0, Math.min(initialCapacity, limit)));
    }

    int size() {
        return buf.writerIndex();
    }

    /** Checks that {@code bytes} more bytes fit and makes room for them. */
    void ensureRoom(int bytes) {
        if (bytes < 0 || bytes > limit - buf.writerIndex()) {
            throw limitExceeded();
        }
        grow(bytes);
    }

    /**
     * Makes room for {@code bytes} more bytes (within the limit), doubling the capacity: Netty's own growth is linear
     * past 4 MiB, which would copy a large output over and over.
     */
    private void grow(int bytes) {
        int needed = buf.writerIndex() + bytes;
        if (needed > buf.capacity()) {
            long doubled = Math.max((long) needed, 2L * buf.capacity());
            buf.capacity((int) Math.min(doubled, Math.max(needed, limit)));
        }
    }

    /** Appends {@code length} bytes of {@code source} from {@code index}. */
    void write(ByteBuffer source, int index, int length) {
        ensureRoom(length);
        ByteBuffer slice = source.duplicate();
        slice.limit(index + length).position(index);
        buf.writeBytes(slice);
    }

    /** A writable window of at most {@code max} bytes (less when the limit is near); fill it, then {@link #commit}. */
    ByteBuffer reserve(int max) {
        int room = Math.min(max, limit - buf.writerIndex());
        grow(room);
        return buf.nioBuffer(buf.writerIndex(), room);
    }

    /** The backing array of the heap buffer; write at {@link #arrayWriteOffset()} after {@link #ensureRoom}. */
    byte[] array() {
        return buf.array();
    }

    int arrayWriteOffset() {
        return buf.arrayOffset() + buf.writerIndex();
    }

    void commit(int bytes) {
        buf.writerIndex(buf.writerIndex() + bytes);
    }

    /** Reads {@code in} to its end. */
    void readFully(InputStream in) throws IOException {
        while (true) {
            int room = Math.min(STREAM_CHUNK, limit - buf.writerIndex());
            if (room == 0) {
                if (in.read() != -1) {
                    throw limitExceeded();
                }
                return;
            }
            grow(room);
            if (buf.writeBytes(in, room) < 0) {
                return;
            }
        }
    }

    int hash(int from, XXHash32 hash) {
        return hash.hash(buf.nioBuffer(from, buf.writerIndex() - from), 0, buf.writerIndex() - from, 0);
    }

    CorruptRecordException limitExceeded() {
        return new CorruptRecordException("The decompressed record batch exceeds the limit of " + limit + " bytes");
    }

    /** Hands the content to the caller, who releases it. */
    ByteBuf take() {
        return buf;
    }

    void release() {
        buf.release();
    }
}
