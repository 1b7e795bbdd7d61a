package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Kafka's transactions (KIP-98, KIP-447) through the stock Java clients, the same scenario against Cairn and the
 * reference Kafka: commits and aborts as read_committed and read_uncommitted consumers see them, the last stable
 * offset held below the high watermark while a transaction is open, zombie fencing by a second producer with the
 * same transactional id, and consume-transform-produce with {@code sendOffsetsToTransaction(offsets,
 * groupMetadata)}.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class TransactionsIT {

    static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** The broker kinds: every one, or those {@code -Dcairn.txn.kinds=KAFKA,CAIRN} names. */
    static Stream<BrokerKind> kinds() {
        String names = System.getProperty("cairn.txn.kinds", "");
        return names.isBlank() ? Stream.of(BrokerKind.values())
                : Stream.of(names.split(",")).map(String::trim).map(BrokerKind::valueOf);
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void readCommittedSeesCommittedTransactionsOnlyAndReadUncommittedSeesAll(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "txn-visibility", 2);
        try (KafkaProducer<String, String> producer = transactionalProducer(broker, unique("txn-visibility"))) {
            producer.initTransactions();

            // When: a committed, an aborted and another committed transaction
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "committed-1"));
            producer.send(new ProducerRecord<>(topic, 1, "k", "committed-2"));
            producer.commitTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "aborted-1"));
            producer.send(new ProducerRecord<>(topic, 1, "k", "aborted-2"));
            producer.flush();
            producer.abortTransaction();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "committed-3"));
            producer.commitTransaction();
        }

        // Then
        assertThat(readToEnd(broker, topic, 2, IsolationLevel.READ_COMMITTED))
                .containsExactlyInAnyOrder("committed-1", "committed-2", "committed-3");
        assertThat(readToEnd(broker, topic, 2, IsolationLevel.READ_UNCOMMITTED))
                .containsExactlyInAnyOrder("committed-1", "committed-2", "aborted-1", "aborted-2", "committed-3");
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void lastStableOffsetStaysBelowTheHighWatermarkWhileATransactionIsOpen(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "txn-lso", 1);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaProducer<String, String> producer = transactionalProducer(broker, unique("txn-lso"));
             Admin admin = admin(broker)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "before")).get(30, TimeUnit.SECONDS);
            producer.commitTransaction();
            // EndTxn is answered once the coordinator has written PrepareCommit; the marker follows (on Kafka too)
            await().atMost(TIMEOUT).until(() -> latest(admin, partition, IsolationLevel.READ_COMMITTED) == 2);
            long stableBefore = latest(admin, partition, IsolationLevel.READ_COMMITTED);

            // When: a transaction is open with two records written
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "open-1"));
            producer.send(new ProducerRecord<>(topic, 0, "k", "open-2")).get(30, TimeUnit.SECONDS);

            // Then: read_committed's end stays where the open transaction starts, read_uncommitted's moves on
            assertThat(latest(admin, partition, IsolationLevel.READ_COMMITTED)).isEqualTo(stableBefore);
            assertThat(latest(admin, partition, IsolationLevel.READ_UNCOMMITTED)).isEqualTo(stableBefore + 2);

            // When
            producer.commitTransaction();

            // Then: past the records and the commit marker
            await().atMost(TIMEOUT).until(() -> latest(admin, partition, IsolationLevel.READ_COMMITTED)
                    == stableBefore + 3);
            assertThat(latest(admin, partition, IsolationLevel.READ_UNCOMMITTED)).isEqualTo(stableBefore + 3);
        }
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void aSecondProducerWithTheSameTransactionalIdFencesTheFirst(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = createTopic(broker, "txn-fencing", 1);
        String transactionalId = unique("txn-fencing");
        try (KafkaProducer<String, String> zombie = transactionalProducer(broker, transactionalId)) {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(topic, 0, "k", "zombie")).get(30, TimeUnit.SECONDS);

            // When: the new instance takes over the transactional id
            try (KafkaProducer<String, String> successor = transactionalProducer(broker, transactionalId)) {
                successor.initTransactions();
                successor.beginTransaction();
                successor.send(new ProducerRecord<>(topic, 0, "k", "successor"));
                successor.commitTransaction();

                // Then: the zombie's transaction was aborted and it can no longer commit
                assertThatThrownBy(zombie::commitTransaction).isInstanceOf(ProducerFencedException.class);
            }
        }
        assertThat(readToEnd(broker, topic, 1, IsolationLevel.READ_COMMITTED)).containsExactly("successor");
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void consumeTransformProduceCommitsOffsetsWithTheTransaction(BrokerKind kind) throws Exception {
        // Given: 50 input records
        BrokerProcess broker = kind.shared();
        String input = createTopic(broker, "txn-ctp-in", 1);
        String output = createTopic(broker, "txn-ctp-out", 1);
        try (KafkaProducer<String, String> plain = plainProducer(broker)) {
            for (int i = 0; i < 50; i++) {
                plain.send(new ProducerRecord<>(input, 0, "k" + i, "v" + i));
            }
        }
        String group = unique("txn-ctp-group");

        // When: one batch aborted, then every record processed in committed transactions
        int processed = 0;
        try (KafkaConsumer<String, String> consumer = groupConsumer(broker, group);
             KafkaProducer<String, String> producer = transactionalProducer(broker, unique("txn-ctp"))) {
            producer.initTransactions();
            consumer.subscribe(List.of(input));
            boolean abortedOnce = false;
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (processed < 50 && System.nanoTime() < deadline) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    continue;
                }
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> record : records) {
                    producer.send(new ProducerRecord<>(output, 0, record.key(), record.value().toUpperCase()));
                    offsets.put(new TopicPartition(record.topic(), record.partition()),
                            new OffsetAndMetadata(record.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                if (!abortedOnce) {
                    producer.abortTransaction();
                    abortedOnce = true;
                    rewind(consumer, offsets, records);
                    continue;
                }
                producer.commitTransaction();
                processed += records.count();
            }
        }

        // Then: the output has each record once, and the group's committed offset is the input's end
        assertThat(processed).isEqualTo(50);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            expected.add("V" + i);
        }
        assertThat(readToEnd(broker, output, 1, IsolationLevel.READ_COMMITTED)).containsExactlyElementsOf(expected);
        try (Admin admin = admin(broker)) {
            Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
            assertThat(committed.get(new TopicPartition(input, 0)).offset()).isEqualTo(50L);
        }
    }

    /** Seeks the consumer back to the first offset of {@code records} per partition (after an abort). */
    private static void rewind(KafkaConsumer<String, String> consumer, Map<TopicPartition, OffsetAndMetadata> offsets,
            ConsumerRecords<String, String> records) {
        for (TopicPartition tp : offsets.keySet()) {
            consumer.seek(tp, records.records(tp).get(0).offset());
        }
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static Admin admin(BrokerProcess broker) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        return Admin.create(props);
    }

    static String createTopic(BrokerProcess broker, String prefix, int partitions) throws Exception {
        String topic = unique(prefix);
        try (Admin admin = admin(broker)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
        return topic;
    }

    static KafkaProducer<String, String> transactionalProducer(BrokerProcess broker, String transactionalId) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000);
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    static KafkaProducer<String, String> plainProducer(BrokerProcess broker) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    static KafkaConsumer<String, String> groupConsumer(BrokerProcess broker, String group) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    static long latest(Admin admin, TopicPartition partition, IsolationLevel isolation) throws Exception {
        try {
            return admin.listOffsets(Map.of(partition, OffsetSpec.latest()), new ListOffsetsOptions(isolation))
                    .partitionResult(partition).get(30, TimeUnit.SECONDS).offset();
        } catch (ExecutionException e) {
            throw new KafkaException("ListOffsets " + isolation + " of " + partition + " failed", e.getCause());
        }
    }

    /**
     * The values of every record of {@code topic} that a consumer with {@code isolation} reads from the beginning
     * until it has reached the end its isolation level allows on every partition, once the transactions on them have
     * ended: the coordinator answers EndTxn before it writes the markers, so they may still be on their way.
     */
    static List<String> readToEnd(BrokerProcess broker, String topic, int partitions, IsolationLevel isolation)
            throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.toString());
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            tps.add(new TopicPartition(topic, p));
        }
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer()); Admin admin = admin(broker)) {
            Map<TopicPartition, Long> ends = new HashMap<>();
            for (TopicPartition tp : tps) {
                await().atMost(TIMEOUT).until(() -> latest(admin, tp, IsolationLevel.READ_COMMITTED)
                        == latest(admin, tp, IsolationLevel.READ_UNCOMMITTED));
                ends.put(tp, latest(admin, tp, isolation));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (tps.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))
                    && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    values.add(record.value());
                }
            }
        }
        return values;
    }
}
