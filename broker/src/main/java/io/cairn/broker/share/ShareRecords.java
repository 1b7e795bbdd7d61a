package io.cairn.broker.share;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorRecordSerde;
import io.cairn.broker.coordinator.CoordinatorSerde;
import io.cairn.broker.share.record.ShareSnapshotKey;
import io.cairn.broker.share.record.ShareSnapshotValue;
import io.cairn.broker.share.record.ShareUpdateKey;
import io.cairn.broker.share.record.ShareUpdateValue;
import io.cairn.wire.protocol.ApiMessage;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The records of {@code __share_group_state}, Kafka's {@code ShareCoordinatorRecordHelpers} and
 * {@code ShareCoordinatorRecordSerde}:
 *
 * <pre>
 *   key:   int16 record type | ShareSnapshotKey v0 (type 0) or ShareUpdateKey v0 (type 1)
 *                              = string group_id, uuid topic_id, int32 partition
 *   value: int16 version (0) | ShareSnapshotValue v0 = snapshot_epoch, state_epoch, leader_epoch, start_offset,
 *                                create_timestamp, write_timestamp, [first, last, delivery_state, delivery_count]
 *                            | ShareUpdateValue v0   = snapshot_epoch, leader_epoch, start_offset (-1: unchanged),
 *                                [first, last, delivery_state, delivery_count]
 *   a snapshot key with no value: the share-partition's state was deleted
 * </pre>
 *
 * Record types other than 0 and 1 are skipped when loading, as Kafka skips them.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class ShareRecords implements CoordinatorSerde<CoordinatorRecord> {

    /** The record type of a snapshot (Kafka's {@code SHARE_SNAPSHOT}). */
    public static final short SNAPSHOT = 0;
    /** The record type of an update (Kafka's {@code SHARE_UPDATE}). */
    public static final short UPDATE = 1;
    /** The one value version of both. */
    public static final short VALUE_VERSION = 0;

    static final ShareRecords SERDE = new ShareRecords();

    private ShareRecords() {
    }

    /** The snapshot record of {@code key}: its whole state. */
    public static CoordinatorRecord snapshot(SharePartitionKey key, ShareState state) {
        List<ShareSnapshotValue.StateBatch> batches = new ArrayList<>(state.stateBatches().size());
        for (StateBatch b : state.stateBatches()) {
            batches.add(new ShareSnapshotValue.StateBatch().setFirstOffset(b.firstOffset())
                .setLastOffset(b.lastOffset()).setDeliveryState(b.deliveryState()).setDeliveryCount(b.deliveryCount()));
        }
        ShareSnapshotValue value = new ShareSnapshotValue().setSnapshotEpoch(state.snapshotEpoch())
            .setStateEpoch(state.stateEpoch()).setLeaderEpoch(state.leaderEpoch()).setStartOffset(state.startOffset())
            .setCreateTimestamp(state.createTimestamp()).setWriteTimestamp(state.writeTimestamp())
            .setStateBatches(batches);
        return new CoordinatorRecord(snapshotKey(key), SNAPSHOT, value, VALUE_VERSION);
    }

    /** The update record of {@code key}: the leader epoch, the start offset (-1: unchanged) and changed batches. */
    public static CoordinatorRecord update(SharePartitionKey key, int snapshotEpoch, int leaderEpoch, long startOffset,
                                           List<StateBatch> changed) {
        List<ShareUpdateValue.StateBatch> batches = new ArrayList<>(changed.size());
        for (StateBatch b : changed) {
            batches.add(new ShareUpdateValue.StateBatch().setFirstOffset(b.firstOffset())
                .setLastOffset(b.lastOffset()).setDeliveryState(b.deliveryState()).setDeliveryCount(b.deliveryCount()));
        }
        ShareUpdateValue value = new ShareUpdateValue().setSnapshotEpoch(snapshotEpoch).setLeaderEpoch(leaderEpoch)
            .setStartOffset(startOffset).setStateBatches(batches);
        ShareUpdateKey updateKey = new ShareUpdateKey().setGroupId(key.groupId()).setTopicId(key.topicId())
            .setPartition(key.partition());
        return new CoordinatorRecord(updateKey, UPDATE, value, VALUE_VERSION);
    }

    /** The tombstone of {@code key}: a snapshot key without value (Kafka's {@code newShareStateTombstoneRecord}). */
    public static CoordinatorRecord tombstone(SharePartitionKey key) {
        return new CoordinatorRecord(snapshotKey(key), SNAPSHOT, null, VALUE_VERSION);
    }

    private static ShareSnapshotKey snapshotKey(SharePartitionKey key) {
        return new ShareSnapshotKey().setGroupId(key.groupId()).setTopicId(key.topicId())
            .setPartition(key.partition());
    }

    /** The share-partition a record of this kind is about. */
    public static SharePartitionKey key(CoordinatorRecord record) {
        ApiMessage key = record.key();
        if (key instanceof ShareSnapshotKey k) {
            return new SharePartitionKey(k.groupId(), k.topicId(), k.partition());
        }
        if (key instanceof ShareUpdateKey k) {
            return new SharePartitionKey(k.groupId(), k.topicId(), k.partition());
        }
        throw new IllegalArgumentException("Not a share state key: " + key);
    }

    /** The state batches of a snapshot value. */
    static List<StateBatch> batches(ShareSnapshotValue value) {
        List<StateBatch> batches = new ArrayList<>(value.stateBatches().size());
        value.stateBatches().forEach(b -> batches.add(new StateBatch(b.firstOffset(), b.lastOffset(),
            b.deliveryState(), b.deliveryCount())));
        return batches;
    }

    /** The state batches of an update value. */
    static List<StateBatch> batches(ShareUpdateValue value) {
        List<StateBatch> batches = new ArrayList<>(value.stateBatches().size());
        value.stateBatches().forEach(b -> batches.add(new StateBatch(b.firstOffset(), b.lastOffset(),
            b.deliveryState(), b.deliveryCount())));
        return batches;
    }

    @Override
    public byte[] keyBytes(CoordinatorRecord record) {
        boolean snapshot = record.keyVersion() == SNAPSHOT && record.key() instanceof ShareSnapshotKey;
        boolean update = record.keyVersion() == UPDATE && record.key() instanceof ShareUpdateKey;
        if (!snapshot && !update) {
            throw new IllegalArgumentException("Not a share state key: " + record.key());
        }
        return CoordinatorRecordSerde.prefixed(record.keyVersion(), (short) 0, record.key());
    }

    @Override
    public byte[] valueBytes(CoordinatorRecord record) {
        if (record.value() == null) {
            return null;
        }
        if (record.valueVersion() != VALUE_VERSION) {
            throw new IllegalArgumentException("Unsupported version " + record.valueVersion() + " of "
                + record.value().getClass().getSimpleName());
        }
        return CoordinatorRecordSerde.prefixed(VALUE_VERSION, VALUE_VERSION, record.value());
    }

    @Override
    public Optional<CoordinatorRecord> decode(ByteBuffer key, ByteBuffer valueOrNull) {
        if (key == null) {
            throw new MalformedRecordException("Record has no key");
        }
        ByteBuf keyBuf = Unpooled.wrappedBuffer(key.duplicate());
        ByteBuf valueBuf = valueOrNull == null ? null : Unpooled.wrappedBuffer(valueOrNull.duplicate());
        try {
            short type = CoordinatorRecordSerde.readPrefix(keyBuf, "key");
            ApiMessage keyMessage;
            ApiMessage value;
            if (type == SNAPSHOT) {
                keyMessage = new ShareSnapshotKey();
                value = new ShareSnapshotValue();
            } else if (type == UPDATE) {
                keyMessage = new ShareUpdateKey();
                value = new ShareUpdateValue();
            } else {
                return Optional.empty();
            }
            CoordinatorRecordSerde.read(keyMessage, keyBuf, (short) 0, "key");
            if (valueBuf == null) {
                return Optional.of(new CoordinatorRecord(keyMessage, type, null, VALUE_VERSION));
            }
            short version = CoordinatorRecordSerde.readPrefix(valueBuf, "value");
            if (version != VALUE_VERSION) {
                throw new MalformedRecordException("Unsupported version " + version + " of a share state value");
            }
            CoordinatorRecordSerde.read(value, valueBuf, version, "value of " + keyMessage);
            return Optional.of(new CoordinatorRecord(keyMessage, type, value, version));
        } finally {
            keyBuf.release();
            if (valueBuf != null) {
                valueBuf.release();
            }
        }
    }
}
