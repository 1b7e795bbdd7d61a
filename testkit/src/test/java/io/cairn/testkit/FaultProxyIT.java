package io.cairn.testkit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(60)
class FaultProxyIT {

    /** How long a read waits to show that nothing arrives through a partitioned proxy. */
    private static final int SILENCE_MILLIS = 300;

    private ServerSocket echo;
    private FaultProxy proxy;

    @BeforeEach
    void startEchoServerBehindAProxy() throws IOException {
        echo = new ServerSocket();
        echo.bind(new InetSocketAddress(InetAddress.getByName(FreePorts.LOOPBACK), 0));
        Thread acceptor = new Thread(this::echoLoop, "echo");
        acceptor.setDaemon(true);
        acceptor.start();
        proxy = FaultProxy.start(0, FreePorts.LOOPBACK, echo.getLocalPort());
    }

    @AfterEach
    void close() throws IOException {
        proxy.close();
        echo.close();
    }

    @Test
    void bytesFlowBothWaysUntilPartitionedAndTheHeldOnesArriveOnHeal() throws IOException {
        try (Socket client = connect()) {
            // Given
            assertThat(roundTrip(client, 'a')).isEqualTo('a');

            // When
            proxy.partition();
            client.getOutputStream().write('b');

            // Then
            assertThat(proxy.isPartitioned()).isTrue();
            assertThatThrownBy(() -> client.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);

            // When
            proxy.heal();

            // Then
            client.setSoTimeout(10_000);
            assertThat(client.getInputStream().read()).isEqualTo('b');
            assertThat(roundTrip(client, 'c')).isEqualTo('c');
        }
    }

    @Test
    void aConnectionOpenedDuringThePartitionIsAcceptedAndStalledUntilHeal() throws IOException {
        // Given
        proxy.partition();

        // When
        try (Socket client = connect()) {
            client.getOutputStream().write('x');

            // Then
            assertThatThrownBy(() -> client.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            proxy.heal();
            client.setSoTimeout(10_000);
            assertThat(client.getInputStream().read()).isEqualTo('x');
        }
    }

    @Test
    void aPartitionOfSomeClientProcessesStallsOnlyTheirConnections() throws IOException {
        long self = ProcessHandle.current().pid();
        try (Socket client = connect()) {
            assertThat(roundTrip(client, 'a')).isEqualTo('a');

            // When another process's connections are cut, this one's flow
            proxy.partitionFrom(pid -> pid != self);

            // Then
            assertThat(roundTrip(client, 'b')).isEqualTo('b');

            // When this process's connections are cut (it was found as their owner)
            proxy.partitionFrom(pid -> pid == self);
            client.getOutputStream().write('c');

            // Then
            assertThatThrownBy(() -> client.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
            proxy.heal();
            client.setSoTimeout(10_000);
            assertThat(client.getInputStream().read()).isEqualTo('c');
        }
    }

    @Test
    void theClientProcessOfALoopbackConnectionIsFound() throws IOException {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getByName(FreePorts.LOOPBACK));
             Socket client = new Socket(FreePorts.LOOPBACK, server.getLocalPort());
             Socket accepted = server.accept()) {
            assertThat(SocketOwners.ownerOf(accepted.getPort(), server.getLocalPort()))
                    .hasValue(ProcessHandle.current().pid());
            assertThat(SocketOwners.ownerOf(client.getLocalPort(), server.getLocalPort() == 1 ? 2 : 1)).isEmpty();
        }
    }

    private Socket connect() throws IOException {
        Socket client = new Socket(FreePorts.LOOPBACK, proxy.port());
        client.setSoTimeout(SILENCE_MILLIS);
        return client;
    }

    private static int roundTrip(Socket client, char value) throws IOException {
        int timeout = client.getSoTimeout();
        client.setSoTimeout(10_000);
        client.getOutputStream().write(value);
        int read = client.getInputStream().read();
        client.setSoTimeout(timeout);
        return read;
    }

    private void echoLoop() {
        while (!echo.isClosed()) {
            try {
                Socket socket = echo.accept();
                Thread thread = new Thread(() -> echoOne(socket), "echo-connection");
                thread.setDaemon(true);
                thread.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private static void echoOne(Socket socket) {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            int b;
            while ((b = in.read()) >= 0) {
                out.write(b);
                out.flush();
            }
        } catch (IOException e) {
            // The test closed its side.
        }
    }
}
