package io.cairn.broker.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.LogCapture;
import io.cairn.broker.config.JaasConfig;
import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.handler.RequestContext;
import io.cairn.broker.handler.SaslAuthenticateHandler;
import io.cairn.broker.handler.SaslHandshakeHandler;
import io.cairn.broker.handler.TwoPhaseApiHandler;
import io.cairn.broker.metrics.BrokerMetrics;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.SaslServers;
import io.cairn.isr.client.ScramClient;
import io.cairn.log.Time;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.message.SaslAuthenticateRequestData;
import io.cairn.wire.message.SaslAuthenticateResponseData;
import io.cairn.wire.message.SaslHandshakeRequestData;
import io.cairn.wire.message.SaslHandshakeResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.micrometer.core.instrument.Clock;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * KIP-368 on one connection: the session lifetime, expiry and re-authentication (same principal, same mechanism, in
 * the connection's response order), on an EmbeddedChannel with the real pipeline and a clock the test moves.
 */
@ExtendWith(LeakDetection.class)
class SaslSessionTest {

    private static final String PLAIN_JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
            + "user_alice=\"alice-secret\" user_bob=\"bob-secret\";";
    private static final String SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;";
    private static final long MAX_REAUTH_MS = 3000;

    private final ManualClock clock = new ManualClock();
    private final PendingHeartbeats heartbeats = new PendingHeartbeats();
    private BrokerMetrics metrics;
    private LogCapture logs;
    private ClientConnection connection;
    private EmbeddedChannel channel;
    private int correlationId;

    @BeforeEach
    void setUp() {
        logs = LogCapture.start();
        channelWithMaxReauthMs(MAX_REAUTH_MS);
    }

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
        logs.close();
    }

    private void channelWithMaxReauthMs(long maxReauthMs) {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        metrics = BrokerMetrics.withClock(Clock.SYSTEM);
        RequestMemoryPool pool = new RequestMemoryPool(-1);
        connection = new ClientConnection("c", "SASL_PLAINTEXT", null);
        SaslSettings settings = new SaslSettings("SASL_PLAINTEXT", List.of("PLAIN", "SCRAM-SHA-512"),
                Map.of("PLAIN", JaasConfig.parse(PLAIN_JAAS), "SCRAM-SHA-512", JaasConfig.parse(SCRAM_JAAS)), 1024, 0,
                Map.of("PLAIN", maxReauthMs, "SCRAM-SHA-512", maxReauthMs), null);
        Map<String, ScramCredential> users = Map.of("alice", scram("alice", "alice-secret"), "bob",
                scram("bob", "bob-secret"));
        SaslServers servers = new SaslServers(settings, (user, mechanism) -> users.get(user));
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(new SaslHandshakeHandler(),
                new SaslAuthenticateHandler(), heartbeats), false);
        RequestDecoder decoder = new RequestDecoder(registry, "SASL_PLAINTEXT");
        RequestFrameDecoder frames = new RequestFrameDecoder(1 << 20, "SASL_PLAINTEXT", pool);
        DispatcherMetrics dispatcherMetrics = new DispatcherMetrics(metrics.requests(),
                metrics.socketServer().forListener("SASL_PLAINTEXT"), clock);
        SaslSession session = new SaslSession(settings, servers, Runnable::run, connection, clock,
                dispatcherMetrics.connections());
        channel = new EmbeddedChannel(frames, new ResponseEncoder(),
                new SaslServerAuthenticator(settings, decoder, connection, pool, Runnable::run, frames, 1 << 20,
                        servers, session),
                new ResponseOrderer(), new RequestDispatcher(decoder, pool, Runnable::run, "SASL_PLAINTEXT",
                        ctx -> connection, dispatcherMetrics, session));
    }

    private static ScramCredential scram(String user, String password) {
        byte[] salt = ScramMechanism.randomSalt();
        return ScramMechanism.SCRAM_SHA_512.credential(user, salt,
                ScramMechanism.SCRAM_SHA_512.saltedPassword(password, salt, 4096), 4096);
    }

    @Test
    void theSessionLifetimeIsTheMaxReauthCappedByWhatIsLeftOfTheCredential() {
        // Given
        long now = 1_000_000L;

        // When
        List<OptionalLong> lifetimes = List.of(SaslSession.sessionLifetimeMs(0, null, now),
                SaslSession.sessionLifetimeMs(-5, null, now), SaslSession.sessionLifetimeMs(3000, null, now),
                SaslSession.sessionLifetimeMs(3000, now + 1000, now), SaslSession.sessionLifetimeMs(3000, now + 9000,
                        now), SaslSession.sessionLifetimeMs(0, now + 5000, now),
                SaslSession.sessionLifetimeMs(3000, now - 10, now));

        // Then
        assertThat(lifetimes).containsExactly(OptionalLong.empty(), OptionalLong.empty(), OptionalLong.of(3000),
                OptionalLong.of(1000), OptionalLong.of(3000), OptionalLong.of(5000), OptionalLong.of(0));
    }

    @Test
    void theLastSaslAuthenticateResponseCarriesTheSessionLifetimeAndTheSessionLastsThatLong() {
        // Given
        SaslAuthenticateResponseData authenticated = authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(MAX_REAUTH_MS);

        // When
        int answered = heartbeat();

        // Then
        assertThat(authenticated.errorCode()).isZero();
        assertThat(authenticated.sessionLifetimeMs()).isEqualTo(MAX_REAUTH_MS);
        assertThat(answered).isEqualTo(correlationId);
        assertThat(channel.isActive()).isTrue();
    }

    @Test
    void aRequestAfterTheSessionExpiredClosesTheConnectionUnanswered() {
        // Given
        authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(MAX_REAUTH_MS + 1);

        // When
        send(ApiKey.HEARTBEAT, 4, new HeartbeatRequestData().setGroupId("g").setMemberId("m"));

        // Then
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(channel.isActive()).isFalse();
        assertThat(heartbeats.responses).isEmpty();
        assertThat(logs.messages(Level.INFO, m -> m.contains("its SASL session expired (connections.max.reauth.ms)")
                && m.contains("sent Heartbeat instead of re-authenticating"))).hasSize(1);
        assertThat(metrics.scrape()).contains("kafka_server_socket_server_metrics_expired_connections_killed_count"
                + "{listener=\"SASL_PLAINTEXT\"} 1.0");
    }

    @Test
    void aClientThatAuthenticatedWithV0IsNotToldTheLifetimeButExpiresAllTheSame() {
        // Given
        SaslAuthenticateResponseData authenticated = authenticatePlain("alice", "alice-secret", 0);
        clock.sleep(MAX_REAUTH_MS + 1);

        // When
        send(ApiKey.HEARTBEAT, 4, new HeartbeatRequestData().setGroupId("g").setMemberId("m"));

        // Then
        assertThat(authenticated.errorCode()).isZero();
        assertThat(authenticated.sessionLifetimeMs()).isZero();
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void withoutMaxReauthTheLifetimeIsZeroAndTheSessionNeverExpires() {
        // Given
        channelWithMaxReauthMs(0);
        SaslAuthenticateResponseData authenticated = authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(TimeUnit.DAYS.toMillis(30));

        // When
        int answered = heartbeat();

        // Then
        assertThat(authenticated.sessionLifetimeMs()).isZero();
        assertThat(answered).isEqualTo(correlationId);
        send(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        assertThat(read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData()).errorCode())
                .isEqualTo(Errors.ILLEGAL_SASL_STATE.code());
    }

    @Test
    void reauthenticatingAsTheSamePrincipalStartsANewSession() {
        // Given
        authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(2500);

        // When
        SaslAuthenticateResponseData reauthenticated = authenticatePlain("alice", "alice-secret", 2);

        // Then: the new session lasts MAX_REAUTH_MS from now, past the first one's end
        assertThat(reauthenticated.errorCode()).isZero();
        assertThat(reauthenticated.sessionLifetimeMs()).isEqualTo(MAX_REAUTH_MS);
        clock.sleep(2000);
        assertThat(heartbeat()).isEqualTo(correlationId);
        assertThat(connection.principal()).isEqualTo(new KafkaPrincipal("User", "alice"));
        assertThat(metrics.scrape()).contains("kafka_server_socket_server_metrics_successful_reauthentication_total"
                + "{listener=\"SASL_PLAINTEXT\"} 1.0");
        clock.sleep(1001);
        send(ApiKey.HEARTBEAT, 4, new HeartbeatRequestData().setGroupId("g").setMemberId("m"));
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void reauthenticatingAsAnotherPrincipalFailsWithKafkasMessageAndCloses() {
        // Given
        authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(2500);

        // When
        SaslAuthenticateResponseData refused = authenticatePlain("bob", "bob-secret", 2);

        // Then
        assertThat(refused.errorCode()).isEqualTo(Errors.SASL_AUTHENTICATION_FAILED.code());
        assertThat(refused.errorMessage())
                .isEqualTo("Cannot change principals during re-authentication from User.alice: User.bob");
        assertThat(channel.isActive()).isFalse();
        assertThat(connection.principal()).isEqualTo(new KafkaPrincipal("User", "alice"));
        assertThat(logs.messages(Level.INFO, m -> m.startsWith("Failed re-authentication"))).hasSize(1);
        assertThat(metrics.scrape()).contains(
                "kafka_server_socket_server_metrics_failed_reauthentication_total{listener=\"SASL_PLAINTEXT\"} 1.0");
    }

    @Test
    void reauthenticatingWithAnotherMechanismGetsNoAuthenticateAnswerAndCloses() {
        // Given
        authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(2500);
        send(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-512"));
        SaslHandshakeResponseData handshake = read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());

        // When
        send(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateRequestData().setAuthBytes(
                new ScramClient(ScramMechanism.SCRAM_SHA_512, "alice", "alice-secret")
                        .clientFirst()));

        // Then: Kafka's REAUTH_BAD_MECHANISM: the handshake succeeds, the exchange is refused unanswered
        assertThat(handshake.errorCode()).isZero();
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(channel.isActive()).isFalse();
        assertThat(logs.messages(Level.INFO, m -> m.contains("SASL mechanism 'SCRAM-SHA-512' requested by client "
                + "is not supported for re-authentication of mechanism 'PLAIN'"))).hasSize(1);
    }

    @Test
    void scramReauthenticationTakesTwoRoundTripsAndKeepsTheConnection() throws Exception {
        // Given
        authenticateScram("alice", "alice-secret");
        clock.sleep(2800);

        // When
        SaslAuthenticateResponseData last = authenticateScram("alice", "alice-secret");

        // Then
        assertThat(last.errorCode()).isZero();
        assertThat(last.sessionLifetimeMs()).isEqualTo(MAX_REAUTH_MS);
        clock.sleep(2000);
        assertThat(heartbeat()).isEqualTo(correlationId);
    }

    @Test
    void aSecondHandshakeWithinASecondOfTheLastReauthenticationIsIllegalSaslState() {
        // Given
        authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(500);
        authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(999);

        // When
        send(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));

        // Then
        assertThat(read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData()).errorCode())
                .isEqualTo(Errors.ILLEGAL_SASL_STATE.code());
        assertThat(channel.isActive()).isTrue();
    }

    @Test
    void aRequestOtherThanSaslAuthenticateDuringReauthenticationIsIllegalSaslStateAndCloses() {
        // Given
        authenticatePlain("alice", "alice-secret", 2);
        send(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData());

        // When
        send(ApiKey.HEARTBEAT, 4, new HeartbeatRequestData().setGroupId("g").setMemberId("m"));

        // Then
        assertThat(read(ApiKey.HEARTBEAT, 4, new HeartbeatResponseData()).errorCode())
                .isEqualTo(Errors.ILLEGAL_SASL_STATE.code());
        assertThat(heartbeats.responses).isEmpty();
        assertThat(channel.isActive()).isFalse();
    }

    @Test
    void reauthenticationResponsesFollowTheResponseOfAnEarlierRequestStillInFlight() {
        // Given: a heartbeat dispatched whose response is not ready yet (like a fetch in the purgatory)
        authenticatePlain("alice", "alice-secret", 2);
        clock.sleep(2500);
        send(ApiKey.HEARTBEAT, 4, new HeartbeatRequestData().setGroupId("g").setMemberId("m"));
        int heartbeatId = correlationId;
        send(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        send(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateRequestData().setAuthBytes(plain("alice",
                "alice-secret")));
        assertThat((Object) channel.readOutbound()).isNull();

        // When
        heartbeats.responses.get(0).complete(new HeartbeatResponseData());
        channel.runPendingTasks();

        // Then
        List<Integer> order = new ArrayList<>();
        HeartbeatResponseData heartbeat = read(ApiKey.HEARTBEAT, 4, new HeartbeatResponseData(), order);
        SaslHandshakeResponseData handshake = read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData(), order);
        SaslAuthenticateResponseData authenticated = read(ApiKey.SASL_AUTHENTICATE, 2,
                new SaslAuthenticateResponseData(), order);
        assertThat(order).containsExactly(heartbeatId, heartbeatId + 1, heartbeatId + 2);
        assertThat(heartbeat.errorCode()).isZero();
        assertThat(handshake.errorCode()).isZero();
        assertThat(authenticated.sessionLifetimeMs()).isEqualTo(MAX_REAUTH_MS);
        assertThat(channel.isActive()).isTrue();
    }

    /** Handshake v1 and one SaslAuthenticate with PLAIN; the first time this authenticates, later re-authenticates. */
    private SaslAuthenticateResponseData authenticatePlain(String user, String password, int authenticateVersion) {
        send(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
        assertThat(read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData()).errorCode()).isZero();
        send(ApiKey.SASL_AUTHENTICATE, authenticateVersion, new SaslAuthenticateRequestData().setAuthBytes(
                plain(user, password)));
        return read(ApiKey.SASL_AUTHENTICATE, authenticateVersion, new SaslAuthenticateResponseData());
    }

    private SaslAuthenticateResponseData authenticateScram(String user, String password) throws Exception {
        send(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-512"));
        assertThat(read(ApiKey.SASL_HANDSHAKE, 1, new SaslHandshakeResponseData()).errorCode()).isZero();
        ScramClient client = new ScramClient(ScramMechanism.SCRAM_SHA_512, user, password);
        send(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateRequestData().setAuthBytes(client.clientFirst()));
        SaslAuthenticateResponseData first = read(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateResponseData());
        assertThat(first.errorCode()).isZero();
        assertThat(first.sessionLifetimeMs()).isZero();
        send(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateRequestData().setAuthBytes(
                client.clientFinal(first.authBytes())));
        SaslAuthenticateResponseData last = read(ApiKey.SASL_AUTHENTICATE, 2, new SaslAuthenticateResponseData());
        if (last.errorCode() == 0) {
            client.verifyServerFinal(last.authBytes());
        }
        return last;
    }

    /** Sends a heartbeat, completes it and returns the correlation id of the response read. */
    private int heartbeat() {
        send(ApiKey.HEARTBEAT, 4, new HeartbeatRequestData().setGroupId("g").setMemberId("m"));
        heartbeats.responses.remove(0).complete(new HeartbeatResponseData());
        channel.runPendingTasks();
        List<Integer> ids = new ArrayList<>();
        read(ApiKey.HEARTBEAT, 4, new HeartbeatResponseData(), ids);
        return ids.get(0);
    }

    private static byte[] plain(String user, String password) {
        return ("\u0000" + user + "\u0000" + password).getBytes(StandardCharsets.UTF_8);
    }

    private void send(ApiKey key, int version, ApiMessage body) {
        channel.writeInbound(RequestDispatcherTest.frame(key, (short) version, ++correlationId, body));
        channel.runPendingTasks();
    }

    private <T extends ApiMessage> T read(ApiKey key, int version, T into) {
        return read(key, version, into, new ArrayList<>());
    }

    private <T extends ApiMessage> T read(ApiKey key, int version, T into, List<Integer> correlationIds) {
        ByteBuf buf = channel.readOutbound();
        assertThat(buf).as("a response to %s", key).isNotNull();
        try {
            buf.readInt();
            ByteBufAccessor in = new ByteBufAccessor(buf);
            correlationIds.add(new ResponseHeaderData(in, key.responseHeaderVersion((short) version))
                    .correlationId());
            into.read(in, (short) version);
            return into;
        } finally {
            buf.release();
        }
    }

    /** A clock the test moves. */
    private static final class ManualClock implements Time {
        private final AtomicLong nanos = new AtomicLong(TimeUnit.DAYS.toNanos(1));

        @Override
        public long milliseconds() {
            return TimeUnit.NANOSECONDS.toMillis(nanos.get());
        }

        @Override
        public long nanoseconds() {
            return nanos.get();
        }

        @Override
        public void sleep(long ms) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
        }
    }

    /** Heartbeat v4 accepted at once and answered when the test completes its response (a request in flight). */
    private static final class PendingHeartbeats
            implements TwoPhaseApiHandler<HeartbeatRequestData, HeartbeatResponseData> {

        final List<CompletableFuture<HeartbeatResponseData>> responses = new ArrayList<>();

        @Override
        public ApiKey apiKey() {
            return ApiKey.HEARTBEAT;
        }

        @Override
        public short minVersion() {
            return 4;
        }

        @Override
        public short maxVersion() {
            return 4;
        }

        @Override
        public Stages<HeartbeatResponseData> dispatch(RequestContext ctx, HeartbeatRequestData request) {
            CompletableFuture<HeartbeatResponseData> response = new CompletableFuture<>();
            responses.add(response);
            return new Stages<>(CompletableFuture.completedFuture(null), response);
        }

        @Override
        public HeartbeatResponseData errorResponse(RequestContext ctx, HeartbeatRequestData request, Errors error) {
            return new HeartbeatResponseData().setErrorCode(error.code());
        }
    }
}
