package io.cairn.broker.quorum;

import io.cairn.broker.config.ControllerSasl;
import io.cairn.broker.security.SaslAuthenticationException;
import io.cairn.broker.security.SaslServer;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.message.SaslAuthenticateRequestData;
import io.cairn.wire.message.SaslAuthenticateResponseData;
import io.cairn.wire.message.SaslHandshakeRequestData;
import io.cairn.wire.message.SaslHandshakeResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.SocketAddress;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The server side of one connection's SASL exchange on the quorum front, in Kafka's framing as its controller
 * listener runs it (the client is {@link io.cairn.isr.client.ClientSasl}): SaslHandshake v1 naming the controller
 * mechanism, then SaslAuthenticate v0-2 until the mechanism completes. Before it completes every frame is bounded by
 * {@code sasl.server.max.receive.size} (larger sizes close the connection unread, the CVE-2022-34917 class), and no
 * other request is read. A failure is answered after {@code connection.failed.authentication.delay.ms}, as Kafka
 * delays it, and ends the connection. One instance per connection; not thread-safe.
 */
final class QuorumSaslExchange {

    private static final Logger LOGGER = LogManager.getLogger(QuorumSaslExchange.class);
    private static final short HANDSHAKE_VERSION = 1;

    private final ControllerSasl settings;
    private final SaslServer mechanism;
    private final int maxReceiveSize;
    private final int failureDelayMs;

    QuorumSaslExchange(ControllerSasl settings, SaslServer mechanism, int maxReceiveSize, int failureDelayMs) {
        this.settings = settings;
        this.mechanism = mechanism;
        this.maxReceiveSize = maxReceiveSize;
        this.failureDelayMs = failureDelayMs;
    }

    /**
     * Runs the exchange over {@code in}/{@code out}.
     *
     * @return the authenticated principal ({@code User:name}), or null when the peer failed (answered, logged)
     * @throws IOException when the connection fails or sends what the exchange does not allow (not answered)
     */
    String authenticate(InputStream input, OutputStream out, SocketAddress peer) throws IOException {
        DataInputStream in = new DataInputStream(input);
        Frame handshake = read(in);
        if (handshake.apiKey != ApiKey.SASL_HANDSHAKE || handshake.version != HANDSHAKE_VERSION) {
            throw new IOException("expected SaslHandshake v" + HANDSHAKE_VERSION + " first, got "
                    + handshake.apiKey.messageName() + " v" + handshake.version);
        }
        SaslHandshakeRequestData request = new SaslHandshakeRequestData(handshake.body, handshake.version);
        List<String> enabled = List.of(mechanism.mechanism());
        if (!mechanism.mechanism().equals(request.mechanism())) {
            write(out, handshake, new SaslHandshakeResponseData()
                    .setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code()).setMechanisms(enabled));
            LOGGER.info("Failed authentication to the metadata quorum from {} (Unsupported SASL mechanism {})", peer,
                    request.mechanism());
            return null;
        }
        write(out, handshake, new SaslHandshakeResponseData().setErrorCode(Errors.NONE.code())
                .setMechanisms(enabled));
        while (true) {
            Frame frame = read(in);
            if (frame.apiKey != ApiKey.SASL_AUTHENTICATE) {
                throw new IOException("expected SaslAuthenticate, got " + frame.apiKey.messageName());
            }
            byte[] token = new SaslAuthenticateRequestData(frame.body, frame.version).authBytes();
            byte[] reply;
            try {
                reply = mechanism.evaluateResponse(token);
            } catch (SaslAuthenticationException e) {
                return fail(out, frame, peer, e.getMessage());
            }
            if (!mechanism.complete()) {
                write(out, frame, new SaslAuthenticateResponseData().setErrorCode(Errors.NONE.code())
                        .setAuthBytes(reply));
                continue;
            }
            String principal = "User:" + mechanism.authorizationId();
            if (!settings.admits(principal)) {
                return fail(out, frame, peer, "Principal " + principal + " may not reach the metadata quorum: "
                        + "with an authorizer set, only super.users may");
            }
            write(out, frame, new SaslAuthenticateResponseData().setErrorCode(Errors.NONE.code())
                    .setAuthBytes(reply));
            return principal;
        }
    }

    private String fail(OutputStream out, Frame frame, SocketAddress peer, String message) throws IOException {
        LOGGER.info("Failed authentication to the metadata quorum from {} ({})", peer, message);
        if (failureDelayMs > 0) {
            try {
                Thread.sleep(failureDelayMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        write(out, frame, new SaslAuthenticateResponseData()
                .setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(message));
        return null;
    }

    private Frame read(DataInputStream in) throws IOException {
        int size = in.readInt();
        if (size < 8 || size > maxReceiveSize) {
            throw new IOException("invalid frame size " + size + " before authentication (at most "
                    + maxReceiveSize + ", sasl.server.max.receive.size)");
        }
        byte[] bytes = new byte[size];
        in.readFully(bytes);
        ByteBuf buffer = Unpooled.wrappedBuffer(bytes);
        short key = buffer.getShort(0);
        short version = buffer.getShort(2);
        ApiKey apiKey = ApiKey.forId(key);
        if (apiKey == null || (apiKey != ApiKey.SASL_HANDSHAKE && apiKey != ApiKey.SASL_AUTHENTICATE)
                || version < 0 || version > apiKey.highestSupportedVersion()) {
            throw new IOException("unexpected request (API key " + key + " v" + version + ") before authentication");
        }
        ByteBufAccessor reader = new ByteBufAccessor(buffer);
        RequestHeaderData header = new RequestHeaderData(reader, apiKey.requestHeaderVersion(version));
        return new Frame(apiKey, version, header.correlationId(), reader);
    }

    private static void write(OutputStream out, Frame request, ApiMessage response) throws IOException {
        ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(request.correlationId);
        short headerVersion = request.apiKey.responseHeaderVersion(request.version);
        SerializationCache cache = new SerializationCache();
        int size = header.size(cache, headerVersion) + response.size(cache, request.version);
        ByteBuf buffer = Unpooled.buffer(4 + size);
        buffer.writeInt(size);
        ByteBufAccessor writer = new ByteBufAccessor(buffer);
        header.write(writer, cache, headerVersion);
        response.write(writer, cache, request.version);
        out.write(buffer.array(), buffer.arrayOffset() + buffer.readerIndex(), buffer.readableBytes());
        out.flush();
    }

    private record Frame(ApiKey apiKey, short version, int correlationId, ByteBufAccessor body) {
    }
}
