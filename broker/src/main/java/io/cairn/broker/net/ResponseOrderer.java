package io.cairn.broker.net;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;
import java.util.HashMap;
import java.util.Map;

/**
 * Writes responses in the order their requests arrived on the connection, whatever order the handlers finish in:
 * a {@link ResponseFrame} whose sequence is not the next one is parked until every earlier one has been written.
 * Frames without a body (no response expected) only advance the sequence, so acks=0 produce requests never
 * desynchronise the correlation ids a client expects (clients match responses by order; Kafka keeps it by muting
 * the channel, Kroxylicious by a correlation map).
 *
 * <p>Owns the frames it parks: those still parked when the connection closes are released here.
 *
 * <p>One instance per connection; used on its event loop only.
 */
final class ResponseOrderer extends ChannelOutboundHandlerAdapter {

    private final Map<Long, Parked> parked = new HashMap<>();
    private long nextSequence;

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ResponseFrame)) {
            ctx.write(msg, promise);
            return;
        }
        ResponseFrame frame = (ResponseFrame) msg;
        if (frame.sequence() != nextSequence) {
            parked.put(frame.sequence(), new Parked(frame, promise));
            return;
        }
        emit(ctx, frame, promise);
        Parked next;
        while ((next = parked.remove(nextSequence)) != null) {
            emit(ctx, next.frame(), next.promise());
        }
    }

    private void emit(ChannelHandlerContext ctx, ResponseFrame frame, ChannelPromise promise) {
        nextSequence++;
        if (frame.hasResponse()) {
            ctx.write(frame, promise);
        } else {
            frame.release();
            promise.trySuccess();
        }
    }

    /** Number of responses waiting for an earlier one; for tests and metrics. */
    int parkedCount() {
        return parked.size();
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (parked.isEmpty()) {
            return;
        }
        ClosedChannelException closed = new ClosedChannelException();
        for (Parked p : parked.values()) {
            ReferenceCountUtil.release(p.frame());
            p.promise().tryFailure(closed);
        }
        parked.clear();
    }

    private record Parked(ResponseFrame frame, ChannelPromise promise) {
    }
}
