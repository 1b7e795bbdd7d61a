package io.cairn.wire.record;

import io.cairn.wire.record.KafkaInterop.BatchSpec;
import io.cairn.wire.record.KafkaInterop.SampleRecord;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static io.cairn.wire.record.KafkaInterop.assertSameHeader;
import static io.cairn.wire.record.KafkaInterop.cairnBatch;
import static io.cairn.wire.record.KafkaInterop.kafkaBatch;
import static io.cairn.wire.record.KafkaInterop.sampleRecords;
import static org.assertj.core.api.Assertions.assertThat;

/** Differential: batches built by Cairn's {@link RecordBatchBuilder} read by kafka-clients with identical content. */
@ExtendWith(NettyLeakCheck.class)
class CairnBatchesReadByKafkaTest {

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void cairnBatchWithKeysNullsAndHeadersShouldReadIdenticallyInKafka(CompressionType compression) {
        assertKafkaReadsCairnBatch(BatchSpec.idempotent(compression, 1_000L), sampleRecords(41L, 40, 300));
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void thousandsOfCairnRecordsCrossingCodecBlocksShouldReadIdenticallyInKafka(CompressionType compression) {
        assertKafkaReadsCairnBatch(BatchSpec.plain(compression), sampleRecords(42L, 2_000, 200));
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void cairnTransactionalLogAppendTimeBatchShouldReadIdenticallyInKafka(CompressionType compression) {
        BatchSpec spec = new BatchSpec(compression, org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME,
                3L, 1_800_000_000_000L, 55L, (short) 9, Integer.MAX_VALUE - 3, true, false, 8);
        assertKafkaReadsCairnBatch(spec, sampleRecords(43L, 50, 80));
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void cairnBatchShouldBeByteIdenticalToKafkasForTheSameRecords(CompressionType compression) {
        // Given: same records and header fields on both sides, a few thousand records for multi-block frames
        BatchSpec spec = BatchSpec.idempotent(compression, 12_345L);
        List<SampleRecord> samples = sampleRecords(44L, 2_000, 150);
        byte[] kafka = KafkaInterop.bytes(kafkaBatch(spec, samples));

        // When
        ByteBuf cairn = cairnBatch(spec, samples);

        // Then
        try {
            assertThat(ByteBufUtil.getBytes(cairn)).isEqualTo(kafka);
        } finally {
            cairn.release();
        }
    }

    @Test
    void cairnEndTransactionMarkerShouldReadAsKafkaControlRecord() {
        // Given
        EndTransactionMarker marker = new EndTransactionMarker(ControlRecordType.ABORT, 23);

        // When
        ByteBuf cairn = RecordBatchBuilder.endTransactionMarker(PooledByteBufAllocator.DEFAULT, 500L,
                1_700_000_000_999L, 6, 77L, (short) 4, marker);

        // Then
        try {
            ByteBuffer expected = MemoryRecords.withEndTransactionMarker(500L, 1_700_000_000_999L, 6, 77L,
                    (short) 4, new org.apache.kafka.common.record.EndTransactionMarker(
                            org.apache.kafka.common.record.ControlRecordType.ABORT, 23)).buffer();
            assertThat(ByteBufUtil.getBytes(cairn)).isEqualTo(KafkaInterop.bytes(expected));
            MutableRecordBatch batch = MemoryRecords.readableRecords(cairn.nioBuffer()).batches().iterator().next();
            batch.ensureValid();
            assertThat(batch.isControlBatch()).isTrue();
            assertThat(batch.isTransactional()).isTrue();
            org.apache.kafka.common.record.Record record = batch.iterator().next();
            assertThat(org.apache.kafka.common.record.ControlRecordType.parse(record.key()))
                    .isEqualTo(org.apache.kafka.common.record.ControlRecordType.ABORT);
            assertThat(org.apache.kafka.common.record.EndTransactionMarker.deserialize(record).coordinatorEpoch())
                    .isEqualTo(23);
        } finally {
            cairn.release();
        }
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void brokerRewrittenFieldsShouldStayValidForKafka(CompressionType compression) {
        // Given
        ByteBuf cairn = cairnBatch(BatchSpec.idempotent(compression, 0L), sampleRecords(45L, 30, 60));
        try {
            RecordBatch batch = RecordBatch.wrap(cairn);

            // When: what the broker does on append
            batch.setBaseOffset(1_000_000L);
            batch.setPartitionLeaderEpoch(42);
            batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, 1_900_000_000_000L);

            // Then
            MutableRecordBatch kafka = MemoryRecords.readableRecords(cairn.nioBuffer()).batches().iterator().next();
            kafka.ensureValid();
            batch.ensureValid();
            assertThat(kafka.baseOffset()).isEqualTo(1_000_000L);
            assertThat(kafka.lastOffset()).isEqualTo(1_000_029L);
            assertThat(kafka.partitionLeaderEpoch()).isEqualTo(42);
            assertThat(kafka.timestampType()).isEqualTo(org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME);
            assertThat((int) kafka.compressionType().id).isEqualTo(compression.id());
            assertThat(kafka.isTransactional()).isFalse();
            List<Long> timestamps = new ArrayList<>();
            kafka.forEach(r -> timestamps.add(r.timestamp()));
            assertThat(timestamps).hasSize(30).containsOnly(1_900_000_000_000L);
            assertSameHeader(kafka, batch);
        } finally {
            cairn.release();
        }
    }

    private static void assertKafkaReadsCairnBatch(BatchSpec spec, List<SampleRecord> samples) {
        // When
        ByteBuf cairn = cairnBatch(spec, samples);

        // Then
        try {
            ByteBuffer kafkaView = ByteBuffer.wrap(ByteBufUtil.getBytes(cairn));
            MutableRecordBatch kafka = MemoryRecords.readableRecords(kafkaView).batches().iterator().next();
            kafka.ensureValid();
            RecordBatch batch = RecordBatch.wrap(cairn);
            assertSameHeader(kafka, batch);
            List<org.apache.kafka.common.record.Record> records = new ArrayList<>();
            kafka.forEach(records::add);
            assertThat(records).hasSize(samples.size());
            boolean logAppendTime =
                    spec.timestampType() == org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME;
            for (int i = 0; i < samples.size(); i++) {
                SampleRecord sample = samples.get(i);
                org.apache.kafka.common.record.Record record = records.get(i);
                assertThat(record.offset()).isEqualTo(spec.baseOffset() + i);
                assertThat(record.timestamp()).isEqualTo(logAppendTime ? spec.logAppendTime() : sample.timestamp());
                assertThat(KafkaInterop.bytes(record.key())).isEqualTo(sample.key());
                assertThat(KafkaInterop.bytes(record.value())).isEqualTo(sample.value());
                assertThat(record.headers()).hasSize(sample.headers().size());
                for (int h = 0; h < sample.headers().size(); h++) {
                    assertThat(record.headers()[h].key()).isEqualTo(sample.headers().get(h).key());
                    assertThat(record.headers()[h].value()).isEqualTo(sample.headers().get(h).value());
                }
            }
            KafkaInterop.assertSameRecords(kafka, batch.records());
        } finally {
            cairn.release();
        }
    }
}
