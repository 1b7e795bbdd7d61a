package io.cairn.broker.net;

import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.WireWriter;
import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes one response frame as a sequence of parts: the encoded fields go into one pooled buffer, and the records
 * of a {@link FileSliceByteBuf} become a {@link FileSliceRegion} between slices of that buffer, so the socket
 * receives header, fields and file bytes in order while the file bytes are never copied. Other record buffers are
 * copied into the buffer. Without zero copy (TLS) every record buffer is copied (the file is read).
 *
 * <p>Not thread-safe; one per frame.
 */
final class FrameWriter implements WireWriter {

    private final ByteBuf buf;
    private final ByteBufAccessor out;
    private final boolean zeroCopy;
    private final List<Object> parts = new ArrayList<>();
    /** Start of the buffer's bytes not yet in {@link #parts}. */
    private int mark;
    private long regionBytes;

    FrameWriter(ByteBuf buf, boolean zeroCopy) {
        this.buf = buf;
        this.out = new ByteBufAccessor(buf);
        this.zeroCopy = zeroCopy;
        this.mark = buf.writerIndex();
    }

    @Override
    public void writeByte(byte value) {
        out.writeByte(value);
    }

    @Override
    public void writeShort(short value) {
        out.writeShort(value);
    }

    @Override
    public void writeInt(int value) {
        out.writeInt(value);
    }

    @Override
    public void writeLong(long value) {
        out.writeLong(value);
    }

    @Override
    public void writeDouble(double value) {
        out.writeDouble(value);
    }

    @Override
    public void writeUnsignedVarint(int value) {
        out.writeUnsignedVarint(value);
    }

    @Override
    public void writeVarint(int value) {
        out.writeVarint(value);
    }

    @Override
    public void writeVarlong(long value) {
        out.writeVarlong(value);
    }

    @Override
    public void writeByteArray(byte[] bytes) {
        out.writeByteArray(bytes);
    }

    @Override
    public void writeByteBuf(ByteBuf buffer) {
        if (zeroCopy && buffer instanceof FileSliceByteBuf && buffer.isReadable()) {
            cut();
            parts.add(new FileSliceRegion((FileSliceByteBuf) buffer));
            regionBytes += buffer.readableBytes();
        } else {
            out.writeByteBuf(buffer);
        }
    }

    private void cut() {
        int end = buf.writerIndex();
        if (end > mark) {
            parts.add(buf.retainedSlice(mark, end - mark));
            mark = end;
        }
    }

    /** Bytes written so far: into the buffer and as file regions. */
    long writtenBytes() {
        return buf.writerIndex() + regionBytes;
    }

    /**
     * The parts to write in order: just the buffer when nothing went zero-copy, else slices and regions (the
     * buffer's own reference is then handed to the slices).
     */
    List<Object> finish() {
        if (parts.isEmpty()) {
            return List.of(buf);
        }
        cut();
        buf.release();
        return parts;
    }

    /** Releases everything written so far (the frame could not be completed). */
    void discard() {
        parts.forEach(ReferenceCountUtil::release);
        parts.clear();
        buf.release();
    }
}
