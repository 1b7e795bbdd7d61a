package io.cairn.testkit;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.Message;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Kafka-protocol client with no client logic, for tests of what a broker does with exactly the bytes it is sent:
 * pipelined requests, chosen correlation ids and header versions, malformed, truncated and oversized frames, raw
 * garbage. Requests are encoded with the generated classes ({@code io.cairn.wire.message}); responses arrive as
 * frames in the order the broker wrote them and can be decoded against the request they answer.
 *
 * <p>One TCP connection over Netty (one shared daemon event loop for all clients). Sends and receives may be called
 * from the test thread while the event loop fills the inbound queue; use one client from one test thread.
 */
public final class RawKafkaClient implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(RawKafkaClient.class);
    private static final String CLIENT_ID = "cairn-raw-client";
    private static final int MAX_RESPONSE_BYTES = 100 * 1024 * 1024;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    private static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(1,
            new DefaultThreadFactory("cairn-raw-client", true), NioIoHandler.newFactory());

    private final Channel channel;
    private final BlockingQueue<byte[]> frames = new LinkedBlockingQueue<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final Map<Integer, SentRequest> pending = new ConcurrentHashMap<>();
    private final AtomicInteger correlationIds = new AtomicInteger(1);

    private RawKafkaClient(String host, int port) {
        Bootstrap bootstrap = new Bootstrap()
                .group(GROUP)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) CONNECT_TIMEOUT.toMillis())
                .option(ChannelOption.TCP_NODELAY, true)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(new LengthFieldBasedFrameDecoder(MAX_RESPONSE_BYTES, 0, 4, 0, 4))
                                .addLast(new InboundFrames());
                    }
                });
        ChannelFuture connect = bootstrap.connect(host, port).awaitUninterruptibly();
        if (!connect.isSuccess()) {
            throw new IllegalStateException("Could not connect to " + host + ":" + port, connect.cause());
        }
        this.channel = connect.channel();
    }

    /** Connects to {@code host:port}. */
    public static RawKafkaClient connect(String host, int port) {
        return new RawKafkaClient(host, port);
    }

    /** Connects to the client listener of {@code broker}. */
    public static RawKafkaClient connect(BrokerProcess broker) {
        return connect(broker.host(), broker.port());
    }

    /**
     * Sends {@code request} at {@code version} with the next correlation id, client id {@value #CLIENT_ID} and the
     * header version the API prescribes for that version; returns the correlation id.
     */
    public int send(ApiMessage request, short version) {
        int correlationId = correlationIds.getAndIncrement();
        RequestHeaderData header = new RequestHeaderData()
                .setRequestApiKey(request.apiKey())
                .setRequestApiVersion(version)
                .setCorrelationId(correlationId)
                .setClientId(CLIENT_ID);
        send(header, request);
        return correlationId;
    }

    /**
     * Sends {@code request} under an explicit {@code header} (any correlation id, client id or version); the body is
     * written at {@code header.requestApiVersion()}, the header at the version its API prescribes.
     */
    public void send(RequestHeaderData header, ApiMessage request) {
        ApiKey apiKey = apiKeyOf(header.requestApiKey());
        send(header, apiKey.requestHeaderVersion(header.requestApiVersion()), request, header.requestApiVersion());
    }

    /** Sends a request with every version chosen by the caller, e.g. a body version the header does not name. */
    public void send(RequestHeaderData header, short headerVersion, ApiMessage request, short bodyVersion) {
        pending.put(header.correlationId(), new SentRequest(apiKeyOf(header.requestApiKey()),
                header.requestApiVersion()));
        sendFrame(encode(header, headerVersion, request, bodyVersion));
    }

    /**
     * The frame payload (without the size prefix) of a header and a body at the given versions, for tests that cut
     * or corrupt it before {@link #sendFrame(byte[])}.
     */
    public static byte[] encode(Message header, short headerVersion, Message body, short bodyVersion) {
        SerializationCache headerCache = new SerializationCache();
        SerializationCache bodyCache = new SerializationCache();
        int size = header.size(headerCache, headerVersion) + body.size(bodyCache, bodyVersion);
        ByteBuf buffer = Unpooled.buffer(size);
        try {
            ByteBufAccessor out = new ByteBufAccessor(buffer);
            header.write(out, headerCache, headerVersion);
            body.write(out, bodyCache, bodyVersion);
            return ByteBufUtil.getBytes(buffer);
        } finally {
            buffer.release();
        }
    }

    /** Sends {@code payload} prefixed by its int32 size. */
    public void sendFrame(byte[] payload) {
        ByteBuf buffer = Unpooled.buffer(4 + payload.length);
        buffer.writeInt(payload.length);
        buffer.writeBytes(payload);
        write(buffer);
    }

    /** Sends exactly {@code bytes}: no size prefix is added, so any framing (or none) can be tested. */
    public void sendBytes(byte[] bytes) {
        write(Unpooled.wrappedBuffer(bytes));
    }

    /**
     * The next response frame (its payload, without the size prefix); throws {@link AssertionError} if none
     * arrives within {@code timeout} or the connection closes first.
     */
    public ResponseFrame receiveFrame(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (true) {
                byte[] frame = frames.poll(Math.min(50, Math.max(0, deadline - System.nanoTime()) / 1_000_000),
                        TimeUnit.MILLISECONDS);
                if (frame != null) {
                    return new ResponseFrame(frame);
                }
                if (closed.isDone() && frames.isEmpty()) {
                    throw new AssertionError("The broker closed the connection; no response frame arrived");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new AssertionError("No response frame within " + timeout.toMillis() + " ms");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("Interrupted while waiting for a response frame", e);
        }
    }

    /**
     * The next response, decoded against the request this client sent with its correlation id (response header
     * version from the API, KIP-511 included). {@code records} fields of the body are slices the caller releases.
     */
    public Response receive(Duration timeout) {
        ResponseFrame frame = receiveFrame(timeout);
        SentRequest request = pending.remove(frame.correlationId());
        if (request == null) {
            throw new AssertionError("Response with correlation id " + frame.correlationId()
                    + " answers no request sent on this connection; pending: " + pending.keySet());
        }
        return frame.decode(request.apiKey(), request.version());
    }

    /** Sends {@code request} and returns the body of the next response, which must answer it. */
    @SuppressWarnings("unchecked")
    public <T extends ApiMessage> T sendAndReceive(ApiMessage request, short version, Duration timeout) {
        int correlationId = send(request, version);
        Response response = receive(timeout);
        if (response.header().correlationId() != correlationId) {
            throw new AssertionError("Expected the response to correlation id " + correlationId + ", got "
                    + response.header().correlationId());
        }
        return (T) response.body();
    }

    /** Whether the broker has closed the connection, waiting up to {@code timeout} for it. */
    public boolean awaitClosed(Duration timeout) {
        try {
            closed.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return true;
        } catch (TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (ExecutionException e) {
            return true;
        }
    }

    /** Whether the connection is still open. */
    public boolean isOpen() {
        return channel.isActive();
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly();
    }

    private void write(ByteBuf buffer) {
        ChannelFuture write = channel.writeAndFlush(buffer).awaitUninterruptibly();
        if (!write.isSuccess()) {
            throw new IllegalStateException("Could not write to " + channel.remoteAddress(), write.cause());
        }
    }

    private static ApiKey apiKeyOf(short id) {
        ApiKey apiKey = ApiKey.forId(id);
        if (apiKey == null) {
            throw new IllegalArgumentException("Unknown api key " + id + "; use sendFrame for made-up keys");
        }
        return apiKey;
    }

    /** What was sent under one correlation id: enough to decode its response. */
    private record SentRequest(ApiKey apiKey, short version) {
    }

    /** One response: the decoded header and body. */
    public record Response(ResponseHeaderData header, ApiMessage body) {
    }

    /**
     * One response frame as the broker wrote it, without the size prefix. Immutable.
     *
     * @param payload the bytes after the size prefix
     */
    public record ResponseFrame(byte[] payload) {

        /** The correlation id, the first field of every response header version. */
        public int correlationId() {
            if (payload.length < 4) {
                throw new AssertionError("A response frame of " + payload.length + " bytes has no correlation id");
            }
            return Unpooled.wrappedBuffer(payload).getInt(0);
        }

        /** Decodes header and body as the response to {@code apiKey} at {@code version}. */
        public Response decode(ApiKey apiKey, short version) {
            ByteBufAccessor in = new ByteBufAccessor(Unpooled.wrappedBuffer(payload));
            ResponseHeaderData header = new ResponseHeaderData(in, apiKey.responseHeaderVersion(version));
            ApiMessage body = apiKey.newResponse();
            body.read(in, version);
            if (in.remaining() != 0) {
                throw new AssertionError(in.remaining() + " bytes left after decoding " + apiKey.messageName()
                        + " response v" + version);
            }
            return new Response(header, body);
        }
    }

    /** Queues each inbound frame's bytes; completes {@code closed} when the connection goes away. */
    private final class InboundFrames extends SimpleChannelInboundHandler<ByteBuf> {

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
            frames.add(ByteBufUtil.getBytes(frame));
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            closed.complete(null);
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOGGER.debug("Raw client connection {} failed", ctx.channel(), cause);
            ctx.close();
        }
    }
}
