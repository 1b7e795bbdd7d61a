package io.cairn.compat.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.KafkaReferenceProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A TxnOffsetCommit of a transaction the producer already aborted (KIP-890: the group coordinator verifies it with
 * the transaction coordinator before writing) is refused with the same error on Cairn and on the reference Kafka, and
 * leaves no offset: with transaction.version 0 (verify_only, TxnOffsetCommit v3 and v4) and 2 (v5 adds the offsets
 * partition, with the epoch the abort bumped away).
 */
@Timeout(240)
@ExtendWith(BrokerLogsExtension.class)
class AbortedTxnOffsetCommitIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /**
     * One broker per kind formatted with transaction.version 0, shared by that kind's cases (own topic, id and group
     * each); transaction.version 2 is what a broker finalizes by default, so those cases use the kind's shared one.
     */
    private static final Map<String, BrokerProcess> BROKERS = new ConcurrentHashMap<>();

    static Stream<Arguments> cases() {
        return TransactionsIT.kinds().flatMap(kind -> Stream.of(
                Arguments.of(kind, 0, 3, Errors.INVALID_TXN_STATE),
                Arguments.of(kind, 0, 4, Errors.TRANSACTION_ABORTABLE),
                Arguments.of(kind, 2, 5, Errors.INVALID_PRODUCER_EPOCH)));
    }

    @AfterAll
    static void stopBrokers() {
        BROKERS.values().forEach(BrokerProcess::close);
        BROKERS.clear();
    }

    private static BrokerProcess broker(BrokerKind kind, int transactionVersion) throws Exception {
        if (transactionVersion == DelayedWriteIT.DEFAULT_TRANSACTION_VERSION) {
            return DelayedWriteIT.sharedAtDefaultVersion(kind);
        }
        return BROKERS.computeIfAbsent(kind + " transaction.version=" + transactionVersion,
                key -> start(kind, transactionVersion));
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

    @ParameterizedTest(name = "{0} transaction.version={1} TxnOffsetCommit v{2}")
    @MethodSource("cases")
    void aCommitOfAnAbortedTransactionIsRefused(BrokerKind kind, int transactionVersion, int version,
                                                Errors expected) throws Exception {
        // Given: a transaction that wrote a record and offsets of the group, then aborted, its markers written
        // (before that the offsets partition still has the transaction open, and a commit would join it)
        BrokerProcess broker = broker(kind, transactionVersion);
        String topic = TransactionsIT.createTopic(broker, "aborted-offsets", 1);
        TopicPartition partition = new TopicPartition(topic, 0);
        String transactionalId = TransactionsIT.unique("aborted-offsets");
        String group = TransactionsIT.unique("aborted-offsets-group");
        try (KafkaProducer<String, String> producer = TransactionsIT.transactionalProducer(broker,
                transactionalId); Admin admin = TransactionsIT.admin(broker);
             RawKafkaClient raw = RawKafkaClient.connect(broker)) {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(topic, 0, "k", "aborted")).get(30, TimeUnit.SECONDS);
            producer.sendOffsetsToTransaction(Map.of(partition, new OffsetAndMetadata(1L)),
                    new ConsumerGroupMetadata(group));
            TransactionDescription open = admin.describeTransactions(List.of(transactionalId))
                    .description(transactionalId).get(30, TimeUnit.SECONDS);
            producer.abortTransaction();
            await().atMost(TIMEOUT).until(() -> admin.describeTransactions(List.of(transactionalId))
                    .description(transactionalId).get(30, TimeUnit.SECONDS).state()
                    == TransactionState.COMPLETE_ABORT);

            // When: a TxnOffsetCommit of that transaction arrives now
            TxnOffsetCommitResponseData response = raw.sendAndReceive(lateCommit(topic, transactionalId, group,
                    open.producerId(), (short) open.producerEpoch()), (short) version, TIMEOUT);

            // Then
            Errors error = Errors.forCode(response.topics().get(0).partitions().get(0).errorCode());
            System.out.printf("%s transaction.version=%d: TxnOffsetCommit v%d of an aborted transaction "
                    + "answered %s%n", kind, transactionVersion, version, error);
            assertThat(error).isEqualTo(expected);
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS).get(partition)).isNull();
        }
        assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
    }

    private static TxnOffsetCommitRequestData lateCommit(String topic, String transactionalId, String group,
                                                         long producerId, short epoch) {
        return new TxnOffsetCommitRequestData().setTransactionalId(transactionalId).setGroupId(group)
                .setProducerId(producerId).setProducerEpoch(epoch).setGenerationId(-1).setMemberId("")
                .setTopics(List.of(new TxnOffsetCommitRequestTopic().setName(topic).setPartitions(List.of(
                        new TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1L)))));
    }
}
