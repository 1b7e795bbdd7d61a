package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.InitProducerIdRequestData;
import io.cairn.wire.message.InitProducerIdResponseData;
import io.cairn.wire.message.ProduceResponseData;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Idempotent produce as the raw protocol sees it: with a producer id from InitProducerId, a batch sent again with
 * the same sequence is acknowledged with its original offset and stored once, and a batch whose sequence skips
 * ahead is rejected with OUT_OF_ORDER_SEQUENCE_NUMBER and not stored.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class IdempotentProduceIT {

    private static final short INIT_PRODUCER_ID_VERSION = 4;
    private static final short OUT_OF_ORDER_SEQUENCE_NUMBER = 45;

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void retriedBatchShouldBeStoredOnceAndASequenceGapRejected(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("idempotent");
        DataClients.createTopic(broker, topic, 1, Map.of());
        ProduceResponseData.PartitionProduceResponse first;
        ProduceResponseData.PartitionProduceResponse retried;
        ProduceResponseData.PartitionProduceResponse second;
        ProduceResponseData.PartitionProduceResponse gap;
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            // A broker may answer COORDINATOR_LOAD_IN_PROGRESS until its producer id source is ready; retry as the
            // Java producer does.
            InitProducerIdResponseData producer = await().atMost(DataClients.TIMEOUT)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> DataClients.<InitProducerIdResponseData>call(client, new InitProducerIdRequestData()
                            .setTransactionalId(null).setTransactionTimeoutMs(60_000).setProducerId(-1)
                            .setProducerEpoch((short) -1), INIT_PRODUCER_ID_VERSION), r -> r.errorCode() == 0);
            long id = producer.producerId();
            short epoch = producer.producerEpoch();

            // When
            first = produce(client, topic, batch(id, epoch, 0, "a", "b", "c"));
            retried = produce(client, topic, batch(id, epoch, 0, "a", "b", "c"));
            second = produce(client, topic, batch(id, epoch, 3, "d", "e"));
            gap = produce(client, topic, batch(id, epoch, 10, "x"));
        }
        TopicPartition partition = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> read = DataClients.readAll(broker, List.of(partition),
                DataClients.TIMEOUT).get(partition);

        // Then
        assertThat(first.errorCode()).isZero();
        assertThat(first.baseOffset()).isZero();
        assertThat(retried.errorCode()).as("error of the retried batch").isZero();
        assertThat(retried.baseOffset()).as("base offset of the retried batch").isZero();
        assertThat(second.errorCode()).isZero();
        assertThat(second.baseOffset()).isEqualTo(3L);
        assertThat(gap.errorCode()).isEqualTo(OUT_OF_ORDER_SEQUENCE_NUMBER);
        assertThat(read).extracting(r -> new String(r.value(), StandardCharsets.UTF_8))
                .containsExactly("a", "b", "c", "d", "e");
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    private static ProduceResponseData.PartitionProduceResponse produce(RawKafkaClient client, String topic,
            byte[] batch) {
        ProduceResponseData response = DataClients.call(client, DataClients.produceRequest(topic, 0, (short) -1,
                batch), DataClients.PRODUCE_VERSION);
        return DataClients.onlyPartition(response);
    }

    private static byte[] batch(long producerId, short epoch, int baseSequence, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), null,
                    values[i].getBytes(StandardCharsets.UTF_8));
        }
        ByteBuffer buffer = MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, baseSequence,
                records).buffer();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return bytes;
    }
}
