package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.LeakDetection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.Timeout;

/**
 * The metrics endpoint of an in-process broker after stock clients produced and committed: topic, request,
 * replication, per-partition log and consumer-lag series carry the values the traffic implies.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BrokerMetricsIT {

    private static final String TOPIC = "metrics-it";
    private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);

    @TempDir
    static Path dataDir;
    private static InProcessBroker broker;
    private static Admin admin;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void startBroker() throws Exception {
        broker = InProcessBroker.start(dataDir, Map.of("offsets.topic.replication.factor", "1",
                "offsets.topic.num.partitions", "1"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()));
        admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopBroker() {
        if (admin != null) {
            admin.close();
        }
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void scrapeShouldShowTrafficReplicationLogAndLag() throws Exception {
        // Given
        produce(5);
        commit(5);
        produce(3);

        // When
        String scrape = scrape();

        // Then
        assertThat(scrape)
                .contains("kafka_server_brokertopicmetrics_messagesin_total{topic=\"metrics-it\"} 8.0")
                .contains("kafka_server_brokertopicmetrics_totalproducerequests_total{topic=\"metrics-it\"} 2.0")
                .contains("kafka_network_requestmetrics_errors_total{error=\"NONE\",request=\"Produce\"} ")
                .contains("kafka_network_requestmetrics_totaltimems_count{request=\"Produce\"} ")
                .contains("kafka_network_requestmetrics_totaltimems{request=\"OffsetCommit\",quantile=\"0.99\"}")
                .contains("kafka_server_replicamanager_underminisrpartitioncount 0.0")
                .contains("kafka_server_replicamanager_underreplicatedpartitions 0.0")
                .contains("kafka_controller_kafkacontroller_activecontrollercount 1.0")
                .contains("kafka_server_kafkaserver_brokerstate 3.0")
                .contains("kafka_log_log_logendoffset{partition=\"0\",topic=\"metrics-it\"} 8.0")
                .contains("kafka_log_log_numlogsegments{partition=\"0\",topic=\"metrics-it\"} 1.0")
                .contains("kafka_consumergroup_current_offset{consumergroup=\"metrics-group\",partition=\"0\","
                        + "topic=\"metrics-it\"} 5.0")
                .contains("kafka_consumergroup_lag{consumergroup=\"metrics-group\",partition=\"0\","
                        + "topic=\"metrics-it\"} 3.0")
                .contains("kafka_server_socket_server_metrics_connection_count{listener=\"PLAINTEXT\"}")
                .contains("jvm_memory_used_bytes{area=\"heap\"}");
    }

    @Test
    void aDeletedTopicsSeriesShouldDisappear() throws Exception {
        // Given
        admin.createTopics(List.of(new NewTopic("doomed", 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        produce("doomed", 1);
        assertThat(scrapeOnce()).contains("kafka_server_brokertopicmetrics_messagesin_total{topic=\"doomed\"} 1.0");

        // When
        admin.deleteTopics(List.of("doomed")).all().get(30, TimeUnit.SECONDS);

        // Then
        Awaitility.await().atMost(30, TimeUnit.SECONDS).untilAsserted(() -> assertThat(scrapeOnce())
                .doesNotContain("topic=\"doomed\"")
                .contains("kafka_server_brokertopicmetrics_messagesin_total{topic=\"\"}"));
    }

    private static void produce(int records) throws Exception {
        produce(TOPIC, records);
    }

    private static void produce(String topic, int records) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.LINGER_MS_CONFIG, "1000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i));
            }
            producer.flush();
        }
    }

    private static void commit(long offset) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, "metrics-group");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(P0));
            consumer.commitSync(Map.of(P0, new OffsetAndMetadata(offset)));
        }
    }

    private String scrape() {
        return Awaitility.await().atMost(30, TimeUnit.SECONDS).until(this::scrapeOnce,
                text -> text.contains("kafka_consumergroup_lag{"));
    }

    private String scrapeOnce() throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + broker.metricsPort() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        return response.body();
    }

    private static String bootstrap() {
        return "127.0.0.1:" + broker.port();
    }
}
