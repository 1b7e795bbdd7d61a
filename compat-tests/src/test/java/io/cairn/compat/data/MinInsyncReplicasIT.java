package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code min.insync.replicas} above the replication factor is bounded by it (Kafka's effective min ISR, since 3.7):
 * acks=all to a single-replica topic configured with {@code min.insync.replicas=3} is accepted and the record
 * becomes visible to consumers, on Cairn as on Kafka.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class MinInsyncReplicasIT {

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void acksAllIsAcceptedWhenMinInsyncReplicasExceedsTheReplicationFactor(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("min-isr");
        DataClients.createTopic(broker, topic, 1, Map.of("min.insync.replicas", "3"));

        // When
        long offset;
        try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker,
                Map.of(ProducerConfig.ACKS_CONFIG, "all"))) {
            offset = producer.send(new ProducerRecord<>(topic, new byte[] {1}, new byte[] {2}))
                    .get(DataClients.TIMEOUT_S, TimeUnit.SECONDS).offset();
        }

        // Then
        TopicPartition partition = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> read = DataClients.readAll(broker, List.of(partition),
                DataClients.TIMEOUT).get(partition);
        assertThat(offset).isZero();
        assertThat(read).hasSize(1);
    }
}
