package io.cairn.broker.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotKey;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotValue;
import org.apache.kafka.coordinator.share.generated.ShareUpdateKey;
import org.apache.kafka.coordinator.share.generated.ShareUpdateValue;
import org.junit.jupiter.api.Test;

/** The bytes of {@code __share_group_state} records against Kafka 4.1.1's generated classes, both ways. */
class ShareRecordsTest {

    private static final Uuid TOPIC = Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAQ");
    private static final SharePartitionKey KEY = new SharePartitionKey("group", TOPIC, 3);
    private final ShareRecords serde = ShareRecords.SERDE;

    @Test
    void snapshotIsKafkasBytes() {
        CoordinatorRecord record = ShareRecords.snapshot(KEY, new ShareState(2, 5, 7, 100L,
            List.of(new StateBatch(100L, 109L, (byte) 2, (short) 1), new StateBatch(110L, 110L, (byte) 4, (short) 5)),
            1_000L, 2_000L));
        ByteBuffer key = ByteBuffer.wrap(serde.keyBytes(record));
        assertThat(key.getShort()).isEqualTo((short) 0);
        ShareSnapshotKey kafkaKey = new ShareSnapshotKey(new ByteBufferAccessor(key), (short) 0);
        assertThat(kafkaKey.groupId()).isEqualTo("group");
        assertThat(kafkaKey.topicId().toString()).isEqualTo(TOPIC.toString());
        assertThat(kafkaKey.partition()).isEqualTo(3);

        ShareSnapshotValue expected = new ShareSnapshotValue().setSnapshotEpoch(2).setStateEpoch(5).setLeaderEpoch(7)
            .setStartOffset(100L).setCreateTimestamp(1_000L).setWriteTimestamp(2_000L).setStateBatches(List.of(
                new ShareSnapshotValue.StateBatch().setFirstOffset(100L).setLastOffset(109L).setDeliveryState((byte) 2)
                    .setDeliveryCount((short) 1),
                new ShareSnapshotValue.StateBatch().setFirstOffset(110L).setLastOffset(110L).setDeliveryState((byte) 4)
                    .setDeliveryCount((short) 5)));
        byte[] kafkaValue = MessageUtil.toVersionPrefixedBytes((short) 0, expected);
        assertThat(serde.valueBytes(record)).isEqualTo(kafkaValue);

        CoordinatorRecord decoded = serde.decode(ByteBuffer.wrap(serde.keyBytes(record)), ByteBuffer.wrap(kafkaValue))
            .orElseThrow();
        assertThat(decoded.keyVersion()).isEqualTo(ShareRecords.SNAPSHOT);
        assertThat(decoded.value()).isEqualTo(record.value());
        assertThat(ShareRecords.key(decoded)).isEqualTo(KEY);
    }

    @Test
    void updateAndTombstoneAreKafkasBytes() {
        CoordinatorRecord record = ShareRecords.update(KEY, 4, 9, -1L,
            List.of(new StateBatch(5L, 6L, (byte) 0, (short) 2)));
        ByteBuffer key = ByteBuffer.wrap(serde.keyBytes(record));
        assertThat(key.getShort()).isEqualTo((short) 1);
        ShareUpdateKey kafkaKey = new ShareUpdateKey(new ByteBufferAccessor(key), (short) 0);
        assertThat(kafkaKey.groupId()).isEqualTo("group");
        ShareUpdateValue expected = new ShareUpdateValue().setSnapshotEpoch(4).setLeaderEpoch(9).setStartOffset(-1L)
            .setStateBatches(List.of(new ShareUpdateValue.StateBatch().setFirstOffset(5L).setLastOffset(6L)
                .setDeliveryState((byte) 0).setDeliveryCount((short) 2)));
        assertThat(serde.valueBytes(record)).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 0, expected));

        CoordinatorRecord tombstone = ShareRecords.tombstone(KEY);
        assertThat(serde.valueBytes(tombstone)).isNull();
        CoordinatorRecord decoded = serde.decode(ByteBuffer.wrap(serde.keyBytes(tombstone)), null).orElseThrow();
        assertThat(decoded.value()).isNull();
        assertThat(ShareRecords.key(decoded)).isEqualTo(KEY);
    }

    @Test
    void otherRecordTypesAreSkipped() {
        ByteBuffer key = ByteBuffer.allocate(2).putShort(0, (short) 7);
        assertThat(serde.decode(key, null)).isEmpty();
    }
}
