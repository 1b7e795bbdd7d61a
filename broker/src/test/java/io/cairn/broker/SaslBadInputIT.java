package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.LeakDetection;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input before SASL authentication completes, on a SASL_PLAINTEXT listener with PLAIN and SCRAM-SHA-256: seeded
 * random and crafted SaslAuthenticate tokens (garbage, PLAIN tokens with too many or too few NULs, a username near the
 * receive bound, SCRAM client-first messages with a bad GS2 header, an authorization id, a huge nonce, odd
 * attributes) and mutated SaslHandshake frames. Each connection is answered with an error and closed, or closed, with
 * no ERROR line, no stack trace at WARN or above and no leaked buffer; a frame above
 * {@code sasl.server.max.receive.size} is closed unread; and a good PLAIN login still succeeds after each case.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SaslBadInputIT {

    private static final int MAX_RECEIVE = 64 * 1024;
    private static final String LISTENER = "SASL_PLAINTEXT";
    private static final short HANDSHAKE_VERSION = 1;
    private static final short AUTHENTICATE_VERSION = 2;
    private static final short SASL_AUTHENTICATION_FAILED = 58;
    private static final short ILLEGAL_SASL_STATE = 34;
    private static final short UNSUPPORTED_SASL_MECHANISM = 33;

    @TempDir
    static Path dataDir;

    private static LogCapture logs;
    private static InProcessBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        logs = LogCapture.start();
        broker = InProcessBroker.start(dataDir, Map.of(
                "listeners", "PLAINTEXT://:0," + LISTENER + "://:0",
                "listener.security.protocol.map", "PLAINTEXT:PLAINTEXT," + LISTENER + ":" + LISTENER,
                "sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";",
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                "sasl.server.max.receive.size", Integer.toString(MAX_RECEIVE),
                // no delay before the close of a failed authentication: the cases would wait 100 ms each
                "connection.failed.authentication.delay.ms", "0"));
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
        assertThat(logs.stackTracesAtWarnOrAbove()).isEmpty();
        assertThat(logs.messages(Level.ERROR, m -> true)).isEmpty();
        logs.close();
    }

    @AfterEach
    void aGoodPlainLoginStillSucceeds() throws Exception {
        try (RawConnection connection = connect()) {
            assertThat(handshake(connection, "PLAIN", 1)).isZero();
            SaslAuthenticateResponseData response = authenticate(connection,
                    "\0alice\0alice-secret".getBytes(StandardCharsets.UTF_8), 2);
            assertThat(response.errorCode()).isZero();
        }
    }

    @Test
    void hostilePlainTokensAreRefusedOrClosed() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int i = 0; i < 100; i++) {
            byte[] token = switch (i % 5) {
                case 0 -> randomBytes(random, random.nextInt(2_000));
                case 1 -> "\0\0\0alice\0\0alice-secret\0".getBytes(StandardCharsets.UTF_8);
                case 2 -> ("bob\0alice\0alice-secret").getBytes(StandardCharsets.UTF_8);
                case 3 -> ("\0" + "a".repeat(MAX_RECEIVE - 200) + "\0x").getBytes(StandardCharsets.UTF_8);
                default -> new byte[0];
            };
            assertRefused(seed, "PLAIN", token);
        }
    }

    @Test
    void hostileScramClientFirstMessagesAreRefusedOrClosed() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        String[] crafted = {
            "x,,n=alice,r=abc",
            "n,a=bob,n=alice,r=abc",
            "n,,n=,r=",
            "n,,r=abc,n=alice",
            "n,,n=alice,r=" + "N".repeat(MAX_RECEIVE - 200),
            "n,,n=al=2Xce,r=abc",
            "n,,n=alice,r=abc,m=mandatory-extension",
            "n,,n=alice,r=abc,tokenauth=true",
            "n,,n=" + "u".repeat(30_000) + ",r=abc",
            "p=tls-unique,,n=alice,r=abc",
        };
        for (int i = 0; i < 100; i++) {
            byte[] token = i < crafted.length ? crafted[i].getBytes(StandardCharsets.UTF_8)
                    : mutate(random, crafted[random.nextInt(crafted.length)].getBytes(StandardCharsets.UTF_8));
            assertRefused(seed, "SCRAM-SHA-256", token);
        }
    }

    @Test
    void mutatedHandshakesAreAnsweredOrClosedWithoutErrors() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int i = 0; i < 100; i++) {
            byte[] frame = bytes(handshakeRequest(random.nextBoolean() ? "PLAIN" : "SCRAM-SHA-256", i));
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                frame[random.nextInt(frame.length)] = (byte) random.nextInt(256);
            }
            try (RawConnection connection = connect()) {
                connection.sendFrame(ByteBuffer.wrap(frame));
                // Answered (a handshake still valid, or an error before the close) or closed; what counts is that
                // nothing is logged at ERROR nor with a stack trace (checked at the end) and the broker goes on.
                connection.closedByServer();
            }
        }
    }

    @Test
    void aProduceRequestDuringTheExchangeIsRefusedAndItsRecordsReleased() throws Exception {
        for (int i = 0; i < 20; i++) {
            try (RawConnection connection = connect()) {
                assertThat(handshake(connection, "PLAIN", 1)).isZero();
                connection.sendFrame(produceRequest(2));
                // ILLEGAL_SASL_STATE then a close, or a close; LeakDetection fails the test if the records leak
                ByteBuffer answer;
                try {
                    answer = connection.readFrame();
                } catch (IOException closed) {
                    continue;
                }
                assertThat(answer.remaining()).isPositive();
                assertThat(connection.closedByServer()).isTrue();
            }
        }
    }

    @Test
    void aTokenAboveTheReceiveBoundIsClosedUnread() throws Exception {
        try (RawConnection connection = connect()) {
            assertThat(handshake(connection, "PLAIN", 1)).isZero();
            connection.sendFrame(authenticateRequest(new byte[MAX_RECEIVE + 1], 2));
            assertThat(connection.closedByServer()).isTrue();
        }
    }

    /**
     * After a good handshake for {@code mechanism}, {@code token} fails: an error answer then a close, or a close. A
     * SCRAM first message the server takes (an unknown user still gets a server-first message, as in Kafka) is
     * followed by a forged final message, which must fail so.
     */
    private static void assertRefused(long seed, String mechanism, byte[] token) throws IOException {
        try (RawConnection connection = connect()) {
            assertThat(handshake(connection, mechanism, 1)).isZero();
            SaslAuthenticateResponseData response = authenticateOrClosed(connection, token, 2);
            if (response != null && response.errorCode() == 0 && mechanism.startsWith("SCRAM")) {
                response = authenticateOrClosed(connection, "c=biws,r=abc,p=AAAA".getBytes(StandardCharsets.UTF_8),
                        3);
            }
            if (response == null) {
                return;
            }
            assertThat(response.errorCode()).as("seed %d, %s token of %d bytes", seed, mechanism, token.length)
                    .isIn(SASL_AUTHENTICATION_FAILED, ILLEGAL_SASL_STATE, UNSUPPORTED_SASL_MECHANISM);
            assertThat(connection.closedByServer()).as("seed %d: closed after the failure", seed).isTrue();
        }
    }

    /** The answer to {@code token}, or null when the broker closed the connection instead. */
    private static SaslAuthenticateResponseData authenticateOrClosed(RawConnection connection, byte[] token,
                                                                     int correlationId) throws IOException {
        try {
            return authenticate(connection, token, correlationId);
        } catch (IOException closed) {
            return null;
        }
    }

    private static RawConnection connect() throws IOException {
        return new RawConnection("127.0.0.1", broker.boundPort(LISTENER));
    }

    private static short handshake(RawConnection connection, String mechanism, int correlationId)
            throws IOException {
        connection.sendFrame(handshakeRequest(mechanism, correlationId));
        ByteBuffer answer = connection.readFrame();
        ResponseHeader.parse(answer, ApiKeys.SASL_HANDSHAKE.responseHeaderVersion(HANDSHAKE_VERSION));
        return new SaslHandshakeResponseData(new ByteBufferAccessor(answer), HANDSHAKE_VERSION).errorCode();
    }

    private static SaslAuthenticateResponseData authenticate(RawConnection connection, byte[] token,
                                                             int correlationId) throws IOException {
        connection.sendFrame(authenticateRequest(token, correlationId));
        ByteBuffer answer = connection.readFrame();
        ResponseHeader.parse(answer, ApiKeys.SASL_AUTHENTICATE.responseHeaderVersion(AUTHENTICATE_VERSION));
        return new SaslAuthenticateResponseData(new ByteBufferAccessor(answer), AUTHENTICATE_VERSION);
    }

    private static ByteBuffer handshakeRequest(String mechanism, int correlationId) {
        return new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism(mechanism))
                .build(HANDSHAKE_VERSION).serializeWithHeader(new RequestHeader(ApiKeys.SASL_HANDSHAKE,
                        HANDSHAKE_VERSION, KafkaWire.CLIENT_ID, correlationId));
    }

    private static ByteBuffer authenticateRequest(byte[] token, int correlationId) {
        return new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData().setAuthBytes(token))
                .build(AUTHENTICATE_VERSION).serializeWithHeader(new RequestHeader(ApiKeys.SASL_AUTHENTICATE,
                        AUTHENTICATE_VERSION, KafkaWire.CLIENT_ID, correlationId));
    }

    private static ByteBuffer produceRequest(int correlationId) {
        ProduceRequestData data = new ProduceRequestData().setAcks((short) 1).setTimeoutMs(1000);
        ProduceRequestData.TopicProduceData topic = new ProduceRequestData.TopicProduceData().setName("t");
        topic.partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(
                MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("v".repeat(1000).getBytes(
                        StandardCharsets.UTF_8)))));
        data.topicData().add(topic);
        short version = 9;
        return new ProduceRequest.Builder(version, version, data).build(version).serializeWithHeader(
                new RequestHeader(ApiKeys.PRODUCE, version, KafkaWire.CLIENT_ID, correlationId));
    }

    private static byte[] randomBytes(Random random, int length) {
        byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    private static byte[] mutate(Random random, byte[] token) {
        byte[] copy = Arrays.copyOf(token, token.length);
        for (int flips = 1 + random.nextInt(4); flips > 0 && copy.length > 0; flips--) {
            copy[random.nextInt(copy.length)] = (byte) random.nextInt(256);
        }
        return random.nextInt(4) == 0 ? Arrays.copyOf(copy, random.nextInt(copy.length + 1)) : copy;
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }
}
