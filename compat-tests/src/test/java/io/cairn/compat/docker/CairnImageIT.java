package io.cairn.compat.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import io.cairn.testkit.FreePorts;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * The image {@code docker/Dockerfile} builds, in a real Docker engine: configured only with the apache/kafka image's
 * {@code KAFKA_*} variables, it runs a broker that the stock producer and consumer use from the host. The client port
 * is a free host port published as the same container port, so the advertised listener is known before the start.
 * Skipped when no Docker engine runs.
 */
@Testcontainers(disabledWithoutDocker = true)
@Timeout(900)
class CairnImageIT {

    private static final Path HOME = Paths.get(System.getProperty("cairn.home.dir", "..")).toAbsolutePath()
            .normalize();

    @Test
    void imageRunsABrokerThatStockClientsUse() throws Exception {
        // Given: the image, built from the checkout, with a compose-style environment
        int port = FreePorts.freePort();
        String host = DockerClientFactory.instance().dockerHostIpAddress();
        ImageFromDockerfile image = new ImageFromDockerfile("cairn-it", true).withFileFromPath(".", HOME)
                .withDockerfilePath("docker/Dockerfile");
        try (GenericContainer<?> cairn = new GenericContainer<>(image)
                .withEnv("KAFKA_NODE_ID", "1")
                .withEnv("KAFKA_PROCESS_ROLES", "broker,controller")
                .withEnv("KAFKA_LISTENERS", "PLAINTEXT://:" + port + ",CONTROLLER://:9093")
                .withEnv("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://" + host + ":" + port)
                .withEnv("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT")
                .withEnv("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9093")
                .withEnv("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER")
                .withEnv("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1")
                .withEnv("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0")
                .withEnv("KAFKA_HEAP_OPTS", "-Xmx384m")
                .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig().withPortBindings(
                        new PortBinding(Ports.Binding.bindPort(port), new ExposedPort(port))))
                .waitingFor(Wait.forLogMessage(".*Cairn broker started.*", 1)
                        .withStartupTimeout(Duration.ofMinutes(2)))) {
            cairn.start();

            // When
            String bootstrap = host + ":" + port;
            Properties producerProps = new Properties();
            producerProps.put("bootstrap.servers", bootstrap);
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps,
                    new StringSerializer(), new StringSerializer())) {
                producer.send(new ProducerRecord<>("image", "key", "from-the-image")).get(30, TimeUnit.SECONDS);
            }

            // Then
            Properties consumerProps = new Properties();
            consumerProps.put("bootstrap.servers", bootstrap);
            consumerProps.put("group.id", "image-group");
            consumerProps.put("auto.offset.reset", "earliest");
            List<String> values = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps,
                    new StringDeserializer(), new StringDeserializer())) {
                consumer.subscribe(List.of("image"));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (values.isEmpty() && System.nanoTime() < deadline) {
                    for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                        values.add(record.value());
                    }
                }
            }
            assertThat(values).containsExactly("from-the-image");
        }
    }
}
