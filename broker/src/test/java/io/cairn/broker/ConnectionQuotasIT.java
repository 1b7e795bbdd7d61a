package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kafka's connection limits on a real broker, from {@code server.properties} and changed live by kafka-configs:
 * {@code max.connections.per.ip.overrides} closes a client address's surplus connection at once, a listener's
 * {@code max.connections} holds a new connection unanswered until another closes, and a dynamic value holds across a
 * restart. The clients under test connect from 127.0.0.2 (still loopback), so the admin client's own connections
 * from 127.0.0.1 do not count against them.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ConnectionQuotasIT {

    private static final String CLIENT_ADDRESS = "127.0.0.2";
    private static final short API_VERSIONS_VERSION = 3;

    @TempDir
    Path dataDir;

    @Test
    void aClientAddressOverItsLimitIsClosedAndTheLimitChangesLiveAndHoldsAcrossARestart() throws Exception {
        // Given: at most 2 connections from 127.0.0.2
        Map<String, String> props = Map.of("max.connections.per.ip.overrides", CLIENT_ADDRESS + ":2");
        InProcessBroker first = InProcessBroker.start(dataDir, props);
        int port = first.port();
        List<Client> clients = new ArrayList<>();
        try {
            clients.add(Client.connect(port));
            clients.add(Client.connect(port));
            try (Client third = Client.connect(port)) {
                // Then: the two are served, the third is closed unanswered
                assertThat(clients).allSatisfy(c -> assertThat(c.answersApiVersions()).isTrue());
                assertThat(third.closedByServer()).isTrue();
            }

            // When: kafka-configs --alter --entity-type brokers --entity-name 1 raises it to 3
            try (Admin admin = admin(port)) {
                alter(admin, "1", "max.connections.per.ip.overrides", CLIENT_ADDRESS + ":3");
            }

            // Then: a third connection is served
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                try (Client third = Client.connect(port)) {
                    assertThat(third.answersApiVersions()).isTrue();
                }
            });
        } finally {
            closeAll(clients);
            first.close();
        }

        // When: the broker restarts from the same server.properties (a limit of 2)
        InProcessBroker broker = InProcessBroker.start(dataDir, props);
        try {
            for (int i = 0; i < 3; i++) {
                clients.add(Client.connect(broker.port()));
            }
            try (Client fourth = Client.connect(broker.port())) {
                // Then: the dynamic 3 holds
                assertThat(clients).allSatisfy(c -> assertThat(c.answersApiVersions()).isTrue());
                assertThat(fourth.closedByServer()).isTrue();
            }
        } finally {
            closeAll(clients);
            broker.close();
        }
    }

    @Test
    void aListenerAtItsLimitHoldsANewConnectionUntilOneCloses() throws Exception {
        // Given: a second listener with at most 2 connections
        Map<String, String> props = new HashMap<>();
        props.put("listeners", "PLAINTEXT://:0,EXTERNAL://:0");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("listener.name.external.max.connections", "2");
        List<Client> clients = new ArrayList<>();
        try (InProcessBroker broker = InProcessBroker.start(dataDir, props); Admin admin = admin(broker.port())) {
            int external = broker.boundPort("EXTERNAL");
            clients.add(Client.connect(external));
            clients.add(Client.connect(external));
            assertThat(clients).allSatisfy(c -> assertThat(c.answersApiVersions()).isTrue());

            // When: a third connects
            Client third = Client.connect(external);
            clients.add(third);
            third.sendApiVersions(7);

            // Then: it waits unanswered, as Kafka's blocked acceptor leaves it, until one of the two closes
            assertThat(third.answered(Duration.ofSeconds(2))).isFalse();
            clients.remove(0).close();
            assertThat(third.answered(Duration.ofSeconds(10))).isTrue();

            // When: the limit is refused at 0, then raised live cluster-wide to 3
            ExecutionException refused = assertThrows(ExecutionException.class, () ->
                    alter(admin, "1", "listener.name.external.max.connections", "0"));
            alter(admin, "", "listener.name.external.max.connections", "3");

            // Then: Kafka's refusal; and a third connection beside the two is served
            assertThat(refused.getCause()).isInstanceOf(InvalidRequestException.class).hasMessage("Invalid value "
                    + "org.apache.kafka.common.config.ConfigException: Invalid max.connections 0 for configuration "
                    + "Invalid dynamic configuration");
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                try (Client another = Client.connect(external)) {
                    assertThat(another.answersApiVersions()).isTrue();
                }
            });
        } finally {
            closeAll(clients);
        }
    }

    @Test
    void limitsKafkaRefusesAreRefused() throws Exception {
        try (InProcessBroker broker = InProcessBroker.start(dataDir, Map.of()); Admin admin = admin(broker.port())) {
            ExecutionException zero = assertThrows(ExecutionException.class, () ->
                    alter(admin, "1", "max.connections.per.ip", "0"));
            ExecutionException badHost = assertThrows(ExecutionException.class, () ->
                    alter(admin, "", "max.connections.per.ip.overrides", "bad host!:3"));

            assertThat(zero.getCause()).isInstanceOf(InvalidRequestException.class).hasMessage("requirement "
                    + "failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides "
                    + "property is set.");
            assertThat(badHost.getCause()).isInstanceOf(InvalidRequestException.class).hasMessage(
                    "max.connections.per.ip.overrides contains invalid addresses : bad host!");
        }
    }

    @Test
    void aListenerOverItsConnectionCreationRateAcceptsLaterAndBadRatesAreRefused() throws Exception {
        // Given: a second listener that accepts 2 connections per second, measured over 2 samples of 1 s
        Map<String, String> props = new HashMap<>();
        props.put("listeners", "PLAINTEXT://:0,EXTERNAL://:0");
        props.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT");
        props.put("listener.name.external.max.connection.creation.rate", "2");
        props.put("quota.window.num", "2");
        List<Client> clients = new ArrayList<>();
        try (InProcessBroker broker = InProcessBroker.start(dataDir, props); Admin admin = admin(broker.port())) {
            int external = broker.boundPort("EXTERNAL");

            // When: three connect at once and ask ApiVersions
            long start = System.nanoTime();
            for (int i = 0; i < 3; i++) {
                Client client = Client.connect(external);
                clients.add(client);
                client.sendApiVersions(i);
            }
            boolean firstTwo = clients.get(0).answered(Duration.ofSeconds(10))
                    && clients.get(1).answered(Duration.ofSeconds(10));
            boolean third = clients.get(2).answered(Duration.ofSeconds(10));
            long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            // Then: all are served, the third only once the listener's throttle ((3 - 2) / 2 × 1 s) is over
            assertThat(firstTwo).isTrue();
            assertThat(third).isTrue();
            assertThat(elapsedMs).isGreaterThanOrEqualTo(400);

            // When: Kafka's refusals of rates below 1 for a listener and below 0 for the broker
            ExecutionException zero = assertThrows(ExecutionException.class, () ->
                    alter(admin, "1", "listener.name.external.max.connection.creation.rate", "0"));
            ExecutionException negative = assertThrows(ExecutionException.class, () ->
                    alter(admin, "", "max.connection.creation.rate", "-1"));

            // Then
            assertThat(zero.getCause()).isInstanceOf(InvalidRequestException.class).hasMessage("Invalid value "
                    + "org.apache.kafka.common.config.ConfigException: Invalid max.connection.creation.rate 0 for "
                    + "configuration Invalid dynamic configuration");
            assertThat(negative.getCause()).hasMessage("Invalid value -1 for configuration "
                    + "max.connection.creation.rate: Value must be at least 0");
        } finally {
            closeAll(clients);
        }
    }

    private static void alter(Admin admin, String broker, String key, String value) throws Exception {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.BROKER, broker),
                List.of(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET))))
                .all().get(30, TimeUnit.SECONDS);
    }

    private static Admin admin(int port) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        return Admin.create(props);
    }

    private static void closeAll(List<Client> clients) throws IOException {
        for (Client client : clients) {
            client.close();
        }
        clients.clear();
    }

    /** A raw connection from 127.0.0.2 that asks ApiVersions. */
    private static final class Client implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;

        private Client(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new DataInputStream(socket.getInputStream());
        }

        static Client connect(int port) throws IOException {
            Socket socket = new Socket();
            socket.bind(new InetSocketAddress(InetAddress.getByName(CLIENT_ADDRESS), 0));
            socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
            socket.setTcpNoDelay(true);
            return new Client(socket);
        }

        void sendApiVersions(int correlationId) throws IOException {
            socket.getOutputStream().write(RawConnection.frame(KafkaWire.apiVersionsRequest(API_VERSIONS_VERSION,
                    correlationId)));
            socket.getOutputStream().flush();
        }

        /** Whether a whole response arrives within {@code within}. */
        boolean answered(Duration within) throws IOException {
            socket.setSoTimeout((int) within.toMillis());
            try {
                int size = in.readInt();
                in.readFully(new byte[size]);
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            }
        }

        boolean answersApiVersions() throws IOException {
            sendApiVersions(1);
            return answered(Duration.ofSeconds(10));
        }

        /** True when the server closes the connection (end of stream or reset) within 10 s. */
        boolean closedByServer() throws IOException {
            socket.setSoTimeout(10_000);
            try {
                return in.read() == -1;
            } catch (SocketTimeoutException e) {
                return false;
            } catch (IOException e) {
                return true;
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
