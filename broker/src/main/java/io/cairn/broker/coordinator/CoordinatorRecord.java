package io.cairn.broker.coordinator;

import io.cairn.wire.protocol.ApiMessage;

/**
 * One record of a coordinator kind's internal topic ({@code __consumer_offsets}, {@code __transaction_state}):
 * a key and its value at the versions they are written with, Kafka's {@code CoordinatorRecord}. A null value is a
 * tombstone (the entity is deleted, and compaction eventually drops the key). Each kind's serde decides what the
 * versions mean: for both of Kafka's topics the key version is the record type that prefixes the key bytes and the
 * value version prefixes the value bytes ({@link CoordinatorRecordSerde}). Immutable.
 *
 * @param key          the key message
 * @param keyVersion   the key's version, which is the record type in both of Kafka's coordinator topics
 * @param value        the value message, or null for a tombstone
 * @param valueVersion the version the value is written with
 */
public record CoordinatorRecord(ApiMessage key, short keyVersion, ApiMessage value, short valueVersion) {
}
