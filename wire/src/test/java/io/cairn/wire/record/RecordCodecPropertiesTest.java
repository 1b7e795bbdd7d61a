package io.cairn.wire.record;

import io.cairn.wire.protocol.Varints;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.apache.kafka.common.record.DefaultRecord;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.utils.ByteUtils;

import java.nio.ByteBuffer;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * jqwik properties: varints and record fields round-trip through Cairn's codec and encode byte-for-byte as Kafka's
 * {@code ByteUtils} / {@code DefaultRecord} do; arbitrary batches built by Cairn read identically in kafka-clients.
 */
class RecordCodecPropertiesTest {

    @Property
    void varintsShouldRoundTripAndMatchKafkasEncoding(@ForAll int value) {
        // Given
        ByteBuf buf = Unpooled.buffer();
        try {
            // When
            RecordCodec.writeVarint(buf, value);

            // Then
            ByteBuffer kafka = ByteBuffer.allocate(5);
            ByteUtils.writeVarint(value, kafka);
            assertThat(ByteBufUtil.getBytes(buf)).isEqualTo(KafkaInterop.bytes(kafka.flip()));
            assertThat(buf.readableBytes()).isEqualTo(Varints.sizeOfVarint(value));
            ByteBuffer in = buf.nioBuffer();
            assertThat(RecordCodec.readVarint(in)).isEqualTo(value);
            assertThat(in.hasRemaining()).isFalse();
        } finally {
            buf.release();
        }
    }

    @Property
    void varlongsShouldRoundTripAndMatchKafkasEncoding(@ForAll long value) {
        // Given
        ByteBuf buf = Unpooled.buffer();
        try {
            // When
            RecordCodec.writeVarlong(buf, value);

            // Then
            ByteBuffer kafka = ByteBuffer.allocate(10);
            ByteUtils.writeVarlong(value, kafka);
            assertThat(ByteBufUtil.getBytes(buf)).isEqualTo(KafkaInterop.bytes(kafka.flip()));
            assertThat(buf.readableBytes()).isEqualTo(Varints.sizeOfVarlong(value));
            ByteBuffer in = buf.nioBuffer();
            assertThat(RecordCodec.readVarlong(in)).isEqualTo(value);
            assertThat(in.hasRemaining()).isFalse();
        } finally {
            buf.release();
        }
    }

    @Property
    void recordFieldsShouldRoundTripAndReadIdenticallyInKafka(
            @ForAll @IntRange(min = 0, max = Integer.MAX_VALUE) int offsetDelta,
            @ForAll @LongRange(min = -1_000_000_000_000L, max = 1_000_000_000_000L) long timestampDelta,
            @ForAll("records") Record record) {
        // Given
        long baseOffset = 1_000L;
        long baseTimestamp = 1_600_000_000_000L;
        ByteBuf buf = Unpooled.buffer();
        try {
            // When
            int written = RecordCodec.writeRecord(buf, offsetDelta, timestampDelta, record);

            // Then
            ByteBuffer kafkaView = buf.nioBuffer();
            DefaultRecord kafka = DefaultRecord.readFrom(kafkaView, baseOffset, baseTimestamp, 7, null);
            assertThat(kafka.sizeInBytes()).isEqualTo(written);
            ByteBuffer in = buf.nioBuffer();
            Record read = RecordCodec.readRecord(in,
                    new RecordCodec.BatchContext(baseOffset, baseTimestamp, 7, false, 0L));
            assertThat(in.hasRemaining()).isFalse();
            assertThat(read.offset()).isEqualTo(baseOffset + offsetDelta);
            assertThat(read.timestamp()).isEqualTo(baseTimestamp + timestampDelta);
            assertThat(read.key()).isEqualTo(record.key());
            assertThat(read.value()).isEqualTo(record.value());
            assertThat(read.headers()).isEqualTo(record.headers());
            KafkaInterop.assertSameRecord(kafka, read);
        } finally {
            buf.release();
        }
    }

    @Property(tries = 60)
    void arbitraryCairnBatchesShouldReadIdenticallyInKafka(@ForAll CompressionType compression,
                                                           @ForAll("recordLists") List<Record> records,
                                                           @ForAll boolean transactional) {
        // Given
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, compression)
                .baseOffset(50L)
                .producer(9L, (short) 2, 100)
                .transactional(transactional);
        for (Record record : records) {
            builder.append(record.timestamp(), record.key(), record.value(), record.headers());
        }

        // When
        ByteBuf buf = builder.build();

        // Then
        try {
            RecordBatch batch = RecordBatch.wrap(buf);
            batch.ensureValid();
            MutableRecordBatch kafka = MemoryRecords.readableRecords(buf.nioBuffer()).batches().iterator().next();
            kafka.ensureValid();
            KafkaInterop.assertSameHeader(kafka, batch);
            KafkaInterop.assertSameRecords(kafka, batch.records());
        } finally {
            buf.release();
        }
    }

    @Provide
    Arbitrary<Record> records() {
        Arbitrary<byte[]> bytes = Arbitraries.bytes().array(byte[].class).ofMaxSize(40).injectNull(0.2);
        Arbitrary<String> headerKeys = Arbitraries.strings().ofMaxLength(12);
        Arbitrary<Header> header = Combinators.combine(headerKeys, bytes).as(Header::new);
        Arbitrary<List<Header>> headers = header.list().ofMaxSize(4);
        Arbitrary<Long> timestamps = Arbitraries.longs().between(0L, 4_000_000_000_000L);
        return Combinators.combine(timestamps, bytes, bytes, headers)
                .as((timestamp, key, value, list) -> new Record(0L, timestamp, Record.NO_SEQUENCE, key, value, list));
    }

    @Provide
    Arbitrary<List<Record>> recordLists() {
        return records().list().ofMinSize(1).ofMaxSize(40);
    }
}
