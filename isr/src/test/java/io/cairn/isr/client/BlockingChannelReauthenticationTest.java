package io.cairn.isr.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.Time;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.SocketFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * KIP-368 on the inter-broker client: a {@link BlockingChannel} whose connection was granted a SASL session
 * re-authenticates before the first request sent after 85 % of it (and always by 95 %), and never when the session
 * does not expire. A leader thread answers every request with an empty ApiVersions v0 response; the clock is the
 * test's.
 */
class BlockingChannelReauthenticationTest {

    private static final long LIFETIME_MS = 1000;

    private final ManualTime time = new ManualTime();
    private ServerSocket leader;
    private Thread answering;

    @BeforeEach
    void startLeader() throws IOException {
        leader = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        answering = new Thread(this::answerEveryRequest, "answering-leader");
        answering.setDaemon(true);
        answering.start();
    }

    @AfterEach
    void stopLeader() throws Exception {
        leader.close();
        answering.join(5_000);
    }

    /** Reads request frames and answers each with ApiVersions v0 (error 0, no APIs) under its correlation id. */
    private void answerEveryRequest() {
        try (Socket socket = leader.accept()) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                int correlationId = ByteBuffer.wrap(frame).getInt(4);
                out.writeInt(10);
                out.writeInt(correlationId);
                out.writeShort(0);
                out.writeInt(0);
                out.flush();
            }
        } catch (IOException e) {
            // the client or the test closed the connection
        }
    }

    @Test
    void reauthenticatesBeforeTheRequestAfter85To95PercentOfTheSession() throws Exception {
        // Given
        CountingSasl sasl = new CountingSasl(LIFETIME_MS);
        try (BlockingChannel channel = channel(sasl)) {
            send(channel);
            time.sleep(849);
            send(channel);
            int beforeDue = sasl.reauthentications.get();

            // When: 95 % of the session has passed
            time.sleep(101);
            send(channel);

            // Then: one re-authentication, and the next session is counted from it
            assertThat(beforeDue).isZero();
            assertThat(sasl.reauthentications.get()).isEqualTo(1);
            time.sleep(849);
            send(channel);
            assertThat(sasl.reauthentications.get()).isEqualTo(1);
            time.sleep(101);
            send(channel);
            assertThat(sasl.reauthentications.get()).isEqualTo(2);
        }
    }

    @Test
    void aSessionWithoutALifetimeIsNeverReauthenticated() throws Exception {
        // Given
        CountingSasl sasl = new CountingSasl(0);
        try (BlockingChannel channel = channel(sasl)) {
            send(channel);

            // When
            time.sleep(TimeUnit.DAYS.toMillis(30));
            send(channel);

            // Then
            assertThat(sasl.reauthentications.get()).isZero();
        }
    }

    @Test
    void theSessionReauthenticatesWithWhatAuthenticatedIt() throws Exception {
        // Given: a ClientTls whose connections are re-authenticated by what secured them (the credentials then)
        CountingSasl then = new CountingSasl(LIFETIME_MS);
        CountingSasl now = new CountingSasl(LIFETIME_MS) {
            @Override
            public Secured secureSession(Socket socket, String host, int port) {
                return new Secured(socket, LIFETIME_MS, then);
            }
        };
        try (BlockingChannel channel = channel(now)) {
            send(channel);

            // When: the session is due
            time.sleep(LIFETIME_MS);
            send(channel);
        }

        // Then
        assertThat(then.reauthentications).hasValue(1);
        assertThat(now.reauthentications).hasValue(0);
    }

    private BlockingChannel channel(ClientTls tls) {
        return new BlockingChannel("127.0.0.1", leader.getLocalPort(), "test", 10_000, -1, 1 << 20, tls,
            SocketFactory.getDefault(), time);
    }

    private static void send(BlockingChannel channel) throws IOException {
        ApiVersionsResponseData response = channel.send(new ApiVersionsRequestData(), (short) 0);
        assertThat(response.errorCode()).isZero();
    }

    /** A SASL stand-in: the socket as it is, a session of {@code lifetimeMs}, re-authentications counted. */
    private static class CountingSasl implements ClientTls {

        final AtomicInteger reauthentications = new AtomicInteger();
        private final long lifetimeMs;

        CountingSasl(long lifetimeMs) {
            this.lifetimeMs = lifetimeMs;
        }

        @Override
        public Socket secure(Socket socket, String host, int port) {
            return socket;
        }

        @Override
        public Secured secureSession(Socket socket, String host, int port) {
            return new Secured(socket, lifetimeMs);
        }

        @Override
        public long reauthenticate(DataInputStream in, OutputStream out, String host, int port) {
            reauthentications.incrementAndGet();
            return lifetimeMs;
        }
    }

    /** A clock the test moves. */
    private static final class ManualTime implements Time {

        private final AtomicLong nanos = new AtomicLong(TimeUnit.HOURS.toNanos(1));

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
}
