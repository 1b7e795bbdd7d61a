package io.cairn.isr.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.SocketFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockingChannel#close} from another thread against a leader that accepts connections and never answers (a
 * plain {@link ServerSocket}): whenever the close comes, the connect and its TLS handshake give up at once instead of
 * waiting for {@code replica.socket.timeout.ms}.
 */
class BlockingChannelTest {

    /** Far above what a prompt close takes, so that a wait for the timeout cannot pass for promptness. */
    private static final int SOCKET_TIMEOUT_MS = 20_000;
    private static final long PROMPT_MS = 5_000;

    private ServerSocket leader;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private Thread acceptor;

    @BeforeEach
    void startLeader() throws IOException {
        leader = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            try {
                while (true) {
                    accepted.add(leader.accept());
                }
            } catch (IOException e) {
                // closed by the test
            }
        }, "unanswering-leader");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stopLeader() throws Exception {
        leader.close();
        for (Socket socket : accepted) {
            socket.close();
        }
        acceptor.join(5_000);
    }

    /** A real TLS client handshake: sends its ClientHello and waits for a ServerHello that never comes. */
    private static ClientTls tls() throws Exception {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, null, null);
        return (socket, host, port) -> {
            SSLSocket secured = (SSLSocket) context.getSocketFactory().createSocket(socket, host, port, true);
            secured.setUseClientMode(true);
            secured.startHandshake();
            return secured;
        };
    }

    private BlockingChannel channel(ClientTls tls, SocketFactory sockets) {
        return new BlockingChannel("127.0.0.1", leader.getLocalPort(), "test", SOCKET_TIMEOUT_MS, -1, 1 << 20, tls,
            sockets, io.cairn.log.Time.SYSTEM);
    }

    @Test
    void aCloseJustAfterConnectCheckedItAbortsTheConnectAtOnce() throws Exception {
        // Given: the close runs on another thread after connect() found the channel open but before it published
        // the socket it connects (the factory runs in exactly that window, and waits for the close to end)
        AtomicReference<BlockingChannel> channel = new AtomicReference<>();
        SocketFactory closingFirst = new SocketFactory() {
            @Override
            public Socket createSocket() throws IOException {
                Thread closer = new Thread(() -> channel.get().close(), "closer");
                closer.start();
                try {
                    closer.join();
                } catch (InterruptedException e) {
                    throw new IOException(e);
                }
                return new Socket();
            }

            // BlockingChannel only calls createSocket() (then connects with its own timeout); the abstract
            // overloads below are never reached, and fail loudly if that ever changes.
            @Override
            public Socket createSocket(String host, int port) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Socket createSocket(String host, int port, InetAddress localHost, int localPort) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Socket createSocket(InetAddress host, int port) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) {
                throw new UnsupportedOperationException();
            }
        };
        channel.set(channel(tls(), closingFirst));

        // When
        long start = System.nanoTime();
        assertThatThrownBy(() -> channel.get().connect()).isInstanceOf(IOException.class);
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        // Then: no wait for the TLS handshake's timeout, and the channel stays closed
        assertThat(tookMs).isLessThan(PROMPT_MS);
        assertThat(channel.get().isConnected()).isFalse();
        assertThatThrownBy(() -> channel.get().connect()).isInstanceOf(IOException.class).hasMessage("closed");
    }

    @Test
    void aCloseDuringTheTlsHandshakeFailsItAtOnce() throws Exception {
        // Given: a connect whose handshake waits for the leader's answer
        BlockingChannel channel = channel(tls(), SocketFactory.getDefault());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread connector = new Thread(() -> {
            try {
                channel.connect();
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "connector");
        connector.start();
        await().atMost(Duration.ofMillis(PROMPT_MS)).pollInterval(Duration.ofMillis(10))
                .untilAsserted(() -> assertThat(accepted).hasSize(1));
        // the handshake is still waiting a while later (time, not polling, is awaited here)
        Thread.sleep(200);
        assertThat(connector.isAlive()).isTrue();

        // When
        long start = System.nanoTime();
        channel.close();
        connector.join(PROMPT_MS);

        // Then
        assertThat(connector.isAlive()).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(PROMPT_MS);
        assertThat(failure.get()).isInstanceOf(IOException.class);
        assertThat(channel.isConnected()).isFalse();
    }
}
