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
 * message.
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
        Socket secured = transport.secure(socket, host, port);
        DataInputStream in = new DataInputStream(secured.getInputStream());
        OutputStream out = secured.getOutputStream();
        SaslHandshakeResponseData handshake = exchange(in, out, 1, new SaslHandshakeRequestData()
                .setMechanism(mechanism), (short) 1, new SaslHandshakeResponseData());
        if (handshake.errorCode() != Errors.NONE.code()) {
            throw new IOException("SASL handshake with " + host + ":" + port + " failed: "
                    + Errors.forCode(handshake.errorCode()) + " (enabled mechanisms " + handshake.mechanisms() + ")");
        }
        ScramMechanism scram = ScramMechanism.forMechanismName(mechanism);
        if (scram == null) {
            byte[] token = ("\u0000" + username + "\u0000" + password).getBytes(StandardCharsets.UTF_8);
            authenticate(in, out, 2, token, host, port);
            return secured;
        }
        ScramClient client = new ScramClient(scram, username, password);
        byte[] serverFirst = authenticate(in, out, 2, client.clientFirst(), host, port);
        byte[] serverFinal = authenticate(in, out, 3, client.clientFinal(serverFirst), host, port);
        client.verifyServerFinal(serverFinal);
        return secured;
    }

    private static byte[] authenticate(DataInputStream in, OutputStream out, int correlationId, byte[] token,
            String host, int port) throws IOException {
        SaslAuthenticateResponseData authenticated = exchange(in, out, correlationId, new SaslAuthenticateRequestData()
                .setAuthBytes(token), (short) 2, new SaslAuthenticateResponseData());
        if (authenticated.errorCode() != Errors.NONE.code()) {
            throw new IOException("SASL authentication with " + host + ":" + port + " failed: "
                    + Errors.forCode(authenticated.errorCode()) + ": " + authenticated.errorMessage());
        }
        return authenticated.authBytes();
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
