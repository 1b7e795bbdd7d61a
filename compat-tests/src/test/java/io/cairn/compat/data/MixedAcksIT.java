package io.cairn.compat.data;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.ProduceResponseData;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * acks=0 and acks=1 Produce requests interleaved and pipelined on one connection: only the acks=1 requests are
 * answered, with their own correlation ids, in request order, at the base offsets request order gives; a request
 * sent after them is answered next; and a consumer reads every record of both kinds, in request order.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class MixedAcksIT {

    private static final int REQUESTS = 20;
    private static final int RECORDS_PER_REQUEST = 5;

    @ParameterizedTest
    @MethodSource("io.cairn.compat.data.DataClients#kinds")
    void acksZeroAndAcksOneShouldShareOneConnection(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = DataClients.uniqueTopic("mixed-acks");
        DataClients.createTopic(broker, topic, 1, Map.of());
        List<Integer> acksOneCorrelationIds = new ArrayList<>();
        List<Long> expectedBaseOffsets = new ArrayList<>();
        List<Integer> answeredCorrelationIds = new ArrayList<>();
        List<Long> baseOffsets = new ArrayList<>();
        List<Short> errorCodes = new ArrayList<>();
        ApiVersionsResponseData sentinel;

        // When
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            for (int r = 0; r < REQUESTS; r++) {
                short acks = (short) (r % 2);
                int correlationId = client.send(DataClients.produceRequest(topic, 0, acks, batch(r)),
                        DataClients.PRODUCE_VERSION);
                if (acks == 1) {
                    acksOneCorrelationIds.add(correlationId);
                    expectedBaseOffsets.add((long) r * RECORDS_PER_REQUEST);
                }
            }
            int sentinelId = client.send(new ApiVersionsRequestData().setClientSoftwareName("mixed-acks")
                    .setClientSoftwareVersion("1.0"), (short) 3);
            for (int i = 0; i < REQUESTS / 2; i++) {
                RawKafkaClient.Response response = client.receive(DataClients.TIMEOUT);
                answeredCorrelationIds.add(response.header().correlationId());
                ProduceResponseData.PartitionProduceResponse partition =
                        DataClients.onlyPartition((ProduceResponseData) response.body());
                baseOffsets.add(partition.baseOffset());
                errorCodes.add(partition.errorCode());
            }
            RawKafkaClient.Response last = client.receive(DataClients.TIMEOUT);
            assertThat(last.header().correlationId()).as("the response after the produce responses")
                    .isEqualTo(sentinelId);
            sentinel = (ApiVersionsResponseData) last.body();
        }
        TopicPartition partition = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> read = DataClients.readAll(broker, List.of(partition),
                DataClients.TIMEOUT).get(partition);

        // Then
        assertThat(answeredCorrelationIds).isEqualTo(acksOneCorrelationIds);
        assertThat(errorCodes).containsOnly((short) 0);
        assertThat(baseOffsets).isEqualTo(expectedBaseOffsets);
        assertThat(sentinel.errorCode()).isZero();
        List<String> expected = new ArrayList<>();
        for (int r = 0; r < REQUESTS; r++) {
            for (int n = 0; n < RECORDS_PER_REQUEST; n++) {
                expected.add(value(r, n));
            }
        }
        assertThat(read).extracting(record -> new String(record.value(), StandardCharsets.UTF_8))
                .containsExactlyElementsOf(expected);
        assertThat(read).extracting(ConsumerRecord::offset).containsExactlyElementsOf(
                expected.stream().map(v -> (long) expected.indexOf(v)).toList());
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    private static byte[] batch(int request) {
        SimpleRecord[] records = new SimpleRecord[RECORDS_PER_REQUEST];
        for (int n = 0; n < RECORDS_PER_REQUEST; n++) {
            records[n] = new SimpleRecord(System.currentTimeMillis(), ("k" + request).getBytes(StandardCharsets.UTF_8),
                    value(request, n).getBytes(StandardCharsets.UTF_8));
        }
        return DataClients.batch(records);
    }

    private static String value(int request, int n) {
        return "request-" + request + "-record-" + n;
    }
}
