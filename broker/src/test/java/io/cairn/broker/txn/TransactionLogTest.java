package io.cairn.broker.txn;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.coordinator.CoordinatorSerde;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.metadata.image.TopicPartition;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogKey;
import org.apache.kafka.coordinator.transaction.generated.TransactionLogValue;
import org.junit.jupiter.api.Test;

/**
 * Byte-for-byte compatibility of {@link TransactionLog} with Kafka 4.1.1's own {@code __transaction_state} records
 * (its generated classes in {@code org.apache.kafka.coordinator.transaction.generated}, serialised as Kafka's
 * {@code TransactionLog} does: keys with {@code MessageUtil.toCoordinatorTypePrefixedBytes}, values with
 * {@code MessageUtil.toVersionPrefixedBytes} at version 0 while transaction.version 0 is finalized).
 */
class TransactionLogTest {

    private static final long NOW = 1_764_600_000_000L;

    @Test
    void anOngoingTransactionIsWrittenAsKafkaWritesIt() {
        // Given
        TxnTransitMetadata ongoing = new TxnTransitMetadata(4_000L, -1L, (short) 7, (short) 6, 60_000,
                TransactionState.ONGOING, Set.of(new TopicPartition("orders", 2), new TopicPartition("orders", 0),
                new TopicPartition("audit", 5)), NOW - 10, NOW);

        // When
        CoordinatorRecord record = TransactionLog.record("txn-a", ongoing);
        byte[] key = TransactionLog.keyBytes(record);
        byte[] value = TransactionLog.valueBytes(record);

        // Then
        assertThat(key).isEqualTo(MessageUtil.toCoordinatorTypePrefixedBytes(
                new TransactionLogKey().setTransactionalId("txn-a")));
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 0, new TransactionLogValue()
                .setProducerId(4_000L).setProducerEpoch((short) 7).setTransactionTimeoutMs(60_000)
                .setTransactionStatus((byte) 1).setTransactionPartitions(List.of(
                        new TransactionLogValue.PartitionsSchema().setTopic("audit").setPartitionIds(List.of(5)),
                        new TransactionLogValue.PartitionsSchema().setTopic("orders").setPartitionIds(List.of(0, 2))))
                .setTransactionLastUpdateTimestampMs(NOW).setTransactionStartTimestampMs(NOW - 10)));
    }

    @Test
    void anEmptyStateIsWrittenWithNullPartitionsAsKafkaWritesIt() {
        // Given
        TxnTransitMetadata empty = new TxnTransitMetadata(9L, -1L, (short) 0, (short) -1, 900_000,
                TransactionState.EMPTY, Set.of(), -1L, NOW);

        // When
        byte[] value = TransactionLog.valueBytes(TransactionLog.record("t", empty));

        // Then
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 0, new TransactionLogValue()
                .setProducerId(9L).setProducerEpoch((short) 0).setTransactionTimeoutMs(900_000)
                .setTransactionStatus((byte) 0).setTransactionPartitions(null)
                .setTransactionLastUpdateTimestampMs(NOW).setTransactionStartTimestampMs(-1L)));
    }

    @Test
    void kafkasFlexibleVersion1ValueWithTaggedFieldsIsRead() {
        // Given: what Kafka writes once transaction.version 1 or 2 is finalized
        byte[] key = MessageUtil.toCoordinatorTypePrefixedBytes(new TransactionLogKey().setTransactionalId("tv2"));
        byte[] value = MessageUtil.toVersionPrefixedBytes((short) 1, new TransactionLogValue().setProducerId(11L)
                .setPreviousProducerId(10L).setNextProducerId(12L).setNextProducerEpoch((short) 0)
                .setProducerEpoch((short) 3).setTransactionTimeoutMs(1_000).setTransactionStatus((byte) 4)
                .setTransactionPartitions(List.of()).setTransactionLastUpdateTimestampMs(NOW)
                .setTransactionStartTimestampMs(NOW - 5).setClientTransactionVersion((short) 2));

        // When
        TransactionLog.Entry entry = TransactionLog.decode(ByteBuffer.wrap(key), ByteBuffer.wrap(value))
                .orElseThrow();

        // Then
        assertThat(entry.transactionalId()).isEqualTo("tv2");
        assertThat(entry.state()).isEqualTo(new TxnTransitMetadata(11L, 10L, 12L, (short) 3, (short) -1, 1_000,
                TransactionState.COMPLETE_COMMIT, Set.of(), NOW - 5, NOW, (short) 2));
    }

    @Test
    void ourVersion1ValueIsWhatKafkaWrites() {
        // Given
        TxnTransitMetadata state = new TxnTransitMetadata(1L, -1L, (short) 2, (short) -1, 5_000,
                TransactionState.PREPARE_ABORT, Set.of(new TopicPartition("t", 1)), NOW, NOW);
        CoordinatorRecord v0 = TransactionLog.record("x", state);

        // When
        byte[] value = TransactionLog.valueBytes(new CoordinatorRecord(v0.key(), v0.keyVersion(), v0.value(),
                (short) 1));

        // Then
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 1, new TransactionLogValue()
                .setProducerId(1L).setProducerEpoch((short) 2).setTransactionTimeoutMs(5_000)
                .setTransactionStatus((byte) 3).setTransactionPartitions(List.of(
                        new TransactionLogValue.PartitionsSchema().setTopic("t").setPartitionIds(List.of(1))))
                .setTransactionLastUpdateTimestampMs(NOW).setTransactionStartTimestampMs(NOW)));
    }

    @Test
    void atTransactionVersion2TheValueIsVersion1WithTheClientsTransactionVersionAsKafkaWritesIt() {
        // Given
        TxnTransitMetadata state = new TxnTransitMetadata(1L, -1L, 9L, (short) 2, (short) 1, 5_000,
                TransactionState.PREPARE_COMMIT, Set.of(new TopicPartition("t", 1)), NOW, NOW, (short) 2);

        // When
        CoordinatorRecord record = TransactionLog.record("x", state, TransactionLog.valueVersion((short) 2));

        // Then: Kafka 4.1 writes the client's transaction.version, not the previous or next producer id
        assertThat(record.valueVersion()).isEqualTo((short) 1);
        assertThat(TransactionLog.valueBytes(record)).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 1,
                new TransactionLogValue().setProducerId(1L).setProducerEpoch((short) 2).setTransactionTimeoutMs(5_000)
                .setTransactionStatus((byte) 2).setTransactionPartitions(List.of(
                        new TransactionLogValue.PartitionsSchema().setTopic("t").setPartitionIds(List.of(1))))
                .setTransactionLastUpdateTimestampMs(NOW).setTransactionStartTimestampMs(NOW)
                .setClientTransactionVersion((short) 2)));
    }

    @Test
    void kafkaReadsOurValueBack() {
        // Given
        TxnTransitMetadata state = new TxnTransitMetadata(77L, -1L, (short) 1, (short) 0, 10_000,
                TransactionState.PREPARE_COMMIT, Set.of(new TopicPartition("p", 3)), NOW - 1, NOW);
        ByteBuffer value = ByteBuffer.wrap(TransactionLog.valueBytes(TransactionLog.record("id", state)));

        // When
        short version = value.getShort();
        TransactionLogValue kafka = new TransactionLogValue(new ByteBufferAccessor(value), version);

        // Then
        assertThat(version).isZero();
        assertThat(kafka.producerId()).isEqualTo(77L);
        assertThat(kafka.transactionStatus()).isEqualTo((byte) 2);
        assertThat(kafka.transactionPartitions()).singleElement().satisfies(p -> {
            assertThat(p.topic()).isEqualTo("p");
            assertThat(p.partitionIds()).containsExactly(3);
        });
    }

    @Test
    void aDeadIdIsATombstoneThatDecodesAsOne() {
        // Given
        TxnTransitMetadata dead = new TxnTransitMetadata(5L, -1L, (short) 0, (short) -1, 1_000,
                TransactionState.DEAD, Set.of(), -1L, NOW);
        CoordinatorRecord record = TransactionLog.record("gone", dead);

        // When
        TransactionLog.Entry entry = TransactionLog.decode(ByteBuffer.wrap(TransactionLog.keyBytes(record)), null)
                .orElseThrow();

        // Then
        assertThat(TransactionLog.valueBytes(record)).isNull();
        assertThat(entry).isEqualTo(new TransactionLog.Entry("gone", null));
    }

    @Test
    void anUnknownKeyTypeIsSkippedAndAnUnknownValueVersionIsMalformed() {
        // Given
        byte[] key = MessageUtil.toCoordinatorTypePrefixedBytes(new TransactionLogKey().setTransactionalId("k"));
        ByteBuffer otherType = ByteBuffer.allocate(4).putShort((short) 5).putShort((short) 0).flip();
        ByteBuffer badValue = ByteBuffer.allocate(2).putShort((short) 9).flip();

        // When / Then
        assertThat(TransactionLog.decode(otherType, null)).isEmpty();
        assertThatThrownBy(() -> TransactionLog.decode(ByteBuffer.wrap(key), badValue))
                .isInstanceOf(CoordinatorSerde.MalformedRecordException.class).hasMessageContaining("version 9");
    }
}
