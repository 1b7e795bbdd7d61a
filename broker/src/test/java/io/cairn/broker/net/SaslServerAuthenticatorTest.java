package io.cairn.broker.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.config.JaasConfig;
import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.handler.SaslAuthenticateHandler;
import io.cairn.broker.handler.SaslHandshakeHandler;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.SaslServers;
import io.cairn.isr.client.ScramClient;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.message.SaslAuthenticateRequestData;
import io.cairn.wire.message.SaslAuthenticateResponseData;
import io.cairn.wire.message.SaslHandshakeRequestData;
import io.cairn.wire.message.SaslHandshakeResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Kafka's SaslServerAuthenticator states, on an EmbeddedChannel with the real pipeline around the authenticator. */
@ExtendWith(LeakDetection.class)
class SaslServerAuthenticatorTest {

    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "username=\"admin\" password=\"admin-secret\" user_alice=\"alice-secret\";";
    private static final int MAX_RECEIVE = 1024;

    private RequestMemoryPool pool;
    private ClientConnection connection;
    private EmbeddedChannel channel;

    @BeforeEach
    void setUp() {
        channelWithFailedAuthenticationDelay(0);
    }

    private void channelWithFailedAuthenticationDelay(int delayMs) {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        pool = new RequestMemoryPool(-1);
        connection = new ClientConnection("c", "SASL_PLAINTEXT", null);
        SaslSettings settings = new SaslSettings("SASL_PLAINTEXT", List.of("PLAIN"),
                Map.of("PLAIN", JaasConfig.parse(JAAS)), MAX_RECEIVE, delayMs);
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(new SaslHandshakeHandler(),
                new SaslAuthenticateHandler()), false);
        RequestDecoder decoder = new RequestDecoder(registry, "SASL_PLAINTEXT");
        RequestFrameDecoder frames = new RequestFrameDecoder(1 << 20, "SASL_PLAINTEXT", pool);
        frames.maxRequestBytes(MAX_RECEIVE, SaslSettings.MAX_RECEIVE_SIZE);
        channel = new EmbeddedChannel(frames, new ResponseEncoder(),
                new SaslServerAuthenticator(settings, decoder, connection, pool, Runnable::run, frames, 1 << 20,
                        new SaslServers(settings), session(settings)),
                new ResponseOrderer(), new RequestDispatcher(decoder, pool, Runnable::run, "SASL_PLAINTEXT",
                        ctx -> connection, RequestDispatcherTest.metrics()));
    }

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
    }

    @Test
    void plainOverHandshakeV1AndAuthenticateV2SetsThePrincipalAndLeavesThePipeline() {
        // Given
        send(ApiKey.API_VERSIONS, 3, 1, new ApiVersionsRequestData().setClientSoftwareName("t")
                .setClientSoftwareVersion("1"));
        ApiVersionsResponseData versions = read(ApiKey.API_VERSIONS, 3, new ApiVersionsResponseData());
        send(ApiKey.SASL_HANDSHAKE, 1, 2, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        SaslHandshakeResponseData handshake = read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());

        // When
        send(ApiKey.SASL_AUTHENTICATE, 2, 3, new SaslAuthenticateRequestData().setAuthBytes(plain("alice",
                "alice-secret")));

        // Then
        SaslAuthenticateResponseData authenticated = read(ApiKey.SASL_AUTHENTICATE, 2,
                new SaslAuthenticateResponseData());
        assertThat(versions.errorCode()).isZero();
        assertThat(versions.apiKeys()).anySatisfy(v -> {
            assertThat(v.apiKey()).isEqualTo(ApiKey.SASL_AUTHENTICATE.id());
            assertThat(v.maxVersion()).isEqualTo((short) 2);
        });
        assertThat(handshake.errorCode()).isZero();
        assertThat(handshake.mechanisms()).containsExactly("PLAIN");
        assertThat(authenticated.errorCode()).isZero();
        assertThat(authenticated.sessionLifetimeMs()).isZero();
        assertThat(connection.principal()).isEqualTo(new KafkaPrincipal("User", "alice"));
        assertThat(channel.pipeline().get(SaslServerAuthenticator.class)).isNull();
        // And: a handshake after authentication reaches the handlers, which answer ILLEGAL_SASL_STATE (Kafka's)
        send(ApiKey.SASL_HANDSHAKE, 1, 4, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        assertThat(read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData()).errorCode())
                .isEqualTo(Errors.ILLEGAL_SASL_STATE.code());
        assertThat(channel.isActive()).isTrue();
    }

    @Test
    void aWrongPasswordIsAnsweredSaslAuthenticationFailedWithKafkaMessageThenClosed() {
        // Given
        send(ApiKey.SASL_HANDSHAKE, 1, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());

        // When
        send(ApiKey.SASL_AUTHENTICATE, 1, 2, new SaslAuthenticateRequestData().setAuthBytes(plain("alice", "x")));

        // Then
        SaslAuthenticateResponseData failed = read(ApiKey.SASL_AUTHENTICATE, 1, new SaslAuthenticateResponseData());
        assertThat(failed.errorCode()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED.code());
        assertThat(failed.errorMessage()).isEqualTo("Authentication failed: Invalid username or password");
        assertThat(channel.isActive()).isFalse();
        assertThat(connection.principal()).isEqualTo(KafkaPrincipal.ANONYMOUS);
    }

    @Test
    void aFailedAuthenticationIsAnsweredAndClosedOnlyAfterTheConfiguredDelay() {
        // Given: connection.failed.authentication.delay.ms=100
        channelWithFailedAuthenticationDelay(100);
        send(ApiKey.SASL_HANDSHAKE, 1, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());
        send(ApiKey.SASL_AUTHENTICATE, 1, 2, new SaslAuthenticateRequestData().setAuthBytes(plain("alice", "x")));
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(channel.isActive()).isTrue();

        // When
        channel.advanceTimeBy(100, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();

        // Then
        assertThat(read(ApiKey.SASL_AUTHENTICATE, 1, new SaslAuthenticateResponseData()).errorCode())
                .isEqualTo(Errors.SASL_AUTHENTICATION_FAILED.code());
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void anUnknownUserFailsWithTheSameMessageAsAWrongPassword() {
        // Given
        send(ApiKey.SASL_HANDSHAKE, 1, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());

        // When
        send(ApiKey.SASL_AUTHENTICATE, 1, 2, new SaslAuthenticateRequestData().setAuthBytes(plain("mallory",
                "alice-secret")));

        // Then
        assertThat(read(ApiKey.SASL_AUTHENTICATE, 1, new SaslAuthenticateResponseData()).errorMessage())
                .isEqualTo("Authentication failed: Invalid username or password");
    }

    @Test
    void anUnsupportedMechanismIsAnsweredWithTheEnabledOnesThenClosed() {
        // When
        send(ApiKey.SASL_HANDSHAKE, 1, 1, new SaslHandshakeRequestData().setMechanism("GSSAPI"));

        // Then
        SaslHandshakeResponseData response = read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());
        assertThat(response.errorCode()).isEqualTo(Errors.UNSUPPORTED_SASL_MECHANISM.code());
        assertThat(response.mechanisms()).containsExactly("PLAIN");
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void aRequestOtherThanApiVersionsOrSaslHandshakeBeforeTheHandshakeClosesUnanswered() {
        // When
        send(ApiKey.SASL_AUTHENTICATE, 1, 1, new SaslAuthenticateRequestData().setAuthBytes(plain("alice",
                "alice-secret")));

        // Then
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void aSecondApiVersionsClosesTheConnection() {
        // Given
        send(ApiKey.API_VERSIONS, 3, 1, new ApiVersionsRequestData().setClientSoftwareName("t")
                .setClientSoftwareVersion("1"));
        read(ApiKey.API_VERSIONS, 3, new ApiVersionsResponseData());

        // When
        send(ApiKey.API_VERSIONS, 3, 2, new ApiVersionsRequestData().setClientSoftwareName("t")
                .setClientSoftwareVersion("1"));

        // Then
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void aHandshakeV0IsFollowedByRawTokensAnsweredWithRawTokens() {
        // Given
        send(ApiKey.SASL_HANDSHAKE, 0, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        assertThat(read(ApiKey.SASL_HANDSHAKE, 0, new SaslHandshakeResponseData()).errorCode()).isZero();
        byte[] token = plain("alice", "alice-secret");
        ByteBuf raw = Unpooled.buffer().writeInt(token.length).writeBytes(token);

        // When
        channel.writeInbound(raw);

        // Then: Kafka's PLAIN server replies with an empty token, size-prefixed
        ByteBuf reply = channel.readOutbound();
        try {
            assertThat(reply.readableBytes()).isEqualTo(4);
            assertThat(reply.readInt()).isZero();
        } finally {
            reply.release();
        }
        assertThat(connection.principal()).isEqualTo(new KafkaPrincipal("User", "alice"));
    }

    @Test
    void aFrameAboveTheSaslReceiveBoundBeforeAuthenticationClosesUnread() {
        // Given: a size prefix above sasl.server.max.receive.size, with no body yet
        ByteBuf prefix = Unpooled.buffer().writeInt(MAX_RECEIVE + 1);

        // When
        channel.writeInbound(prefix);

        // Then
        assertThat(channel.isActive()).isFalse();
    }

    /** A channel whose listener offers SCRAM-SHA-512 and PLAIN, with alice's SCRAM-SHA-512 credential. */
    private void scramChannel() {
        channel.finishAndReleaseAll();
        pool = new RequestMemoryPool(-1);
        connection = new ClientConnection("c", "SASL_PLAINTEXT", null);
        SaslSettings settings = new SaslSettings("SASL_PLAINTEXT", List.of("SCRAM-SHA-512", "PLAIN"),
                Map.of("PLAIN", JaasConfig.parse(JAAS), "SCRAM-SHA-512", JaasConfig.parse(
                        "org.apache.kafka.common.security.scram.ScramLoginModule required;")), MAX_RECEIVE, 0);
        byte[] salt = ScramMechanism.randomSalt();
        ScramCredential alice = ScramMechanism.SCRAM_SHA_512.credential("alice", salt,
                ScramMechanism.SCRAM_SHA_512.saltedPassword("alice-secret", salt, 4096), 4096);
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(new SaslHandshakeHandler(),
                new SaslAuthenticateHandler()), false);
        RequestDecoder decoder = new RequestDecoder(registry, "SASL_PLAINTEXT");
        RequestFrameDecoder frames = new RequestFrameDecoder(1 << 20, "SASL_PLAINTEXT", pool);
        frames.maxRequestBytes(MAX_RECEIVE, SaslSettings.MAX_RECEIVE_SIZE);
        channel = new EmbeddedChannel(frames, new ResponseEncoder(),
                new SaslServerAuthenticator(settings, decoder, connection, pool, Runnable::run, frames, 1 << 20,
                        new SaslServers(settings, (user, mechanism) -> user.equals("alice")
                                && mechanism == ScramMechanism.SCRAM_SHA_512 ? alice : null), session(settings)),
                new ResponseOrderer(), new RequestDispatcher(decoder, pool, Runnable::run, "SASL_PLAINTEXT",
                        ctx -> connection, RequestDispatcherTest.metrics()));
    }

    @Test
    void scramTakesTwoAuthenticateRoundTripsAndSetsThePrincipal() throws Exception {
        // Given
        scramChannel();
        send(ApiKey.SASL_HANDSHAKE, 1, 1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-512"));
        SaslHandshakeResponseData handshake = read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());
        ScramClient client = new ScramClient(ScramMechanism.SCRAM_SHA_512, "alice", "alice-secret");
        send(ApiKey.SASL_AUTHENTICATE, 2, 2, new SaslAuthenticateRequestData().setAuthBytes(client.clientFirst()));
        SaslAuthenticateResponseData first = read(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateResponseData());
        assertThat(connection.principal()).isEqualTo(KafkaPrincipal.ANONYMOUS);

        // When
        send(ApiKey.SASL_AUTHENTICATE, 2, 3, new SaslAuthenticateRequestData().setAuthBytes(
                client.clientFinal(first.authBytes())));

        // Then
        SaslAuthenticateResponseData last = read(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateResponseData());
        assertThat(handshake.mechanisms()).containsExactly("SCRAM-SHA-512", "PLAIN");
        assertThat(first.errorCode()).isZero();
        assertThat(last.errorCode()).isZero();
        client.verifyServerFinal(last.authBytes());
        assertThat(connection.principal()).isEqualTo(new KafkaPrincipal("User", "alice"));
        assertThat(channel.pipeline().get(SaslServerAuthenticator.class)).isNull();
    }

    @Test
    void aScramUserWithoutACredentialIsRefusedAtTheProofWithKafkasMessage() throws Exception {
        // Given
        scramChannel();
        send(ApiKey.SASL_HANDSHAKE, 1, 1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-512"));
        read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());
        ScramClient client = new ScramClient(ScramMechanism.SCRAM_SHA_512, "mallory", "alice-secret");
        send(ApiKey.SASL_AUTHENTICATE, 2, 2, new SaslAuthenticateRequestData().setAuthBytes(client.clientFirst()));
        SaslAuthenticateResponseData first = read(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateResponseData());

        // When
        send(ApiKey.SASL_AUTHENTICATE, 2, 3, new SaslAuthenticateRequestData().setAuthBytes(
                client.clientFinal(first.authBytes())));

        // Then
        SaslAuthenticateResponseData failed = read(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateResponseData());
        assertThat(first.errorCode()).isZero();
        assertThat(failed.errorCode()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED.code());
        assertThat(failed.errorMessage()).isEqualTo("Authentication failed during authentication due to invalid "
                + "credentials with SASL mechanism SCRAM-SHA-512");
        assertThat(channel.isActive()).isFalse();
        assertThat(connection.principal()).isEqualTo(KafkaPrincipal.ANONYMOUS);
    }

    private SaslSession session(SaslSettings settings) {
        DispatcherMetrics metrics = RequestDispatcherTest.metrics();
        return new SaslSession(settings, new SaslServers(settings), Runnable::run, connection, metrics.time(),
                metrics.connections());
    }

    private static byte[] plain(String user, String password) {
        return ("\u0000" + user + "\u0000" + password).getBytes(StandardCharsets.UTF_8);
    }

    private void send(ApiKey key, int version, int correlationId, ApiMessage body) {
        channel.writeInbound(RequestDispatcherTest.frame(key, (short) version, correlationId, body));
        channel.runPendingTasks();
    }

    private <T extends ApiMessage> T read(ApiKey key, int version, T into) {
        ByteBuf buf = channel.readOutbound();
        assertThat(buf).as("a response to %s", key).isNotNull();
        try {
            buf.readInt();
            ByteBufAccessor in = new ByteBufAccessor(buf);
            new ResponseHeaderData(in, key.responseHeaderVersion((short) version));
            into.read(in, (short) version);
            return into;
        } finally {
            buf.release();
        }
    }
}
