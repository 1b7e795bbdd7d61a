package io.cairn.broker.net;

import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.protocol.SerializationCache;
import io.cairn.wire.protocol.SizeAccumulator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandler.Sharable;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.PromiseCombiner;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Turns a {@link ResponseFrame} into bytes: the 4-byte size, the response header at the frame's header version and
 * the body at its version (sized first, then written, as Kafka's generated {@code Message} API intends). The fields
 * go into one pooled buffer of exactly the right size; on a plaintext connection the records of a Fetch response
 * ({@link FileSliceByteBuf}) go out as {@link FileSliceRegion}s between slices of that buffer, so they travel from
 * the segment file to the socket with zero copy. With TLS in the pipeline the records are copied. The frame is
 * released once encoded (the regions hold their own references).
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
        List<Object> parts;
        try {
            parts = encode(ctx.alloc(), frame, ctx.pipeline().get(SslHandler.class) == null);
        } catch (RuntimeException e) {
            // A response our own code cannot write is a bug; the client would wait forever for it, so close.
            LOGGER.error("Closing connection from {}: cannot encode the response to correlation id {} ({} v{})",
                    ctx.channel().remoteAddress(), frame.correlationId(), frame.body().getClass().getSimpleName(),
                    frame.apiVersion(), e);
            promise.tryFailure(e);
            ctx.close();
            return;
        } finally {
            frame.release();
        }
        write(ctx, parts, promise);
    }

    private static void write(ChannelHandlerContext ctx, List<Object> parts, ChannelPromise promise) {
        if (parts.size() == 1) {
            ctx.write(parts.get(0), promise);
            return;
        }
        if (promise.isVoid()) {
            for (Object part : parts) {
                ctx.write(part, ctx.voidPromise());
            }
            return;
        }
        PromiseCombiner combiner = new PromiseCombiner(ctx.executor());
        for (Object part : parts) {
            combiner.add(ctx.write(part));
        }
        combiner.finish(promise);
    }

    /**
     * The parts of one frame, to be written in order: a single buffer, or buffer slices and file regions when
     * {@code zeroCopy} and the body carries file-backed records. The caller still owns (and releases) the frame.
     */
    static List<Object> encode(ByteBufAllocator alloc, ResponseFrame frame, boolean zeroCopy) {
        SerializationCache cache = new SerializationCache();
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(frame.correlationId());
        int headerSize = header.size(cache, frame.headerVersion());
        SizeAccumulator body = new SizeAccumulator();
        frame.body().addSize(body, cache, frame.apiVersion());
        int size = headerSize + body.totalSize();
        if (frame.times() != null) {
            frame.times().responseBytes(4 + size);
        }
        int inBuffer = 4 + size - (zeroCopy ? body.zeroCopySize() : 0);
        ByteBuf buf = alloc.buffer(inBuffer);
        FrameWriter out = new FrameWriter(buf, zeroCopy);
        try {
            buf.writeInt(size);
            header.write(out, cache, frame.headerVersion());
            frame.body().write(out, cache, frame.apiVersion());
            if (out.writtenBytes() != 4L + size) {
                throw new IllegalStateException("Wrote " + (out.writtenBytes() - 4) + " bytes but sized " + size);
            }
        } catch (RuntimeException e) {
            out.discard();
            throw e;
        }
        return out.finish();
    }
}
