package io.cairn.broker.net;

import io.cairn.log.FileSlice;
import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.netty.util.ResourceLeakTracker;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * A read-only {@link ByteBuf} whose content is a {@link FileSlice} of a segment file: the records of a Fetch response
 * before they are sent. Its content methods really read the file (positional reads, so no shared file position), so
 * it is a correct buffer anywhere a {@code ByteBuf} is expected (the TLS path and tests copy it); the
 * {@link ResponseEncoder} recognises it and sends the range with {@code sendfile} as a {@link FileSliceRegion}
 * instead, without copying it into memory.
 *
 * <p>Reference counted: created with one reference, which the response owns; the slice (and with it the reference
 * on the segment's channel) is closed when the count reaches zero. Tracked by Netty's leak detector like any
 * pooled buffer. Thread-safety: reads are thread-safe (positional); the indexes are not, as for any ByteBuf.
 */
public final class FileSliceByteBuf extends AbstractReferenceCountedByteBuf {

    private static final ResourceLeakDetector<FileSliceByteBuf> LEAK_DETECTOR =
        ResourceLeakDetectorFactory.instance().newResourceLeakDetector(FileSliceByteBuf.class);

    private final FileSlice slice;
    private final ResourceLeakTracker<FileSliceByteBuf> leak;

    private FileSliceByteBuf(FileSlice slice) {
        super(slice.length());
        this.slice = slice;
        writerIndex(slice.length());
        this.leak = LEAK_DETECTOR.track(this);
    }

    /** The records of {@code slice}; owns the slice from now on (an empty slice is closed at once). */
    public static ByteBuf of(FileSlice slice) {
        if (slice.length() == 0) {
            slice.close();
            return Unpooled.EMPTY_BUFFER;
        }
        return new FileSliceByteBuf(slice);
    }

    /** The file channel to send from. */
    FileChannel fileChannel() {
        return slice.channel();
    }

    /** The file position of index 0. */
    long filePosition() {
        return slice.position();
    }

    @Override
    protected void deallocate() {
        slice.close();
        if (leak != null) {
            leak.close(this);
        }
    }

    @Override
    public ByteBuf touch(Object hint) {
        if (leak != null) {
            leak.record(hint);
        }
        return this;
    }

    private void readFully(int index, ByteBuffer dst) {
        ensureAccessible();
        long position = slice.position() + index;
        try {
            while (dst.hasRemaining()) {
                int n = slice.channel().read(dst, position);
                if (n < 0) {
                    throw new IOException("End of segment file at position " + position + " of " + slice);
                }
                position += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private ByteBuffer read(int index, int length) {
        ByteBuffer buf = ByteBuffer.allocate(length);
        readFully(index, buf);
        return buf.flip();
    }

    @Override
    protected byte _getByte(int index) {
        return read(index, 1).get();
    }

    @Override
    protected short _getShort(int index) {
        return read(index, 2).getShort();
    }

    @Override
    protected short _getShortLE(int index) {
        return read(index, 2).order(ByteOrder.LITTLE_ENDIAN).getShort();
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        ByteBuffer b = read(index, 3);
        return (b.get() & 0xff) << 16 | (b.get() & 0xff) << 8 | b.get() & 0xff;
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        ByteBuffer b = read(index, 3);
        return b.get() & 0xff | (b.get() & 0xff) << 8 | (b.get() & 0xff) << 16;
    }

    @Override
    protected int _getInt(int index) {
        return read(index, 4).getInt();
    }

    @Override
    protected int _getIntLE(int index) {
        return read(index, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    @Override
    protected long _getLong(int index) {
        return read(index, 8).getLong();
    }

    @Override
    protected long _getLongLE(int index) {
        return read(index, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int length) {
        checkIndex(index, length);
        if (dst.hasArray()) {
            getBytes(index, dst.array(), dst.arrayOffset() + dstIndex, length);
        } else {
            dst.setBytes(dstIndex, read(index, length));
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int length) {
        checkIndex(index, length);
        readFully(index, ByteBuffer.wrap(dst, dstIndex, length));
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        checkIndex(index, dst.remaining());
        readFully(index, dst);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int length) throws IOException {
        checkIndex(index, length);
        out.write(read(index, length).array(), 0, length);
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int length) throws IOException {
        checkIndex(index, length);
        ensureAccessible();
        return (int) slice.channel().transferTo(slice.position() + index, length, out);
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int length) throws IOException {
        checkIndex(index, length);
        ByteBuffer buf = read(index, length);
        int written = 0;
        while (buf.hasRemaining()) {
            written += out.write(buf, position + written);
        }
        return written;
    }

    @Override
    public ByteBuf copy(int index, int length) {
        checkIndex(index, length);
        ByteBuf copy = alloc().heapBuffer(length);
        copy.writeBytes(read(index, length));
        return copy;
    }

    @Override
    public int nioBufferCount() {
        return 1;
    }

    /** A copy of the range (the contract allows a copy when the content is not in memory). */
    @Override
    public ByteBuffer nioBuffer(int index, int length) {
        checkIndex(index, length);
        return read(index, length).asReadOnlyBuffer();
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int length) {
        return nioBuffer(index, length);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int length) {
        return new ByteBuffer[] {nioBuffer(index, length)};
    }

    @Override
    public boolean isReadOnly() {
        return true;
    }

    @Override
    public int capacity() {
        return slice.length();
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBufAllocator alloc() {
        return ByteBufAllocator.DEFAULT;
    }

    @SuppressWarnings("deprecation")
    @Override
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return false;
    }

    @Override
    public boolean hasArray() {
        return false;
    }

    /** Not backed by an array ({@link #hasArray()} is false), as for any direct buffer. */
    @Override
    public byte[] array() {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int arrayOffset() {
        throw new ReadOnlyBufferException();
    }

    @Override
    public boolean hasMemoryAddress() {
        return false;
    }

    /** Not in memory ({@link #hasMemoryAddress()} is false). */
    @Override
    public long memoryAddress() {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setByte(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShort(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShortLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMedium(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setInt(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setIntLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLong(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLongLE(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, InputStream in, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int length) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public String toString() {
        return "FileSliceByteBuf(" + slice + ", ridx=" + readerIndex() + ", widx=" + writerIndex() + ", refCnt="
            + refCnt() + ")";
    }
}
