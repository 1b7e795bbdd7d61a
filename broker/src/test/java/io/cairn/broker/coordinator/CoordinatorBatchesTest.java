package io.cairn.broker.coordinator;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.GroupRecordSerde;
import io.cairn.broker.group.GroupRecords;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.TimestampType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.junit.jupiter.api.Test;

class CoordinatorBatchesTest {

    private static final long NOW = 1_764_500_000_000L;

    private static final CoordinatorRecord OFFSET = GroupRecords.offset(
            new OffsetCommitKey().setGroup("g").setTopic("orders").setPartition(2),
            new OffsetCommitValue().setOffset(10L).setLeaderEpoch(1).setMetadata("").setCommitTimestamp(NOW));
    private static final CoordinatorRecord GROUP = GroupRecords.group("g", new GroupMetadataValue()
            .setProtocolType("consumer").setGeneration(1).setProtocol("range").setLeader("m")
            .setCurrentStateTimestamp(NOW).setMembers(List.of(new GroupMetadataValue.MemberMetadata()
                    .setMemberId("m").setClientId("c").setClientHost("/h").setRebalanceTimeout(1000)
                    .setSessionTimeout(500).setSubscription(new byte[] {1}).setAssignment(new byte[] {2}))));
    private static final CoordinatorRecord TOMBSTONE = GroupRecords.offsetTombstone(
            new OffsetCommitKey().setGroup("g").setTopic("orders").setPartition(3));

    @Test
    void recordsBecomeOneUncompressedCreateTimeBatchWithoutProducerAtOffsetZero() {
        // Given
        List<CoordinatorRecord> records = List.of(OFFSET, GROUP, TOMBSTONE);

        // When
        ByteBuffer batchBytes = batch(records);

        // Then
        ByteBuf buf = Unpooled.wrappedBuffer(batchBytes.duplicate());
        try {
            RecordBatch batch = RecordBatch.wrap(buf);
            batch.ensureValid();
            assertThat(batch.sizeInBytes()).isEqualTo(batchBytes.remaining());
            assertThat(batch.magic()).isEqualTo((byte) 2);
            assertThat(batch.baseOffset()).isZero();
            assertThat(batch.lastOffsetDelta()).isEqualTo(2);
            assertThat(batch.compressionType()).isEqualTo(CompressionType.NONE);
            assertThat(batch.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
            assertThat(batch.producerId()).isEqualTo(RecordBatch.NO_PRODUCER_ID);
            assertThat(batch.isTransactional()).isFalse();
            assertThat(batch.isControlBatch()).isFalse();
            assertThat(batch.maxTimestamp()).isEqualTo(NOW);
            List<Record> decoded = batch.records();
            assertThat(decoded).hasSize(3);
            for (int i = 0; i < 3; i++) {
                Record record = decoded.get(i);
                assertThat(record.offset()).isEqualTo(i);
                assertThat(record.timestamp()).isEqualTo(NOW);
                assertThat(record.headers()).isEmpty();
                assertThat(record.key()).isEqualTo(GroupRecordSerde.keyBytes(records.get(i)));
                assertThat(record.value()).isEqualTo(GroupRecordSerde.valueBytes(records.get(i)));
                assertThat(GroupRecordSerde.decode(record.keyBuffer(), record.valueBuffer())).contains(records.get(i));
            }
            assertThat(decoded.get(2).hasValue()).isFalse();
        } finally {
            buf.release();
        }
    }

    @Test
    void kafkasRecordParserReadsTheBatchAndItsRecords() {
        // Given
        ByteBuffer batchBytes = batch(List.of(OFFSET, TOMBSTONE));

        // When
        List<MutableRecordBatch> batches = new ArrayList<>();
        MemoryRecords.readableRecords(batchBytes).batches().forEach(batches::add);

        // Then
        assertThat(batches).hasSize(1);
        MutableRecordBatch batch = batches.get(0);
        batch.ensureValid();
        assertThat(batch.countOrNull()).isEqualTo(2);
        List<org.apache.kafka.common.record.Record> records = new ArrayList<>();
        batch.forEach(records::add);
        assertThat(records.get(0).hasKey()).isTrue();
        assertThat(records.get(0).hasValue()).isTrue();
        assertThat(records.get(1).hasValue()).isFalse();
        assertThat(records.get(1).offset()).isEqualTo(1L);
    }

    @Test
    void anEmptyListIsRefused() {
        assertThatThrownBy(() -> CoordinatorBatches.toBatch(List.of(), NOW, -1L, (short) -1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aRecordThatDoesNotSerializeIsRefused() {
        // Given: an offset key written as a group record
        CoordinatorRecord wrong = new CoordinatorRecord(OFFSET.key(), (short) 2, null, (short) 3);

        // When / Then
        assertThatThrownBy(() -> batch(List.of(OFFSET, wrong)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static ByteBuffer batch(List<CoordinatorRecord> records) {
        return CoordinatorBatches.toBatch(CoordinatorBatches.encode(GroupRecordSerde.SERDE, records), NOW, -1L,
                (short) -1);
    }
}
