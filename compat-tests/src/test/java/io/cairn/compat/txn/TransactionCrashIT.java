package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.KafkaReferenceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Aborted transactions stay aborted through a crash: committed and aborted transactions of the stock transactional
 * producer across two segments (rolled by {@code segment.ms}), one transaction begun in the older segment and aborted
 * in the active one, then a SIGKILL of the broker and a restart (the log recovered, its transaction index rebuilt).
 * A read_committed consumer reads exactly the committed records before and after; and a compacted topic whose key
 * was overwritten by an aborted transaction just before the crash keeps the committed value once the cleaner has
 * run after the restart. Each defect here made aborted records visible after the crash (and the cleaner drop the
 * committed value in their favour).
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
@Tag("faults")
class TransactionCrashIT {

    private static final int TRANSACTIONS_PER_SEGMENT = 6;
    private static final int RECORDS_PER_TRANSACTION = 10;
    private static final long SEGMENT_MS = 2_000;

    private static BrokerProcess start(BrokerKind kind) {
        BrokerProcess broker = kind == BrokerKind.CAIRN
                ? CairnProcess.builder().config("log.cleaner.backoff.ms", "500").build()
                : KafkaReferenceProcess.builder().config("log.cleaner.backoff.ms", "500").build();
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    @ParameterizedTest
    @MethodSource("io.cairn.compat.txn.TransactionsIT#kinds")
    void abortedTransactionsStayAbortedAfterAKillAndCompactionKeepsTheCommittedValue(BrokerKind kind)
            throws Exception {
        try (BrokerProcess broker = start(kind)) {
            // Given
            String topic = TransactionsIT.unique("txn-crash");
            String compacted = TransactionsIT.unique("txn-crash-compacted");
            try (Admin admin = TransactionsIT.admin(broker)) {
                admin.createTopics(List.of(
                        new NewTopic(topic, 1, (short) 1).configs(Map.of("segment.ms", Long.toString(SEGMENT_MS))),
                        new NewTopic(compacted, 1, (short) 1).configs(Map.of("cleanup.policy", "compact",
                                "segment.ms", Long.toString(SEGMENT_MS), "min.cleanable.dirty.ratio", "0.01"))))
                        .all().get(30, TimeUnit.SECONDS);
            }
            List<String> committed = new ArrayList<>();
            try (KafkaProducer<String, String> spanning = TransactionsIT.transactionalProducer(broker,
                    TransactionsIT.unique("txn-crash-span"));
                 KafkaProducer<String, String> producer = TransactionsIT.transactionalProducer(broker,
                         TransactionsIT.unique("txn-crash"))) {
                spanning.initTransactions();
                producer.initTransactions();
                transactions(producer, topic, 0, committed);
                spanning.beginTransaction();
                for (int j = 0; j < RECORDS_PER_TRANSACTION; j++) {
                    spanning.send(new ProducerRecord<>(topic, 0, null, "spanning-" + j));
                }
                spanning.flush();
                // segment.ms passes, so the next append rolls a new segment (time, not polling, is awaited here)
                Thread.sleep(SEGMENT_MS + 500);
                transactions(producer, topic, TRANSACTIONS_PER_SEGMENT, committed);
                spanning.abortTransaction();

                producer.beginTransaction();
                producer.send(new ProducerRecord<>(compacted, 0, "k", "committed"));
                producer.commitTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(compacted, 0, "k", "aborted"));
                producer.flush();
                producer.abortTransaction();
            }
            assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_COMMITTED))
                    .containsExactlyElementsOf(committed);

            // When
            broker.kill();
            broker.start();

            // Then: the recovered log still knows its aborted transactions
            assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_COMMITTED))
                    .containsExactlyElementsOf(committed);
            assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_UNCOMMITTED))
                    .hasSize(2 * TRANSACTIONS_PER_SEGMENT * RECORDS_PER_TRANSACTION + RECORDS_PER_TRANSACTION);
            try (Admin admin = TransactionsIT.admin(broker)) {
                TopicPartition partition = new TopicPartition(topic, 0);
                assertThat(TransactionsIT.latest(admin, partition, IsolationLevel.READ_COMMITTED))
                        .isEqualTo(TransactionsIT.latest(admin, partition, IsolationLevel.READ_UNCOMMITTED));
            }

            // and once a roll makes the segment of the aborted overwrite cleanable, the cleaner removes the aborted
            // value and keeps the committed one
            Thread.sleep(SEGMENT_MS + 500);
            try (KafkaProducer<String, String> producer = TransactionsIT.transactionalProducer(broker,
                    TransactionsIT.unique("txn-crash-roll"))) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(compacted, 0, "other", "v"));
                producer.commitTransaction();
            }
            await().atMost(TransactionsIT.TIMEOUT).pollInterval(Duration.ofMillis(500))
                    .until(() -> valuesOf(broker, compacted, "k").size() == 1);
            assertThat(valuesOf(broker, compacted, "k")).containsExactly("committed");
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    /**
     * {@value #TRANSACTIONS_PER_SEGMENT} transactions of {@value #RECORDS_PER_TRANSACTION} records each, numbered from
     * {@code first}: the even ones committed (their values added to {@code committed}), the odd ones aborted after a
     * flush, so their records are in the log.
     */
    private static void transactions(KafkaProducer<String, String> producer, String topic, int first,
            List<String> committed) {
        for (int i = first; i < first + TRANSACTIONS_PER_SEGMENT; i++) {
            producer.beginTransaction();
            for (int j = 0; j < RECORDS_PER_TRANSACTION; j++) {
                String value = "txn" + i + "-" + j;
                producer.send(new ProducerRecord<>(topic, 0, null, value));
                if (i % 2 == 0) {
                    committed.add(value);
                }
            }
            producer.flush();
            if (i % 2 == 0) {
                producer.commitTransaction();
            } else {
                producer.abortTransaction();
            }
        }
    }

    /** Every value of {@code key} in partition 0 of {@code topic}, read_uncommitted, from the start to the end. */
    private static List<String> valuesOf(BrokerProcess broker, String topic, String key) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        TopicPartition tp = new TopicPartition(topic, 0);
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + TransactionsIT.TIMEOUT.toNanos();
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    if (key.equals(record.key())) {
                        values.add(record.value());
                    }
                }
            }
        }
        return values;
    }
}
