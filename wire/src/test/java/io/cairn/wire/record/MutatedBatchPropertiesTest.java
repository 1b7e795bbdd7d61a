package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A light fuzz of the decoder: valid batches with random bytes changed (and the CRC fixed up, so the bytes reach
 * the record decoder and the codecs) must either decode or fail with the documented {@link CorruptRecordException}
 * or {@link InvalidRecordException}: never an {@code IndexOutOfBoundsException}, an {@code OutOfMemoryError} or a
 * codec's own exception.
 */
class MutatedBatchPropertiesTest {

    @Property(tries = 400)
    void mutatedBatchesShouldDecodeOrFailWithDocumentedExceptions(@ForAll CompressionType compression,
                                                                  @ForAll @IntRange(min = 1, max = 6) int mutations,
                                                                  @ForAll long seed,
                                                                  @ForAll boolean fixCrc) {
        // Given
        Random random = new Random(seed);
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, compression)
                .producer(1L, (short) 0, 0);
        for (KafkaInterop.SampleRecord sample : KafkaInterop.sampleRecords(seed, 1 + random.nextInt(60), 100)) {
            builder.append(sample.timestamp(), sample.key(), sample.value(), sample.headers());
        }
        ByteBuf buf = builder.build();
        try {
            int headerEnd = random.nextInt(4) == 0 ? RecordBatch.ATTRIBUTES_OFFSET : RecordBatch.RECORDS_OFFSET;
            for (int i = 0; i < mutations; i++) {
                int index = headerEnd + random.nextInt(buf.readableBytes() - headerEnd);
                buf.setByte(index, random.nextInt(256));
            }
            if (fixCrc) {
                buf.setInt(RecordBatch.CRC_OFFSET, (int) RecordBatch.wrap(buf).computeChecksum());
            }

            // When
            Throwable failure = null;
            try {
                for (RecordBatch batch : RecordBatches.of(buf)) {
                    batch.ensureValid();
                    List<Record> records = batch.records(UnpooledByteBufAllocator.DEFAULT, 8 * 1024 * 1024);
                    assertThat(records).hasSize(batch.recordCount());
                }
            } catch (CorruptRecordException | InvalidRecordException e) {
                failure = e;
            }

            // Then
            if (!fixCrc && failure == null) {
                // Only a mutation that left every byte as it was can pass the CRC check.
                assertThat(RecordBatch.wrap(buf).isValid()).isTrue();
            }
        } finally {
            buf.release();
        }
    }
}
