package io.cairn.broker.txn;

import io.cairn.broker.coordinator.CoordinatorRecordSerde;
import io.cairn.broker.coordinator.CoordinatorSerde.MalformedRecordException;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.txn.record.TransactionLogKey;
import io.cairn.broker.txn.record.TransactionLogValue;
import io.cairn.metadata.image.TopicPartition;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The byte format of {@code __transaction_state} records, Kafka's {@code TransactionLog}:
 *
 * <pre>
 *   key:   int16 record type (0) | TransactionLogKey v0   = string transactional_id
 *   value: int16 version (0 | 1) | TransactionLogValue    = int64 producer_id, int16 producer_epoch,
 *          int32 timeout_ms, int8 state id, nullable [topic, [int32 partition]], int64 last_update_ms,
 *          int64 start_ms (version 1: compact encodings and tagged previous/next producer id, next epoch and
 *          client transaction.version)
 *   a null value: the transactional id expired (Dead)
 * </pre>
 *
 * <p>Cairn writes what Kafka 4.1 writes: value version 0 while {@code transaction.version} 0 is finalized, version 1
 * (with the client's transaction.version tagged; the previous and next producer ids are left at their defaults, as
 * Kafka leaves them) from transaction.version 1; the partitions of an Empty state as null. It reads versions 0 and 1.
 * Batches are magic 2, uncompressed (Kafka enforces no compression on this topic), without producer (the coordinator
 * runtime writes them, {@link TransactionLogSerde} encodes the records). Partitions are written grouped by topic in
 * topic and partition order.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class TransactionLog {

    /** The record type of a transactional id's state (Kafka's {@code CoordinatorRecordType.TRANSACTION_LOG}). */
    public static final short TRANSACTION_LOG_KEY = 0;
    /** The value version written while transaction.version 0 is finalized. */
    public static final short VALUE_VERSION = 0;

    private TransactionLog() {
    }

    /** One decoded record: a transactional id and its state, or null for a tombstone. Immutable. */
    public record Entry(String transactionalId, TxnTransitMetadata state) {
    }

    /** Kafka's {@code TransactionVersion.transactionLogValueVersion}: 1 from transaction.version 1, else 0. */
    public static short valueVersion(short transactionVersion) {
        return transactionVersion >= 1 ? (short) 1 : VALUE_VERSION;
    }

    /** The record of {@code transit} for {@code transactionalId} at value version 0. */
    public static CoordinatorRecord record(String transactionalId, TxnTransitMetadata transit) {
        return record(transactionalId, transit, VALUE_VERSION);
    }

    /** The record of {@code transit} for {@code transactionalId}: a tombstone when it is Dead. */
    public static CoordinatorRecord record(String transactionalId, TxnTransitMetadata transit, short valueVersion) {
        TransactionLogKey key = new TransactionLogKey().setTransactionalId(transactionalId);
        if (transit.state() == TransactionState.DEAD) {
            return new CoordinatorRecord(key, TRANSACTION_LOG_KEY, null, valueVersion);
        }
        if (transit.state() == TransactionState.EMPTY && !transit.topicPartitions().isEmpty()) {
            throw new IllegalStateException("An Empty transaction has no partitions: " + transit);
        }
        List<TransactionLogValue.PartitionsSchema> partitions = null;
        if (transit.state() != TransactionState.EMPTY) {
            partitions = new ArrayList<>();
            for (Map.Entry<String, List<Integer>> topic : byTopic(transit.topicPartitions()).entrySet()) {
                partitions.add(new TransactionLogValue.PartitionsSchema().setTopic(topic.getKey())
                        .setPartitionIds(topic.getValue()));
            }
        }
        TransactionLogValue value = new TransactionLogValue().setProducerId(transit.producerId())
                .setProducerEpoch(transit.producerEpoch()).setTransactionTimeoutMs(transit.txnTimeoutMs())
                .setTransactionStatus(transit.state().id()).setTransactionPartitions(partitions)
                .setTransactionLastUpdateTimestampMs(transit.txnLastUpdateTimestamp())
                .setTransactionStartTimestampMs(transit.txnStartTimestamp());
        if (valueVersion >= 1) {
            value.setClientTransactionVersion(transit.clientTransactionVersion());
        }
        return new CoordinatorRecord(key, TRANSACTION_LOG_KEY, value, valueVersion);
    }

    private static Map<String, List<Integer>> byTopic(Set<TopicPartition> partitions) {
        Map<String, List<Integer>> byTopic = new TreeMap<>();
        partitions.stream().sorted(Comparator.comparing(TopicPartition::topic)
                .thenComparingInt(TopicPartition::partition))
                .forEach(tp -> byTopic.computeIfAbsent(tp.topic(), t -> new ArrayList<>()).add(tp.partition()));
        return byTopic;
    }

    /** The key bytes of {@code record}. */
    public static byte[] keyBytes(CoordinatorRecord record) {
        if (!(record.key() instanceof TransactionLogKey) || record.keyVersion() != TRANSACTION_LOG_KEY) {
            throw new IllegalArgumentException("Not a transaction log key: " + record.key());
        }
        return CoordinatorRecordSerde.prefixed(TRANSACTION_LOG_KEY, (short) 0, record.key());
    }

    /** The value bytes of {@code record}, or null for a tombstone. */
    public static byte[] valueBytes(CoordinatorRecord record) {
        if (record.value() == null) {
            return null;
        }
        if (!(record.value() instanceof TransactionLogValue)) {
            throw new IllegalArgumentException("Not a transaction log value: " + record.value());
        }
        short version = record.valueVersion();
        if (version < 0 || version > 1) {
            throw new IllegalArgumentException("Unsupported version " + version + " of TransactionLogValue");
        }
        return CoordinatorRecordSerde.prefixed(version, version, record.value());
    }

    /**
     * Decodes one record of {@code __transaction_state} into its entry. Neither buffer's position moves.
     *
     * @return the entry, or empty when the key's record type is not 0 (which the loader skips)
     * @throws MalformedRecordException when the key or value is too short, has an unknown version or state, or does
     *                                  not decode
     */
    public static Optional<Entry> decode(ByteBuffer key, ByteBuffer valueOrNull) {
        return decodeRecord(key, valueOrNull).map(TransactionLog::entry);
    }

    /**
     * Decodes one record of {@code __transaction_state} at the versions it was written with, checking that its
     * state is one Kafka knows. Neither buffer's position moves.
     *
     * @return the record, or empty when the key's record type is not 0 (which the loader skips)
     * @throws MalformedRecordException as {@link #decode}
     */
    public static Optional<CoordinatorRecord> decodeRecord(ByteBuffer key, ByteBuffer valueOrNull) {
        if (key == null) {
            throw new MalformedRecordException("Record has no key");
        }
        ByteBuf keyBuf = Unpooled.wrappedBuffer(key.duplicate());
        ByteBuf valueBuf = valueOrNull == null ? null : Unpooled.wrappedBuffer(valueOrNull.duplicate());
        try {
            if (CoordinatorRecordSerde.readPrefix(keyBuf, "key") != TRANSACTION_LOG_KEY) {
                return Optional.empty();
            }
            TransactionLogKey keyMessage = new TransactionLogKey();
            CoordinatorRecordSerde.read(keyMessage, keyBuf, (short) 0, "key");
            String transactionalId = keyMessage.transactionalId();
            if (valueBuf == null) {
                return Optional.of(new CoordinatorRecord(keyMessage, TRANSACTION_LOG_KEY, null, VALUE_VERSION));
            }
            short version = CoordinatorRecordSerde.readPrefix(valueBuf, "value");
            if (version < 0 || version > 1) {
                throw new MalformedRecordException("Unsupported version " + version + " of the state of "
                        + transactionalId);
            }
            TransactionLogValue value = new TransactionLogValue();
            CoordinatorRecordSerde.read(value, valueBuf, version, "value of " + transactionalId);
            transit(transactionalId, value);
            return Optional.of(new CoordinatorRecord(keyMessage, TRANSACTION_LOG_KEY, value, version));
        } finally {
            keyBuf.release();
            if (valueBuf != null) {
                valueBuf.release();
            }
        }
    }

    /**
     * The entry of a record {@link #record} made or {@link #decodeRecord} read.
     *
     * @throws MalformedRecordException when its state is unknown
     */
    public static Entry entry(CoordinatorRecord record) {
        String transactionalId = ((TransactionLogKey) record.key()).transactionalId();
        return new Entry(transactionalId, record.value() == null ? null
                : transit(transactionalId, (TransactionLogValue) record.value()));
    }

    private static TxnTransitMetadata transit(String transactionalId, TransactionLogValue value) {
        TransactionState state = TransactionState.fromId(value.transactionStatus()).orElseThrow(() ->
                new MalformedRecordException("Unknown state " + value.transactionStatus() + " of "
                        + transactionalId));
        Set<TopicPartition> partitions = new HashSet<>();
        if (state != TransactionState.EMPTY && value.transactionPartitions() != null) {
            for (TransactionLogValue.PartitionsSchema topic : value.transactionPartitions()) {
                for (int partition : topic.partitionIds()) {
                    partitions.add(new TopicPartition(topic.topic(), partition));
                }
            }
        }
        return new TxnTransitMetadata(value.producerId(), value.previousProducerId(), value.nextProducerId(),
                value.producerEpoch(), TransactionMetadata.NO_PRODUCER_EPOCH, value.transactionTimeoutMs(), state,
                partitions, value.transactionStartTimestampMs(), value.transactionLastUpdateTimestampMs(),
                value.clientTransactionVersion());
    }
}
