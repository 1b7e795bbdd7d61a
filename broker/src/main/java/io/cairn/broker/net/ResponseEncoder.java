package io.cairn.broker.net;

import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Turns a {@link ResponseFrame} into bytes: the 4-byte size, the response header at the frame's header version and
 * the body at its version, in one buffer of exactly the right size (sized first, then written, as Kafka's
 * generated {@code Message} API intends).
 *
 * <p>Stateless and thread-safe; one instance serves every connection.
 */
@Sharable
final class ResponseEncoder extends ChannelOutboundHandlerAdapter {

    private static final Logger LOGGER = LogManager.getLogger(ResponseEncoder.class);

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ResponseFrame)) {
            ctx.write(msg, promise);
            return;
        }
        ResponseFrame frame = (ResponseFrame) msg;
        ByteBuf buf;
        try {
            buf = encode(ctx, frame);
        } catch (RuntimeException e) {
            // A response our own code cannot write is a bug; the client would wait forever for it, so close.
            LOGGER.error("Closing connection from {}: cannot encode the response to correlation id {} ({} v{})",
                    ctx.channel().remoteAddress(), frame.correlationId(), frame.body().getClass().getSimpleName(),
                    frame.apiVersion(), e);
            promise.tryFailure(e);
            ctx.close();
            return;
        }
        ctx.write(buf, promise);
    }

    private static ByteBuf encode(ChannelHandlerContext ctx, ResponseFrame frame) {
        SerializationCache cache = new SerializationCache();
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(frame.correlationId());
        int headerSize = header.size(cache, frame.headerVersion());
        int bodySize = frame.body().size(cache, frame.apiVersion());
        int size = headerSize + bodySize;
        ByteBuf buf = ctx.alloc().buffer(4 + size);
        try {
            ByteBufAccessor out = new ByteBufAccessor(buf);
            buf.writeInt(size);
            header.write(out, cache, frame.headerVersion());
            frame.body().write(out, cache, frame.apiVersion());
            if (buf.readableBytes() != 4 + size) {
                throw new IllegalStateException("Wrote " + (buf.readableBytes() - 4) + " bytes but sized " + size);
            }
            return buf;
        } catch (RuntimeException e) {
            buf.release();
            throw e;
        }
    }
}
