package io.cairn.isr.client;

import io.cairn.log.Time;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.net.SocketFactory;

/**
 * One blocking connection to a leader broker (Kafka's {@code ReplicaFetcherBlockingSend}): sends one request and
 * reads its response before the next, on a blocking {@link Socket}, secured by {@link ClientTls} (TLS when the
 * inter-broker listener is SSL). Connect, the TLS handshake and every read are bounded by
 * {@code replica.socket.timeout.ms}; the receive buffer is {@code replica.socket.receive.buffer.bytes}; a response
 * larger than {@code maxResponseBytes} is refused before its body is allocated. Any failure closes the connection;
 * the next request reconnects. When the connection's SASL session has a lifetime (KIP-368) it re-authenticates
 * before the request that comes after a random 85 to 95 % of it, as Kafka's {@code SaslClientAuthenticator} does
 * (one request at a time, so nothing is in flight meanwhile).
 *
 * <p>Thread-safety: {@link #send} is called by one thread; {@link #close} may be called from another to fail a
 * blocked send at once.
 */
final class BlockingChannel implements AutoCloseable {

    private final String host;
    private final int port;
    private final String clientId;
    private final int socketTimeoutMs;
    private final int receiveBufferBytes;
    private final int maxResponseBytes;
    private final ClientTls tls;
    private final SocketFactory sockets;
    /** The TCP socket of the current connection (closing it fails a blocked read or write at once). */
    private volatile Socket channel;
    /** The socket being connected, so that {@link #close} can abort a connect or handshake that hangs. */
    private volatile Socket connecting;
    private volatile OutputStream out;
    private volatile boolean closed;
    private volatile DataInputStream in;
    private int correlationId;
    private final Time time;
    /** When the SASL session must be re-authenticated (the clock's nanoseconds); sending thread only. */
    private long reauthenticateAtNanos;
    /** Whether the SASL session of the current connection has a lifetime; sending thread only. */
    private boolean reauthenticates;
    /** What re-authenticates the current connection (as it authenticated); sending thread only. */
    private ClientTls session;
    /**
     * The frame buffer {@link #sendReusingFrame} reads responses into, reused from one such send to the next (a
     * follower fetches many times a second: a fresh array per response is garbage the size of the records);
     * sending thread only. Null until the first such send, and again after a shrink.
     */
    private byte[] reusedFrame;
    /** The largest frame read into {@link #reusedFrame} since the last shrink check; sending thread only. */
    private int largestRecentFrame;
    /** Sends into {@link #reusedFrame} since the last shrink check; sending thread only. */
    private int framesSinceShrinkCheck;
    /** The request buffer, cleared and reused by every send; sending thread only. */
    private ByteBuf requestBuffer;

    /**
     * @param host               the leader's host
     * @param port               the leader's port
     * @param clientId           the client id of the request headers
     * @param socketTimeoutMs    connect and read timeout
     * @param receiveBufferBytes SO_RCVBUF, or -1 for the system's default
     * @param maxResponseBytes   the largest response accepted
     * @param tls                PLAINTEXT or TLS
     */
    BlockingChannel(String host, int port, String clientId, int socketTimeoutMs, int receiveBufferBytes,
                    int maxResponseBytes, ClientTls tls) {
        this(host, port, clientId, socketTimeoutMs, receiveBufferBytes, maxResponseBytes, tls,
            SocketFactory.getDefault(), Time.SYSTEM);
    }

    /** As the other constructor, with the factory of the (unconnected) sockets and the clock of re-authentication. */
    BlockingChannel(String host, int port, String clientId, int socketTimeoutMs, int receiveBufferBytes,
                    int maxResponseBytes, ClientTls tls, SocketFactory sockets, Time time) {
        this.sockets = sockets;
        this.time = time;
        this.host = host;
        this.port = port;
        this.clientId = clientId;
        this.socketTimeoutMs = socketTimeoutMs;
        this.receiveBufferBytes = receiveBufferBytes;
        this.maxResponseBytes = maxResponseBytes;
        this.tls = tls;
    }

    boolean isConnected() {
        return channel != null;
    }

    /**
     * Connects when not connected; throws when closed or the connection fails.
     *
     * <p>The hand-over with {@link #close} on another thread: this thread publishes the socket it connects in
     * {@link #connecting} and only then checks {@link #closed}; {@link #close} sets {@link #closed} and only then reads
     * {@link #connecting} (both volatile, so the two writes and two reads are totally ordered): either this thread
     * sees the close and gives up before connecting, or the close sees the socket and closes it, failing the connect
     * or handshake at once. A connected socket is published in {@link #channel} before {@link #connecting} is
     * cleared, so a close in between always finds one of them.
     */
    void connect() throws IOException {
        if (closed) {
            throw new IOException("closed");
        }
        if (channel != null) {
            return;
        }
        Socket opened = sockets.createSocket();
        connecting = opened;
        try {
            if (closed) {
                // close() ran after the first check but may have read connecting before it was published.
                throw new IOException("closed");
            }
            if (receiveBufferBytes > 0) {
                opened.setReceiveBufferSize(receiveBufferBytes);
            }
            opened.setTcpNoDelay(true);
            opened.setKeepAlive(true);
            opened.connect(new InetSocketAddress(host, port), socketTimeoutMs);
            opened.setSoTimeout(socketTimeoutMs);
            ClientTls.Secured secured = tls.secureSession(opened, host, port);
            in = new DataInputStream(new BufferedInputStream(secured.socket().getInputStream(), 64 * 1024));
            out = secured.socket().getOutputStream();
            session = secured.session() != null ? secured.session() : tls;
            scheduleReauthentication(secured.sessionLifetimeMs());
            channel = opened;
        } catch (IOException | RuntimeException e) {
            in = null;
            out = null;
            opened.close();
            throw e;
        } finally {
            connecting = null;
        }
        if (closed) {
            disconnect();
            throw new IOException("closed");
        }
    }

    /**
     * Sends {@code request} at {@code version} and returns the body of its response; the connection is closed on
     * any failure (so the next call reconnects).
     */
    <T extends ApiMessage> T send(ApiMessage request, short version) throws IOException {
        return send(request, version, false);
    }

    /**
     * As {@link #send}, reading the response into this channel's reused frame buffer instead of a fresh array: the
     * response's byte fields (a fetch response's records) are views of that buffer, valid only until the next
     * {@code sendReusingFrame} on this channel. The buffer grows to the largest response (at most
     * {@code maxResponseBytes}) and is dropped when, over {@value #SHRINK_CHECK_INTERVAL} sends, no response used a
     * quarter of it, so a burst of large responses (a follower catching up) does not pin its size for good.
     */
    <T extends ApiMessage> T sendReusingFrame(ApiMessage request, short version) throws IOException {
        return send(request, version, true);
    }

    /** Sends between shrink checks of the reused frame buffer. */
    static final int SHRINK_CHECK_INTERVAL = 256;
    /** A reused frame buffer up to this size is kept whatever the recent responses' sizes. */
    static final int KEPT_FRAME_BYTES = 1 << 20;

    @SuppressWarnings("unchecked")
    private <T extends ApiMessage> T send(ApiMessage request, short version, boolean reuseFrame)
            throws IOException {
        connect();
        ApiKey apiKey = ApiKey.forId(request.apiKey());
        int id = nextCorrelationId();
        try {
            maybeReauthenticate();
            write(new RequestHeaderData().setRequestApiKey(request.apiKey()).setRequestApiVersion(version)
                .setCorrelationId(id).setClientId(clientId), apiKey.requestHeaderVersion(version), request, version);
            ByteBuf frame = reuseFrame ? readReusedFrame() : Unpooled.wrappedBuffer(readFrame());
            ByteBufAccessor reader = new ByteBufAccessor(frame);
            ResponseHeaderData header = new ResponseHeaderData(reader, apiKey.responseHeaderVersion(version));
            if (header.correlationId() != id) {
                throw new IOException("Correlation id " + header.correlationId() + " of the response to "
                    + apiKey.messageName() + " does not match the request's " + id);
            }
            ApiMessage body = apiKey.newResponse();
            body.read(reader, version);
            return (T) body;
        } catch (IOException | RuntimeException e) {
            disconnect();
            throw e;
        }
    }

    /** Re-authenticates first when the session is due (KIP-368); a failure fails the request and disconnects. */
    private void maybeReauthenticate() throws IOException {
        if (!reauthenticates || time.nanoseconds() - reauthenticateAtNanos < 0) {
            return;
        }
        DataInputStream stream = in;
        OutputStream current = out;
        if (stream == null || current == null) {
            throw new IOException("closed");
        }
        scheduleReauthentication(session.reauthenticate(stream, current, host, port));
    }

    /** Kafka's client rule: re-authenticate after a random 85 to 95 % of the session lifetime. */
    private void scheduleReauthentication(long sessionLifetimeMs) {
        reauthenticates = sessionLifetimeMs > 0;
        if (reauthenticates) {
            double fraction = 0.85 + 0.1 * ThreadLocalRandom.current().nextDouble();
            reauthenticateAtNanos = time.nanoseconds() + (long) (TimeUnit.MILLISECONDS.toNanos(sessionLifetimeMs)
                    * fraction);
        }
    }

    private int nextCorrelationId() {
        correlationId = correlationId == Integer.MAX_VALUE ? 0 : correlationId + 1;
        return correlationId;
    }

    private void write(RequestHeaderData header, short headerVersion, ApiMessage body, short version)
            throws IOException {
        SerializationCache headerCache = new SerializationCache();
        SerializationCache bodyCache = new SerializationCache();
        int size = header.size(headerCache, headerVersion) + body.size(bodyCache, version);
        ByteBuf buffer = requestBuffer;
        if (buffer == null || buffer.capacity() > KEPT_FRAME_BYTES) {
            buffer = Unpooled.buffer(Math.max(4 + size, 1024));
            requestBuffer = buffer;
        }
        buffer.clear().ensureWritable(4 + size);
        buffer.writeInt(size);
        ByteBufAccessor writer = new ByteBufAccessor(buffer);
        header.write(writer, headerCache, headerVersion);
        body.write(writer, bodyCache, version);
        OutputStream current = out;
        if (current == null) {
            throw new IOException("closed");
        }
        current.write(buffer.array(), buffer.arrayOffset() + buffer.readerIndex(), buffer.readableBytes());
        current.flush();
    }

    /** Reads one size-prefixed frame; the size is checked before the body is allocated. */
    private byte[] readFrame() throws IOException {
        DataInputStream stream = in;
        if (stream == null) {
            throw new IOException("closed");
        }
        int size = stream.readInt();
        if (size < 0 || size > maxResponseBytes) {
            throw new IOException("Invalid response size " + size + " (the limit is " + maxResponseBytes + ")");
        }
        byte[] frame = new byte[size];
        stream.readFully(frame);
        return frame;
    }

    /**
     * Reads one size-prefixed frame into {@link #reusedFrame} (grown when too small, dropped on a shrink check) and
     * returns a view of its bytes; the size is checked before any allocation.
     */
    private ByteBuf readReusedFrame() throws IOException {
        DataInputStream stream = in;
        if (stream == null) {
            throw new IOException("closed");
        }
        int size = stream.readInt();
        if (size < 0 || size > maxResponseBytes) {
            throw new IOException("Invalid response size " + size + " (the limit is " + maxResponseBytes + ")");
        }
        byte[] frame = reusedFrame;
        if (frame != null && ++framesSinceShrinkCheck >= SHRINK_CHECK_INTERVAL) {
            if (frame.length > KEPT_FRAME_BYTES && Math.max(largestRecentFrame, size) < frame.length / 4) {
                frame = null;
            }
            framesSinceShrinkCheck = 0;
            largestRecentFrame = 0;
        }
        largestRecentFrame = Math.max(largestRecentFrame, size);
        if (frame == null || frame.length < size) {
            // Rounded up, so that slowly growing responses do not reallocate every time.
            int capacity = size <= 1024 ? 1024 : Integer.highestOneBit(size - 1) << 1;
            frame = new byte[capacity < 0 || capacity > maxResponseBytes ? size : capacity];
            framesSinceShrinkCheck = 0;
        }
        reusedFrame = frame;
        stream.readFully(frame, 0, size);
        return Unpooled.wrappedBuffer(frame, 0, size);
    }

    /** The capacity of the reused frame buffer, 0 when there is none; for tests. */
    int reusedFrameCapacity() {
        return reusedFrame == null ? 0 : reusedFrame.length;
    }

    /** Closes the current connection, if any; the next send reconnects. */
    void disconnect() {
        Socket current = channel;
        channel = null;
        in = null;
        out = null;
        if (current != null) {
            try {
                current.close();
            } catch (IOException e) {
                // Nothing more to do with a connection that failed to close.
            }
        }
    }

    /** Closes the connection for good; a send blocked on it fails at once. */
    @Override
    public void close() {
        closed = true;
        Socket pending = connecting;
        if (pending != null) {
            try {
                pending.close();
            } catch (IOException e) {
                // The connect fails either way.
            }
        }
        disconnect();
    }
}
