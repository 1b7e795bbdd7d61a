package io.cairn.broker;

import io.cairn.testkit.LeakDetection;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.wire.error.Errors;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.logging.log4j.Level;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Malformed input over a real socket: each case gets Kafka's answer or a closed connection with exactly one WARN
 * line and no stack trace, and the broker keeps serving other connections.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class BadInputIT {

    private static final int MAX_REQUEST_BYTES = 1024 * 1024;
    private static final long IDLE_MS = 1500;

    @TempDir
    static Path dataDir;

    private static LogCapture logs;
    private static InProcessBroker broker;

    @BeforeAll
    static void startBroker() throws Exception {
        logs = LogCapture.start();
        broker = InProcessBroker.start(dataDir, Map.of("socket.request.max.bytes", Integer.toString(MAX_REQUEST_BYTES),
                "connections.max.idle.ms", Long.toString(IDLE_MS)), List.of());
    }

    @AfterAll
    static void stopBroker() {
        broker.close();
        assertThat(logs.stackTracesAtWarnOrAbove()).isEmpty();
        logs.close();
    }

    @AfterEach
    void brokerStillServesNewConnections() throws Exception {
        try (RawConnection connection = broker.connect()) {
            connection.sendFrame(KafkaWire.apiVersionsRequest((short) 3, 1));
            assertThat(KafkaWire.apiVersionsResponse(connection.readFrame(), (short) 3).body().errorCode()).isZero();
        }
    }

    @Test
    void shouldCloseWithOneWarningWhenTheSizePrefixIsLargerThanTheMaximum() throws Exception {
        assertClosedWithOneWarning(ByteBuffer.allocate(4).putInt(MAX_REQUEST_BYTES + 1).array(),
                "invalid request size " + (MAX_REQUEST_BYTES + 1));
    }

    @Test
    void shouldCloseWithOneWarningWhenTheSizePrefixIsNegative() throws Exception {
        assertClosedWithOneWarning(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xfe, 1, 2, 3},
                "invalid request size -2 (negative");
    }

    @Test
    void shouldCloseWithOneWarningNamingTheBytesWhenAnHttpRequestArrives() throws Exception {
        assertClosedWithOneWarning("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                "'GET '");
    }

    @Test
    void shouldCloseWithOneWarningWhenATlsClientHelloArrives() throws Exception {
        byte[] clientHello = new byte[64];
        clientHello[0] = 0x16;
        clientHello[1] = 0x03;
        clientHello[2] = 0x01;
        clientHello[3] = 0x02;
        assertClosedWithOneWarning(clientHello, "0x16030102");
    }

    @Test
    void shouldCloseWithOneWarningOnGarbageBytes() throws Exception {
        byte[] garbage = new byte[20];
        Arrays.fill(garbage, (byte) 0x7f);
        ByteBuffer frame = ByteBuffer.allocate(24).putInt(20).put(garbage);
        assertClosedWithOneWarning(frame.array(), "unknown api key 32639");
    }

    @Test
    void shouldCloseWithOneWarningOnAnUnknownApiKey() throws Exception {
        ByteBuffer payload = KafkaWire.apiVersionsRequest((short) 3, 1);
        payload.putShort(0, (short) 9999);
        assertClosedWithOneWarning(RawConnection.frame(payload), "unknown api key 9999");
    }

    @Test
    void shouldCloseWithOneWarningOnAnApiTheListenerDoesNotServe() throws Exception {
        ByteBuffer payload = KafkaWire.apiVersionsRequest((short) 3, 1);
        // Vote is a controller API: a broker listener never serves it.
        payload.putShort(0, (short) 52);
        assertClosedWithOneWarning(RawConnection.frame(payload), "api Vote (key 52, version 3) is not served");
    }

    @Test
    void shouldAnswerAFlexibleVersionOfAServedApiWithAFlexibleResponseHeader() throws Exception {
        // Given
        try (RawConnection connection = broker.connect()) {
            // When
            connection.sendFrame(KafkaWire.heartbeatRequest((short) 4, 77));

            // Then
            KafkaWire.Decoded<HeartbeatResponseData> response = KafkaWire.heartbeatResponse(connection.readFrame(),
                    (short) 4);
            assertThat(response.correlationId()).isEqualTo(77);
            // No __consumer_offsets yet: no broker coordinates the group, as Kafka answers.
            assertThat(response.body().errorCode()).isEqualTo(Errors.NOT_COORDINATOR.code());
            assertThat(response.trailingBytes()).isZero();
        }
    }

    @Test
    void shouldCloseWithOneWarningOnAnUnsupportedVersionOfAnApiOtherThanApiVersions() throws Exception {
        ByteBuffer payload = KafkaWire.heartbeatRequest((short) 4, 1);
        payload.putShort(2, (short) 5);
        assertClosedWithOneWarning(RawConnection.frame(payload),
                "unsupported version 5 of api Heartbeat (key 12; served versions 0-4)");
    }

    @Test
    void shouldCloseWithOneWarningOnATruncatedBody() throws Exception {
        ByteBuffer payload = KafkaWire.apiVersionsRequest((short) 3, 1);
        payload.limit(payload.limit() - 3);
        assertClosedWithOneWarning(RawConnection.frame(payload), "cannot decode ApiVersions v3 request");
    }

    @Test
    void shouldCloseWithOneWarningOnATruncatedHeader() throws Exception {
        assertClosedWithOneWarning(new byte[] {0, 0, 0, 6, 0, 18, 0, 3, 0, 0}, "cannot decode the request header");
    }

    @Test
    void shouldCloseWithOneWarningOnAFrameTooShortForAHeader() throws Exception {
        assertClosedWithOneWarning(new byte[] {0, 0, 0, 2, 0, 18}, "too short for a request header");
    }

    @Test
    void shouldWaitForTheBodyOfAPrefixWithoutBodyAndStaySilentWhenTheClientLeaves() throws Exception {
        // Given
        int port;
        int mark = logs.mark();
        try (RawConnection connection = broker.connect()) {
            port = connection.localPort();

            // When
            connection.send(new byte[] {0, 0, 0, 100, 0, 18});
            connection.shutdownOutput();
        }

        // Then
        assertThat(logs.warningsSince(mark, ":" + port + " ")).isEmpty();
    }

    @Test
    void shouldCloseAnIdleConnectionWithAPrefixButNoBodyWithoutWarning() throws Exception {
        // Given
        int mark = logs.mark();
        try (RawConnection connection = broker.connect()) {
            int port = connection.localPort();

            // When
            connection.send(new byte[] {0, 0, 0, 100});

            // Then
            await().atMost(Duration.ofSeconds(20)).until(connection::closedByServer);
            assertThat(logs.warningsSince(mark, ":" + port)).isEmpty();
        }
    }

    @Test
    void shouldAnswerOrCloseEveryMutatedFrameWithAtMostOneWarningAndNoError() throws Exception {
        // Given
        long seed = System.nanoTime();
        Random random = new Random(seed);
        int answered = 0;
        int closed = 0;
        for (int i = 0; i < 300; i++) {
            ByteBuffer valid = random.nextBoolean()
                    ? KafkaWire.apiVersionsRequest((short) random.nextInt(5), i)
                    : KafkaWire.heartbeatRequest((short) (3 + random.nextInt(2)), i);
            byte[] payload = new byte[valid.remaining()];
            valid.get(payload);
            for (int flips = 1 + random.nextInt(4); flips > 0; flips--) {
                payload[random.nextInt(payload.length)] = (byte) random.nextInt(256);
            }
            if (random.nextInt(4) == 0) {
                payload = Arrays.copyOf(payload, random.nextInt(payload.length));
            }
            int mark = logs.mark();
            try (RawConnection connection = broker.connect()) {
                int port = connection.localPort();

                // When
                connection.sendFrame(ByteBuffer.wrap(payload));

                // Then
                if (connection.closedByServer()) {
                    closed++;
                    awaitLog().untilAsserted(() -> assertThat(logs.warningsSince(mark, ":" + port + " ")).as("seed %d", seed)
                            .hasSize(1));
                } else {
                    answered++;
                    assertThat(logs.warningsSince(mark, ":" + port + " ")).as("seed %d", seed).isEmpty();
                }
            }
        }
        assertThat(logs.messages(Level.ERROR, m -> true)).as("seed %d", seed).isEmpty();
        assertThat(answered + closed).isEqualTo(300);
    }

    /** The WARN is logged before the close the client sees, so the first check almost always passes. */
    private static ConditionFactory awaitLog() {
        return await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(5)).atMost(Duration.ofSeconds(5));
    }

    private static void assertClosedWithOneWarning(byte[] bytes, String expectedReason) throws Exception {
        // Given
        int mark = logs.mark();
        try (RawConnection connection = broker.connect()) {
            int port = connection.localPort();

            // When
            connection.send(bytes);

            // Then
            assertThat(connection.closedByServer()).as("connection closed by the broker").isTrue();
            awaitLog()
                    .untilAsserted(() -> assertThat(logs.warningsSince(mark, ":" + port + " ")).hasSize(1));
            assertThat(logs.warningsSince(mark, ":" + port + " ")).singleElement().asString().contains(expectedReason);
        }
    }
}
