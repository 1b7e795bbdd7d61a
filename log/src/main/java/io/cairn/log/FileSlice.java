package io.cairn.log;

import io.cairn.log.io.SharedChannel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A byte range of one segment file that a fetch returns: the server sends it with zero copy
 * ({@code FileChannel.transferTo}, Netty's {@code DefaultFileRegion}) or copies it ({@link #readBytes()}) for TLS.
 * The slice holds a reference on the channel, so the segment may be rolled, evicted or deleted meanwhile; the
 * reader must {@link #close()} it after sending. The range holds whole batches except, possibly, a partial last one
 * (Kafka's fetch semantics; clients drop it). Thread-safety: immutable apart from the one-shot {@code close}.
 */
public final class FileSlice implements AutoCloseable {

    private static final FileSlice EMPTY = new FileSlice(null, 0L, 0);

    private final SharedChannel channel;
    private final long position;
    private final int length;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** Takes ownership of one reference on {@code channel}. */
    public FileSlice(SharedChannel channel, long position, int length) {
        this.channel = channel;
        this.position = position;
        this.length = length;
    }

    public static FileSlice empty() {
        return EMPTY;
    }

    /** The channel to send from, or {@code null} for an empty slice. */
    public FileChannel channel() {
        return channel == null ? null : channel.channel();
    }

    public long position() {
        return position;
    }

    public int length() {
        return length;
    }

    /** Copies the range into a heap buffer (tests, TLS). */
    public ByteBuffer readBytes() {
        ByteBuffer out = ByteBuffer.allocate(length);
        if (length == 0) {
            return out;
        }
        try {
            while (out.hasRemaining()) {
                int n = channel.channel().read(out, position + out.position());
                if (n < 0) {
                    throw new IOException("end of file at " + (position + out.position()));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.flip();
    }

    /** Drops the slice's reference on the channel; idempotent. */
    @Override
    public void close() {
        if (channel != null && closed.compareAndSet(false, true)) {
            channel.release();
        }
    }

    @Override
    public String toString() {
        return "FileSlice(position=" + position + ", length=" + length + ")";
    }
}
