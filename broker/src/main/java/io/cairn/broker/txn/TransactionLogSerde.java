package io.cairn.broker.txn;

import io.cairn.broker.coordinator.CoordinatorSerde;
import io.cairn.broker.coordinator.CoordinatorRecord;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * The byte format of the transaction coordinator kind's records ({@link TransactionLog}) for the coordinator runtime.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
final class TransactionLogSerde implements CoordinatorSerde<CoordinatorRecord> {

    static final TransactionLogSerde INSTANCE = new TransactionLogSerde();

    private TransactionLogSerde() {
    }

    @Override
    public byte[] keyBytes(CoordinatorRecord record) {
        return TransactionLog.keyBytes(record);
    }

    @Override
    public byte[] valueBytes(CoordinatorRecord record) {
        return TransactionLog.valueBytes(record);
    }

    @Override
    public Optional<CoordinatorRecord> decode(ByteBuffer key, ByteBuffer valueOrNull) {
        return TransactionLog.decodeRecord(key, valueOrNull);
    }
}
