package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kafka's {@code kafka-transactions} tool ({@code org.apache.kafka.tools.TransactionsCommand}) against Cairn and the
 * reference Kafka, on a transaction a stock producer left open: {@code list} and {@code describe} show it Ongoing on
 * its partition, {@code describe-producers} shows its producer with the transaction's first offset, and
 * {@code abort} (DescribeProducers, then WriteTxnMarkers to the partition's leader) ends it, so that the last
 * stable offset reaches the log end.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class TransactionsToolIT {

    private static final String TOOL = "org.apache.kafka.tools.TransactionsCommand";
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(60);

    @ParameterizedTest
    @MethodSource("io.cairn.compat.txn.TransactionsIT#kinds")
    void listDescribeDescribeProducersAndAbortAnOpenTransaction(BrokerKind kind) throws Exception {
        // Given: a transaction left open with two records on partition 0
        BrokerProcess broker = kind.shared();
        String topic = TransactionsIT.createTopic(broker, "txn-tool", 1);
        String transactionalId = TransactionsIT.unique("txn-tool");
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = TransactionsIT.transactionalProducer(broker, transactionalId);
             Admin admin = TransactionsIT.admin(broker)) {
            producer.initTransactions();
            producer.beginTransaction();
            RecordMetadata first = producer.send(new ProducerRecord<>(topic, 0, "k", "open-1"))
                    .get(30, TimeUnit.SECONDS);
            producer.send(new ProducerRecord<>(topic, 0, "k", "open-2")).get(30, TimeUnit.SECONDS);

            // When
            JavaTool.Result list = tool(broker, "list");
            JavaTool.Result describe = tool(broker, "describe", "--transactional-id", transactionalId);
            JavaTool.Result producers = tool(broker, "describe-producers", "--topic", topic, "--partition", "0");

            // Then
            List<String> listed = row(list, transactionalId);
            assertThat(listed).as("list: %s", list).hasSize(4);
            assertThat(listed.get(3)).as("list state").isEqualTo("Ongoing");
            List<String> described = row(describe, transactionalId);
            assertThat(described).as("describe: %s", describe).contains("Ongoing", partition.toString());
            String producerId = described.get(2);
            assertThat(listed.get(2)).as("list producer id").isEqualTo(producerId);
            List<String> producer0 = columnsStartingWith(producers, producerId);
            assertThat(producer0).as("describe-producers: %s", producers).hasSize(6);
            assertThat(producer0.get(5)).as("current transaction start offset")
                    .isEqualTo(Long.toString(first.offset()));

            // When: the operator aborts it behind the producer's back
            JavaTool.Result aborted = tool(broker, "abort", "--topic", topic, "--partition", "0",
                    "--start-offset", Long.toString(first.offset()));

            // Then: the partition is stable again up to its end
            assertThat(aborted.exitCode()).as("abort: %s", aborted).isZero();
            await().atMost(TransactionsIT.TIMEOUT).until(() -> TransactionsIT.latest(admin, partition,
                    IsolationLevel.READ_COMMITTED) == TransactionsIT.latest(admin, partition,
                    IsolationLevel.READ_UNCOMMITTED));
            assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_COMMITTED)).isEmpty();
            producer.close(Duration.ZERO);
        }
    }

    private static JavaTool.Result tool(BrokerProcess broker, String... args) {
        String[] all = new String[args.length + 2];
        all[0] = "--bootstrap-server";
        all[1] = broker.bootstrapServers();
        System.arraycopy(args, 0, all, 2, args.length);
        JavaTool.Result result = KafkaDistribution.tool(TOOL).args(all).timeout(TOOL_TIMEOUT).build().run();
        assertThat(result.exitCode()).as("%s", result).isZero();
        return result;
    }

    /** The columns of the output line whose columns include {@code value}. */
    private static List<String> row(JavaTool.Result result, String value) {
        return result.stdout().lines().map(String::strip).map(line -> List.of(line.split("\\s+")))
                .filter(columns -> columns.contains(value)).findFirst().orElse(List.of());
    }

    private static List<String> columnsStartingWith(JavaTool.Result result, String first) {
        return result.stdout().lines().map(String::strip).map(line -> List.of(line.split("\\s+")))
                .filter(columns -> columns.get(0).equals(first)).findFirst().orElse(List.of());
    }
}
