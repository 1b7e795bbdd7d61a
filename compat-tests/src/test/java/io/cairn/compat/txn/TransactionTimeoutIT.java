package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.KafkaReferenceProcess;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A transaction left open past the producer's {@code transaction.timeout.ms} is aborted by the coordinator, the same
 * scenario against Cairn and the reference Kafka, each a broker of its own that looks for timed-out transactions
 * every {@value #CLEANUP_INTERVAL_MS} ms ({@code transaction.abort.timed.out.transaction.cleanup.interval.ms}): a
 * read_committed reader reaches the end of the partition without the aborted record, and the producer's commit then
 * fails because the abort fenced its epoch (INVALID_TXN_STATE at transaction.version 2).
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class TransactionTimeoutIT {

    private static final String CLEANUP_INTERVAL = "transaction.abort.timed.out.transaction.cleanup.interval.ms";
    private static final long CLEANUP_INTERVAL_MS = 500;
    private static final int TRANSACTION_TIMEOUT_MS = 2_000;

    private static BrokerProcess start(BrokerKind kind) {
        String interval = Long.toString(CLEANUP_INTERVAL_MS);
        BrokerProcess broker = kind == BrokerKind.CAIRN
                ? CairnProcess.builder().config(CLEANUP_INTERVAL, interval).build()
                : KafkaReferenceProcess.builder().config(CLEANUP_INTERVAL, interval).build();
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    @KafkaHalfInFaults
    void anOpenTransactionPastItsTimeoutIsAbortedAndItsProducerFenced(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = start(kind)) {
            String topic = TransactionsIT.createTopic(broker, "txn-timeout", 1);
            TopicPartition partition = new TopicPartition(topic, 0);
            try (KafkaProducer<String, String> producer = producer(broker, TransactionsIT.unique("txn-timeout"));
                 Admin admin = TransactionsIT.admin(broker)) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "k", "timed-out")).get(30, TimeUnit.SECONDS);
                assertThat(TransactionsIT.latest(admin, partition, IsolationLevel.READ_COMMITTED)).isZero();

                // When: the producer stays idle past its transaction timeout

                // Then: the coordinator aborts it; the record and the abort marker become stable
                await().atMost(TransactionsIT.TIMEOUT).until(() ->
                        TransactionsIT.latest(admin, partition, IsolationLevel.READ_COMMITTED) == 2);
                assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_COMMITTED)).isEmpty();
                assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_UNCOMMITTED))
                        .containsExactly("timed-out");

                // and the producer can no longer commit: the abort bumped its epoch. Both finalize transaction.version
                // 2, where the old epoch's commit is taken for a retry of the finished abort: INVALID_TXN_STATE.
                assertThatThrownBy(producer::commitTransaction).isInstanceOf(InvalidTxnStateException.class);
            }
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    private static KafkaProducer<String, String> producer(BrokerProcess broker, String transactionalId) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, TRANSACTION_TIMEOUT_MS);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }
}
