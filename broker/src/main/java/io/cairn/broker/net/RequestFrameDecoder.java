package io.cairn.broker.net;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Splits the byte stream of a connection into request frames: a 4-byte big-endian size, then that many bytes. The
 * size is checked against {@code socket.request.max.bytes} as soon as its 4 bytes arrive, before any of the body is
 * waited for or buffered; a negative or oversized size closes the connection with one WARN line (Kafka's
 * {@code InvalidReceiveException}). The size is then reserved from the broker's {@link RequestMemoryPool}
 * ({@code queued.max.request.bytes}); when the budget is spent the connection stops reading until it is not.
 * Emits each body as a retained slice that the next handler releases, together with the reservation.
 *
 * <p>One instance per connection; used on its event loop only.
 */
final class RequestFrameDecoder extends ByteToMessageDecoder {

    private static final Logger LOGGER = LogManager.getLogger(RequestFrameDecoder.class);
    private static final int SIZE_PREFIX_BYTES = 4;

    static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";

    /** The largest frame accepted now; lowered to sasl.server.max.receive.size until SASL completes. */
    private int maxRequestBytes;
    /** The key that sets {@link #maxRequestBytes}, for the log line. */
    private String limitKey = SOCKET_REQUEST_MAX_BYTES;
    private final String listenerName;
    private final RequestMemoryPool memoryPool;
    /** Set once the stream is known to be bad: everything after is discarded while the channel closes. */
    private boolean failed;
    /** Bytes reserved for the frame at the head of the buffer, or -1 when none are. */
    private int reservedBytes = -1;

    RequestFrameDecoder(int maxRequestBytes, String listenerName, RequestMemoryPool memoryPool) {
        this.maxRequestBytes = maxRequestBytes;
        this.listenerName = listenerName;
        this.memoryPool = memoryPool;
    }

    /** Changes the frame bound (called on the event loop, by the SASL authenticator). */
    void maxRequestBytes(int value, String key) {
        this.maxRequestBytes = value;
        this.limitKey = key;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (in.readableBytes() < SIZE_PREFIX_BYTES) {
            return;
        }
        int size = in.getInt(in.readerIndex());
        if (size < 0 || size > maxRequestBytes) {
            failed = true;
            LOGGER.warn("Closing connection from {} on listener {}: invalid request size {} ({}; "
                    + "{}={}, first bytes {}). A TLS ClientHello or an HTTP request read as "
                    + "a Kafka size prefix looks like a huge or negative size: is the client using the right "
                    + "protocol for this listener?", ctx.channel().remoteAddress(), listenerName, size,
                    size < 0 ? "negative" : "larger than the maximum", limitKey, maxRequestBytes, describePrefix(in));
            in.skipBytes(in.readableBytes());
            ctx.close();
            return;
        }
        if (reservedBytes < 0) {
            if (!memoryPool.tryReserve(size)) {
                awaitBudget(ctx);
                return;
            }
            reservedBytes = size;
        }
        if (in.readableBytes() < SIZE_PREFIX_BYTES + size) {
            return;
        }
        in.skipBytes(SIZE_PREFIX_BYTES);
        out.add(in.readRetainedSlice(size));
        reservedBytes = -1;
    }

    /** Stops reading until the pool has budget again, then decodes what is already buffered. */
    private void awaitBudget(ChannelHandlerContext ctx) {
        ReadGate gate = ReadGate.of(ctx.channel());
        if (gate.blocked(ReadGate.MEMORY)) {
            return;
        }
        LOGGER.debug("queued.max.request.bytes reached; connection {} stops reading", ctx.channel());
        gate.set(ReadGate.MEMORY, true);
        memoryPool.awaitBudget(() -> resumeOnEventLoop(ctx, gate));
    }

    private void resumeOnEventLoop(ChannelHandlerContext ctx, ReadGate gate) {
        try {
            ctx.executor().execute(() -> {
                gate.set(ReadGate.MEMORY, false);
                if (ctx.channel().isActive() && !ctx.isRemoved()) {
                    try {
                        channelRead(ctx, Unpooled.EMPTY_BUFFER);
                    } catch (Exception e) {
                        ctx.fireExceptionCaught(e);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            LOGGER.debug("Connection {} waited for request memory while its event loop stopped", ctx.channel());
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (reservedBytes >= 0) {
            memoryPool.release(reservedBytes);
            reservedBytes = -1;
        }
    }

    /** The first 4 bytes as hex and, when they are printable, as text: "0x47455420 'GET '". */
    private static String describePrefix(ByteBuf in) {
        StringBuilder hex = new StringBuilder("0x");
        StringBuilder text = new StringBuilder();
        boolean printable = true;
        for (int i = 0; i < SIZE_PREFIX_BYTES; i++) {
            int b = in.getUnsignedByte(in.readerIndex() + i);
            hex.append(Character.forDigit(b >> 4, 16)).append(Character.forDigit(b & 0xf, 16));
            printable &= b >= 0x20 && b < 0x7f;
            text.append((char) b);
        }
        return printable ? hex + " '" + text + "'" : hex.toString();
    }
}
