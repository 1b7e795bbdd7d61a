package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.KafkaReferenceProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceResponseData;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A write of a finished transaction that arrives late (KAFKA-17754: a produce held back on the network, sent with
 * the transaction's epoch after it committed and the next transaction began) never lands in the next transaction,
 * on Cairn and on the reference Kafka, with transaction.version 2 (the commit bumped the epoch: the late Produce v12
 * is fenced with INVALID_PRODUCER_EPOCH) and 0 (same epoch: its sequence is already taken, so it is answered as the
 * duplicate it looks like and not appended). Either way read_committed sees exactly the two committed records, no
 * transaction is left open, and the next transaction still commits.
 */
@Timeout(240)
@ExtendWith(BrokerLogsExtension.class)
class DelayedWriteIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /**
     * The transaction.version both kinds finalize when formatted without {@code --feature} (Kafka 4.1's default), as
     * the kinds' shared brokers are: the cases at this version run on those (their own topic and transactional id
     * each) instead of a broker of their own.
     */
    static final int DEFAULT_TRANSACTION_VERSION = 2;

    static Stream<Arguments> kindsAndVersions() {
        return TransactionsIT.kinds().flatMap(kind -> Stream.of(Arguments.of(kind, 2), Arguments.of(kind, 0)));
    }

    /** The kind's shared broker, once it is seen to finalize {@value #DEFAULT_TRANSACTION_VERSION}. */
    static BrokerProcess sharedAtDefaultVersion(BrokerKind kind) throws Exception {
        BrokerProcess broker = kind.shared();
        try (Admin admin = TransactionsIT.admin(broker)) {
            assertThat(admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS).finalizedFeatures()
                    .get("transaction.version").maxVersionLevel()).as("transaction.version of the shared %s", kind)
                    .isEqualTo((short) DEFAULT_TRANSACTION_VERSION);
        }
        return broker;
    }

    private static BrokerProcess start(BrokerKind kind, int transactionVersion) {
        String feature = "transaction.version=" + transactionVersion;
        BrokerProcess broker = kind == BrokerKind.CAIRN ? CairnProcess.builder().formatFeature(feature).build()
                : KafkaReferenceProcess.builder().formatFeature(feature).build();
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    @ParameterizedTest(name = "{0} transaction.version={1}")
    @MethodSource("kindsAndVersions")
    void aLateWriteOfACommittedTransactionNeverJoinsTheNextOne(BrokerKind kind, int transactionVersion)
            throws Exception {
        // Given: transaction 1 wrote one record (sequence 0) and committed; transaction 2 wrote one and is open
        boolean shared = transactionVersion == DEFAULT_TRANSACTION_VERSION;
        BrokerProcess broker = shared ? sharedAtDefaultVersion(kind) : start(kind, transactionVersion);
        try {
            String topic = TransactionsIT.createTopic(broker, "delayed-write", 1);
            TopicPartition partition = new TopicPartition(topic, 0);
            String transactionalId = TransactionsIT.unique("delayed-write");
            try (KafkaProducer<String, String> producer = TransactionsIT.transactionalProducer(broker,
                    transactionalId); Admin admin = TransactionsIT.admin(broker);
                 RawKafkaClient raw = RawKafkaClient.connect(broker)) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "k", "committed-1")).get(30, TimeUnit.SECONDS);
                TransactionDescription first = admin.describeTransactions(List.of(transactionalId))
                        .description(transactionalId).get(30, TimeUnit.SECONDS);
                producer.commitTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "k", "committed-2")).get(30, TimeUnit.SECONDS);

                // When: transaction 1's second write (sequence 1, its epoch) arrives now
                short version = (short) (transactionVersion >= 2 ? 12 : 11);
                ProduceResponseData response = raw.sendAndReceive(lateWrite(topic, transactionalId,
                        first.producerId(), (short) first.producerEpoch()), version, TIMEOUT);

                // Then
                ProduceResponseData.PartitionProduceResponse answer =
                        response.responses().get(0).partitionResponses().get(0);
                Errors error = Errors.forCode(answer.errorCode());
                System.out.printf("%s transaction.version=%d: late write answered %s (base offset %d)%n", kind,
                        transactionVersion, error, answer.baseOffset());
                assertThat(error).isEqualTo(transactionVersion >= 2 ? Errors.INVALID_PRODUCER_EPOCH : Errors.NONE);
                producer.commitTransaction();
                assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_COMMITTED))
                        .containsExactly("committed-1", "committed-2");
                assertThat(TransactionsIT.readToEnd(broker, topic, 1, IsolationLevel.READ_UNCOMMITTED))
                        .containsExactly("committed-1", "committed-2");
                assertThat(TransactionsIT.latest(admin, partition, IsolationLevel.READ_COMMITTED))
                        .isEqualTo(TransactionsIT.latest(admin, partition, IsolationLevel.READ_UNCOMMITTED));
            }
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        } finally {
            if (!shared) {
                broker.close();
            }
        }
    }

    /** The held-back Produce of transaction 1: one transactional record at sequence 1 with its epoch. */
    private static ProduceRequestData lateWrite(String topic, String transactionalId, long producerId, short epoch) {
        ByteBuffer buffer = MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, epoch, 1,
                new SimpleRecord("k".getBytes(StandardCharsets.UTF_8), "delayed".getBytes(StandardCharsets.UTF_8)))
                .buffer();
        byte[] batch = new byte[buffer.remaining()];
        buffer.get(batch);
        return new ProduceRequestData().setTransactionalId(transactionalId).setAcks((short) -1).setTimeoutMs(30_000)
                .setTopicData(List.of(new ProduceRequestData.TopicProduceData().setName(topic)
                        .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0)
                                .setRecords(Unpooled.wrappedBuffer(batch))))));
    }
}
