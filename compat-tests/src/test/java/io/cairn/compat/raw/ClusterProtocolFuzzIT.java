package io.cairn.compat.raw;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.wire.message.RandomRequests;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData.ApiVersion;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code ProtocolFuzzIT}'s random well-formed requests, every advertised API at every version, sent to the nodes of a
 * three-node Cairn cluster at random, at a topic replicated on all three: what one node forwards to the controller,
 * what a follower answers for a partition it does not lead, what the controller does with CreatePartitions,
 * ElectLeaders, reassignments or UnregisterBroker from a stranger. Each request is answered with a response
 * kafka-clients parses and no UNKNOWN_SERVER_ERROR (but Kafka's own), or the connection is closed; afterwards no node
 * has logged at ERROR or a buffer leak, all three are still registered and running, and a stock acks=all producer and
 * a consumer round-trip a new replicated topic. {@code -Dcairn.fuzz.seed} repeats a run, {@code -Dcairn.fuzz.requests}
 * sets the requests per (API, version) (default 3).
 */
@Timeout(480)
@ExtendWith(BrokerLogsExtension.class)
class ClusterProtocolFuzzIT {

    private static final String TOPIC = "topic-1";
    private static final int PARTITIONS = 3;
    private static final int REQUESTS = Integer.getInteger("cairn.fuzz.requests", 3);
    private static final int ANSWER_MS = 10_000;
    private static final int RECORDS = 100;

    @Test
    void everyNodeAnswersRandomRequestsAndTheClusterStaysWhole() throws Exception {
        try (BrokerCluster cluster = BrokerCluster.create(BrokerKind.CAIRN, 3, Map.of())) {
            cluster.start();
            long seed = Long.getLong("cairn.fuzz.seed", System.nanoTime());
            Random random = new Random(seed);
            Map<String, Integer> outcomes = new TreeMap<>();
            List<String> failures = new ArrayList<>();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                List<BrokerProcess> nodes = cluster.nodes();
                List<ApiVersion> advertised;
                try (Connection connection = new Connection(nodes.get(0))) {
                    advertised = connection.apiVersions();
                }

                // When
                int correlationId = 0;
                for (ApiVersion api : advertised) {
                    ApiKeys key = ApiKeys.forId(api.apiKey());
                    RandomRequests.Target target = new RandomRequests.Target(TOPIC, ensureTopic(admin), PARTITIONS);
                    for (short version = api.minVersion(); version <= api.maxVersion(); version++) {
                        for (int i = 0; i < REQUESTS; i++) {
                            BrokerProcess node = nodes.get(random.nextInt(nodes.size()));
                            Message body = RandomRequests.steered(key, version, random, target);
                            String what = key.name + " v" + version + " #" + i + " to node " + node.name();
                            try (Connection connection = new Connection(node)) {
                                String outcome = connection.exchange(key, version, ++correlationId, body, what,
                                        failures);
                                outcomes.merge(key.name + " " + outcome, 1, Integer::sum);
                            }
                        }
                    }
                }
                System.out.println("Cluster protocol fuzz, seed " + seed + ": " + outcomes);

                // Then
                assertThat(failures).as("seed %d", seed).isEmpty();
                for (BrokerProcess node : nodes) {
                    assertThat(node.isRunning()).as("%s, seed %d", node.name(), seed).isTrue();
                    assertThat(node.logLinesContaining(" ERROR ")).as("%s, seed %d", node.name(), seed).isEmpty();
                    assertThat(node.logLinesContaining("LEAK:")).as("%s, seed %d", node.name(), seed).isEmpty();
                }
                assertThat(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)).hasSize(3);
                assertThat(roundTrip(admin, cluster.bootstrapServers())).as("seed %d", seed).isEqualTo(RECORDS);
            }
        }
    }

    /** Creates the topic when a fuzzed DeleteTopics removed it; returns its id. */
    private static Uuid ensureTopic(Admin admin) throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                return admin.describeTopics(List.of(TOPIC)).allTopicNames().get(30, TimeUnit.SECONDS).get(TOPIC)
                        .topicId();
            } catch (ExecutionException e) {
                if (attempt > 50) {
                    throw e;
                }
                try {
                    admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short) 3))).all()
                            .get(30, TimeUnit.SECONDS);
                } catch (ExecutionException retry) {
                    Thread.sleep(200); // the deletion is still under way
                }
            }
        }
    }

    /** A stock acks=all producer and a consumer through a new topic replicated on all three nodes. */
    private static int roundTrip(Admin admin, String bootstrap) throws Exception {
        String topic = "after-fuzz";
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 3).configs(Map.of("min.insync.replicas", "3"))))
                .all().get(30, TimeUnit.SECONDS);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all"),
                new StringSerializer(), new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, "k", "v" + i)).get(60, TimeUnit.SECONDS);
            }
        }
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ConsumerConfig.AUTO_OFFSET_RESET_CONFIG,
                "earliest"), new StringDeserializer(), new StringDeserializer())) {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            int read = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (read < RECORDS && System.nanoTime() < deadline) {
                read += consumer.poll(Duration.ofMillis(200)).count();
            }
            return read;
        }
    }

    /** One TCP connection to a node's client listener, one request at a time. */
    private static final class Connection implements AutoCloseable {

        private final Socket socket = new Socket();
        private final DataInputStream in;
        private final OutputStream out;

        Connection(BrokerProcess node) throws IOException {
            socket.connect(new InetSocketAddress(node.host(), node.port()), 10_000);
            socket.setSoTimeout(ANSWER_MS);
            socket.setTcpNoDelay(true);
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        }

        List<ApiVersion> apiVersions() throws IOException {
            send(ApiKeys.API_VERSIONS, (short) 3, 0, new ApiVersionsRequestData().setClientSoftwareName("fuzz")
                    .setClientSoftwareVersion("1"));
            ByteBuffer frame = read();
            ResponseHeader.parse(frame, (short) 0);
            return new ArrayList<>(new ApiVersionsResponseData(new ByteBufferAccessor(frame), (short) 3).apiKeys());
        }

        /** Sends one request; "answered", "closed", or a note that kafka-clients cannot write the body. */
        String exchange(ApiKeys key, short version, int correlationId, Message body, String what,
                List<String> failures) throws IOException {
            try {
                send(key, version, correlationId, body);
            } catch (org.apache.kafka.common.errors.UnsupportedVersionException e) {
                return "not writable by kafka-clients"; // Produce v0-2: advertised for old clients, never sent
            }
            if (body instanceof ProduceRequestData produce && produce.acks() == 0) {
                // No response to acks=0 (the node closes on an error): ask ApiVersions behind it.
                key = ApiKeys.API_VERSIONS;
                version = 3;
                send(key, version, correlationId, new ApiVersionsRequestData());
            }
            ByteBuffer frame;
            try {
                frame = read();
            } catch (SocketTimeoutException e) {
                failures.add(what + ": no answer within " + ANSWER_MS + " ms: " + RandomRequests.brief(body));
                return "unanswered";
            } catch (IOException e) {
                return "closed";
            }
            RandomRequests.checkAnswer(key, version, correlationId, frame, body, what, failures);
            return "answered";
        }

        private void send(ApiKeys key, short version, int correlationId, Message body) throws IOException {
            RequestHeader header = new RequestHeader(key, version, "cluster-fuzz", correlationId);
            ByteBuffer payload = RequestUtils.serialize(header.data(), header.headerVersion(), body, version);
            ByteBuffer framed = ByteBuffer.allocate(4 + payload.remaining());
            framed.putInt(payload.remaining()).put(payload);
            out.write(framed.array());
            out.flush();
        }

        private ByteBuffer read() throws IOException {
            byte[] payload = new byte[in.readInt()];
            in.readFully(payload);
            return ByteBuffer.wrap(payload);
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
