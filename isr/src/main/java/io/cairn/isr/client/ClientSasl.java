package io.cairn.isr.client;

import io.cairn.metadata.image.ScramMechanism;
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
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The client side of SASL/PLAIN and SASL/SCRAM-SHA-256/512 for the inter-broker clients, layered over a
 * {@link ClientTls}: once the socket is connected (and TLS done), it sends SaslHandshake v1 with the mechanism of
 * {@code sasl.mechanism.inter.broker.protocol} and SaslAuthenticate v2 with the broker's own {@code username} and
 * {@code password} (from the inter-broker listener's JAAS config), as Kafka's {@code SaslClientAuthenticator}
 * does, without its optional ApiVersions first (the connection's own ApiVersions follows authentication). SCRAM
 * takes two SaslAuthenticate round trips ({@link ScramClient}: client-first, client-final with the proof) and checks
 * the server's signature, as Kafka's {@code ScramSaslClient} does. A refusal fails the connection with the leader's
 * message. When the leader grants a session lifetime ({@code connections.max.reauth.ms}, KIP-368) the
 * {@link BlockingChannel} runs the same exchange again on the connection before the session ends.
 *
 * <p>Immutable and thread-safe; each call uses only its own socket.
 */
public final class ClientSasl implements ClientTls {

    /** The SASL mechanisms this client speaks (and the SCRAM ones of {@link ScramMechanism}). */
    public static final String PLAIN = "PLAIN";
    private static final int MAX_RESPONSE_BYTES = 1 << 20;

    private final ClientTls transport;
    private final String mechanism;
    private final String username;
    private final String password;

    /**
     * @param transport how the socket is secured first (PLAINTEXT or TLS)
     * @throws IllegalArgumentException for a mechanism other than PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512
     */
    public ClientSasl(ClientTls transport, String mechanism, String username, String password) {
        if (!PLAIN.equals(mechanism) && ScramMechanism.forMechanismName(mechanism) == null) {
            throw new IllegalArgumentException("Inter-broker SASL speaks PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, not "
                    + mechanism);
        }
        this.transport = transport;
        this.mechanism = mechanism;
        this.username = username;
        this.password = password;
    }

    @Override
    public Socket secure(Socket socket, String host, int port) throws IOException {
        return secureSession(socket, host, port).socket();
    }

    @Override
    public Secured secureSession(Socket socket, String host, int port) throws IOException {
        Socket secured = transport.secure(socket, host, port);
        long lifetimeMs = authenticate(new DataInputStream(secured.getInputStream()), secured.getOutputStream(),
                host, port);
        return new Secured(secured, lifetimeMs);
    }

    /** The same exchange again on the established connection, as Kafka's client re-authenticates (KIP-368). */
    @Override
    public long reauthenticate(DataInputStream in, OutputStream out, String host, int port) throws IOException {
        return authenticate(in, out, host, port);
    }

    /** SaslHandshake and SaslAuthenticate; the session lifetime of the last SaslAuthenticate response. */
    private long authenticate(DataInputStream in, OutputStream out, String host, int port) throws IOException {
        SaslHandshakeResponseData handshake = exchange(in, out, 1, new SaslHandshakeRequestData()
                .setMechanism(mechanism), (short) 1, new SaslHandshakeResponseData());
        if (handshake.errorCode() != Errors.NONE.code()) {
            throw new IOException("SASL handshake with " + host + ":" + port + " failed: "
                    + Errors.forCode(handshake.errorCode()) + " (enabled mechanisms " + handshake.mechanisms() + ")");
        }
        ScramMechanism scram = ScramMechanism.forMechanismName(mechanism);
        if (scram == null) {
            byte[] token = ("\u0000" + username + "\u0000" + password).getBytes(StandardCharsets.UTF_8);
            return authenticate(in, out, 2, token, host, port).sessionLifetimeMs();
        }
        ScramClient client = new ScramClient(scram, username, password);
        SaslAuthenticateResponseData serverFirst = authenticate(in, out, 2, client.clientFirst(), host, port);
        SaslAuthenticateResponseData serverFinal = authenticate(in, out, 3, client.clientFinal(
                serverFirst.authBytes()), host, port);
        client.verifyServerFinal(serverFinal.authBytes());
        return serverFinal.sessionLifetimeMs();
    }

    private static SaslAuthenticateResponseData authenticate(DataInputStream in, OutputStream out,
            int correlationId, byte[] token, String host, int port) throws IOException {
        SaslAuthenticateResponseData authenticated = exchange(in, out, correlationId, new SaslAuthenticateRequestData()
                .setAuthBytes(token), (short) 2, new SaslAuthenticateResponseData());
        if (authenticated.errorCode() != Errors.NONE.code()) {
            throw new IOException("SASL authentication with " + host + ":" + port + " failed: "
                    + Errors.forCode(authenticated.errorCode()) + ": " + authenticated.errorMessage());
        }
        return authenticated;
    }

    private static <T extends ApiMessage> T exchange(DataInputStream in, OutputStream out, int correlationId,
            ApiMessage request, short version, T response) throws IOException {
        ApiKey apiKey = ApiKey.forId(request.apiKey());
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(request.apiKey())
                .setRequestApiVersion(version).setCorrelationId(correlationId).setClientId("cairn-inter-broker");
        short headerVersion = apiKey.requestHeaderVersion(version);
        SerializationCache cache = new SerializationCache();
        int size = header.size(cache, headerVersion) + request.size(cache, version);
        ByteBuf buffer = Unpooled.buffer(4 + size);
        buffer.writeInt(size);
        ByteBufAccessor writer = new ByteBufAccessor(buffer);
        header.write(writer, cache, headerVersion);
        request.write(writer, cache, version);
        out.write(buffer.array(), buffer.arrayOffset() + buffer.readerIndex(), buffer.readableBytes());
        out.flush();
        int responseSize = in.readInt();
        if (responseSize < 0 || responseSize > MAX_RESPONSE_BYTES) {
            throw new IOException("Invalid " + apiKey.messageName() + " response size " + responseSize);
        }
        byte[] frame = new byte[responseSize];
        in.readFully(frame);
        ByteBufAccessor reader = new ByteBufAccessor(Unpooled.wrappedBuffer(frame));
        ResponseHeaderData responseHeader = new ResponseHeaderData(reader, apiKey.responseHeaderVersion(version));
        if (responseHeader.correlationId() != correlationId) {
            throw new IOException("Correlation id " + responseHeader.correlationId() + " of the "
                    + apiKey.messageName() + " response does not match " + correlationId);
        }
        response.read(reader, version);
        return response;
    }

    @Override
    public String toString() {
        return "SASL/" + mechanism + " as " + username + " over " + transport;
    }
}
