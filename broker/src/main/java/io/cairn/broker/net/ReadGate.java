package io.cairn.broker.net;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;

/**
 * Whether a connection reads from its socket: it stops while any reason holds (a request being dispatched, frames
 * queued, responses not writable, the request memory budget spent, the client throttled by a quota) and resumes when
 * none does. The frame decoder and the dispatcher share one gate per connection so neither re-enables reading behind
 * the other's back.
 *
 * <p>Sits first in the pipeline and also swallows explicit {@code read()} calls while closed: Netty's
 * {@code ByteToMessageDecoder} asks for one more read whenever auto-read is off and a read produced no frame, which
 * would otherwise keep reading a connection that waits for memory. One instance per connection; used on its event
 * loop only.
 */
final class ReadGate extends ChannelOutboundHandlerAdapter {

    static final int DISPATCHER = 1;
    static final int MEMORY = 2;
    /** A SASL token being evaluated off the event loop, or a failed authentication waiting to close. */
    static final int SASL = 4;
    /** A client over its quota, throttled after its response (KIP-219). */
    static final int THROTTLE = 8;

    private Channel channel;
    private int reasons;

    /** The gate of {@code channel}; installed first in its pipeline on first use. */
    static ReadGate of(Channel channel) {
        ReadGate gate = channel.pipeline().get(ReadGate.class);
        if (gate == null) {
            gate = new ReadGate();
            channel.pipeline().addFirst("readGate", gate);
        }
        return gate;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    void set(int reason, boolean blocked) {
        reasons = blocked ? reasons | reason : reasons & ~reason;
        boolean read = reasons == 0;
        if (channel.config().isAutoRead() != read) {
            channel.config().setAutoRead(read);
        }
    }

    boolean blocked(int reason) {
        return (reasons & reason) != 0;
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        if (reasons == 0) {
            ctx.read();
        }
    }
}
