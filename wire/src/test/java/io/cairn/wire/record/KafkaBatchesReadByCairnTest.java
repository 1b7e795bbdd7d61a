package io.cairn.wire.record;

import io.cairn.wire.record.KafkaInterop.BatchSpec;
import io.cairn.wire.record.KafkaInterop.SampleRecord;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.utils.ByteBufferOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static io.cairn.wire.record.KafkaInterop.assertSameHeader;
import static io.cairn.wire.record.KafkaInterop.assertSameRecords;
import static io.cairn.wire.record.KafkaInterop.kafkaBatch;
import static io.cairn.wire.record.KafkaInterop.sampleRecords;
import static io.cairn.wire.record.KafkaInterop.wrap;
import static org.assertj.core.api.Assertions.assertThat;

/** Differential: batches built by kafka-clients' {@code MemoryRecordsBuilder} read by Cairn with identical content. */
@ExtendWith(NettyLeakCheck.class)
class KafkaBatchesReadByCairnTest {

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void kafkaBatchWithKeysNullsAndHeadersShouldReadIdenticallyInCairn(CompressionType compression) {
        // Given
        List<SampleRecord> samples = sampleRecords(11L, 40, 300);
        ByteBuffer kafka = kafkaBatch(BatchSpec.idempotent(compression, 5_000L), samples);

        // When
        List<RecordBatch> batches = new ArrayList<>();
        RecordBatches.of(wrap(kafka)).forEach(batches::add);

        // Then
        assertSameAsKafka(kafka, batches);
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void thousandsOfRecordsCrossingCodecBlocksShouldReadIdenticallyInCairn(CompressionType compression) {
        // Given: 2000 records of up to 200 bytes: several 64 KiB lz4 blocks and 32 KiB snappy chunks
        List<SampleRecord> samples = sampleRecords(12L, 2_000, 200);
        ByteBuffer kafka = kafkaBatch(BatchSpec.idempotent(compression, 0L), samples);

        // When
        List<RecordBatch> batches = new ArrayList<>();
        RecordBatches.of(wrap(kafka)).forEach(batches::add);

        // Then
        assertThat(batches.get(0).recordCount()).isEqualTo(2_000);
        assertSameAsKafka(kafka, batches);
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void transactionalLogAppendTimeBatchShouldReadIdenticallyInCairn(CompressionType compression) {
        // Given
        BatchSpec spec = new BatchSpec(compression, org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME,
                77L, 1_800_000_000_000L, 99L, (short) 3, 2_147_483_600, true, false, 4);
        ByteBuffer kafka = kafkaBatch(spec, sampleRecords(13L, 100, 50));

        // When
        List<RecordBatch> batches = new ArrayList<>();
        RecordBatches.of(wrap(kafka)).forEach(batches::add);

        // Then: sequences wrap past Integer.MAX_VALUE, every record carries the append time
        assertSameAsKafka(kafka, batches);
        assertThat(batches.get(0).records()).allSatisfy(r -> assertThat(r.timestamp()).isEqualTo(1_800_000_000_000L));
    }

    @Test
    void kafkaEndTransactionMarkerShouldReadAsControlBatchInCairn() {
        // Given
        org.apache.kafka.common.record.EndTransactionMarker marker = new org.apache.kafka.common.record
                .EndTransactionMarker(org.apache.kafka.common.record.ControlRecordType.COMMIT, 17);
        ByteBuffer kafka = MemoryRecords.withEndTransactionMarker(900L, 1_700_000_000_123L, 5, 31L, (short) 2,
                marker).buffer();

        // When
        RecordBatch batch = RecordBatches.of(wrap(kafka)).iterator().next();

        // Then
        batch.ensureValid();
        assertThat(batch.isControlBatch()).isTrue();
        assertThat(batch.isTransactional()).isTrue();
        assertThat(EndTransactionMarker.parse(batch.records().get(0)))
                .isEqualTo(new EndTransactionMarker(ControlRecordType.COMMIT, 17));
        assertSameAsKafka(kafka, List.of(batch));
    }

    @Test
    void kafkaBatchWithDeleteHorizonShouldReadIdenticallyInCairn() {
        // Given
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(new ByteBufferOutputStream(buffer), (byte) 2,
                KafkaInterop.kafkaCompression(CompressionType.ZSTD),
                org.apache.kafka.common.record.TimestampType.CREATE_TIME, 10L, RecordBatch.NO_TIMESTAMP, 8L,
                (short) 1, 0, false, false, 3, Integer.MAX_VALUE, 1_750_000_000_000L);
        for (SampleRecord sample : sampleRecords(14L, 10, 20)) {
            builder.append(sample.timestamp(), sample.key(), sample.value(),
                    KafkaInterop.kafkaHeaders(sample.headers()));
        }
        ByteBuffer kafka = builder.build().buffer();

        // When
        RecordBatch batch = RecordBatches.of(wrap(kafka)).iterator().next();

        // Then
        assertThat(batch.hasDeleteHorizonMs()).isTrue();
        assertThat(batch.deleteHorizonMs()).hasValue(1_750_000_000_000L);
        assertSameAsKafka(kafka, List.of(batch));
    }

    @Test
    void severalBatchesWithDifferentCodecsAndAPartialTailShouldYieldTheCompleteBatches() {
        // Given: one batch per codec back to back, then the first 100 bytes of another batch (a fetch cut)
        ByteBuf buffer = PooledByteBufAllocator.DEFAULT.heapBuffer();
        try {
            long offset = 0;
            for (CompressionType compression : CompressionType.values()) {
                List<SampleRecord> samples = sampleRecords(20L + offset, 25, 120);
                buffer.writeBytes(kafkaBatch(BatchSpec.idempotent(compression, offset), samples));
                offset += samples.size();
            }
            int completeSize = buffer.readableBytes();
            ByteBuffer tail = kafkaBatch(BatchSpec.plain(CompressionType.NONE), sampleRecords(30L, 25, 120));
            buffer.writeBytes(tail.limit(100));

            // When
            List<RecordBatch> batches = new ArrayList<>();
            RecordBatches.of(buffer).forEach(batches::add);

            // Then
            ByteBuffer complete = ByteBuffer.wrap(io.netty.buffer.ByteBufUtil.getBytes(buffer, 0, completeSize));
            assertThat(batches).hasSize(CompressionType.values().length);
            assertThat(RecordBatches.of(buffer).sizeOfCompleteBatches()).isEqualTo(completeSize);
            assertSameAsKafka(complete, batches);
            assertThat(batches).extracting(RecordBatch::baseOffset).containsExactly(0L, 25L, 50L, 75L, 100L);
        } finally {
            buffer.release();
        }
    }

    @Test
    void kafkaWithRecordsShouldReadIdenticallyInCairn() {
        // Given
        org.apache.kafka.common.record.SimpleRecord[] simple = {
            new org.apache.kafka.common.record.SimpleRecord(1L, "k".getBytes(), "v".getBytes()),
            new org.apache.kafka.common.record.SimpleRecord(2L, null, "v2".getBytes()),
            new org.apache.kafka.common.record.SimpleRecord(3L, "k3".getBytes(), null),
        };
        ByteBuffer kafka = MemoryRecords.withRecords(42L, KafkaInterop.kafkaCompression(CompressionType.LZ4), simple)
                .buffer();

        // When
        List<RecordBatch> batches = new ArrayList<>();
        RecordBatches.of(Unpooled.wrappedBuffer(kafka.duplicate())).forEach(batches::add);

        // Then
        assertSameAsKafka(kafka, batches);
    }

    private static void assertSameAsKafka(ByteBuffer kafkaBuffer, List<RecordBatch> cairnBatches) {
        Iterator<MutableRecordBatch> kafka = MemoryRecords.readableRecords(kafkaBuffer.duplicate()).batches()
                .iterator();
        for (RecordBatch cairn : cairnBatches) {
            assertThat(kafka.hasNext()).isTrue();
            MutableRecordBatch kafkaBatch = kafka.next();
            cairn.ensureValid();
            assertThat(cairn.isValid()).isTrue();
            assertSameHeader(kafkaBatch, cairn);
            assertSameRecords(kafkaBatch, cairn.records());
        }
        assertThat(kafka.hasNext()).isFalse();
    }
}
