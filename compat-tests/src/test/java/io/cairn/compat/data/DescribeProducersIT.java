package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.DescribeProducersRequestData;
import io.cairn.wire.message.DescribeProducersResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DescribeProducers (KIP-664) as the admin client and the raw protocol see it: after a stock idempotent producer
 * wrote three batches, the partition's leader describes that one producer (epoch 0, last sequence 2, the last
 * batch's timestamp, no coordinator epoch, no open transaction); an illegal topic name, an unknown topic and an
 * unknown partition get the same error codes and messages from Cairn as from Kafka.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class DescribeProducersIT {

    private static final short VERSION = 0;

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void theLeaderDescribesAnIdempotentProducersState(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("producers");
        DataClients.createTopic(broker, topic, 1, Map.of());
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaProducer<byte[], byte[]> producer = DataClients.producer(broker, Map.of())) {
            for (int i = 0; i < 3; i++) {
                producer.send(new ProducerRecord<>(topic, 0, 1_000L + i, null, new byte[] {(byte) i}))
                        .get(DataClients.TIMEOUT_S, TimeUnit.SECONDS);
            }
        }

        // When
        PartitionProducerState state;
        try (Admin admin = DataClients.admin(broker)) {
            state = admin.describeProducers(List.of(tp)).partitionResult(tp).get(DataClients.TIMEOUT_S,
                    TimeUnit.SECONDS);
        }

        // Then
        assertThat(state.activeProducers()).singleElement().satisfies(p -> {
            assertThat(p.producerId()).isNotNegative();
            assertThat(p.producerEpoch()).isZero();
            assertThat(p.lastSequence()).isEqualTo(2);
            assertThat(p.lastTimestamp()).isEqualTo(1_002L);
            assertThat(p.coordinatorEpoch()).isEqualTo(OptionalInt.empty());
            assertThat(p.currentTransactionStartOffset()).isEqualTo(OptionalLong.empty());
        });
        assertThat(state.activeProducers()).extracting(ProducerState::producerId).doesNotHaveDuplicates();
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void badTopicsAndPartitionsGetKafkasErrors(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("producers-errors");
        DataClients.createTopic(broker, topic, 1, Map.of());
        DescribeProducersRequestData request = new DescribeProducersRequestData();
        request.topics().add(topicRequest("bad name!", 0));
        request.topics().add(topicRequest(DataClients.uniqueTopic("absent"), 0));
        request.topics().add(topicRequest(topic, 0, 7));

        // When
        DescribeProducersResponseData response;
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            response = DataClients.call(client, request, VERSION);
        }

        // Then
        List<String> outcomes = new ArrayList<>();
        response.topics().forEach(t -> t.partitions().forEach(p -> outcomes.add(p.partitionIndex() + ":"
                + p.errorCode() + ":" + p.errorMessage() + ":" + p.activeProducers().size())));
        assertThat(outcomes).containsExactly(
                "0:17:Topic name is invalid: 'bad name!' contains one or more characters other than ASCII "
                        + "alphanumerics, '.', '_' and '-':0",
                "0:3:This server does not host this topic-partition.:0",
                "0:0:null:0",
                "7:3:null:0");
    }

    private static DescribeProducersRequestData.TopicRequest topicRequest(String name, Integer... partitions) {
        return new DescribeProducersRequestData.TopicRequest().setName(name)
                .setPartitionIndexes(new ArrayList<>(List.of(partitions)));
    }
}
