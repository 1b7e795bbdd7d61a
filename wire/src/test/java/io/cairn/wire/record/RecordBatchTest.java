package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import net.jpountz.lz4.LZ4FrameOutputStream;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.xerial.snappy.Snappy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Header view, validation and the failure modes of {@link RecordBatch} and {@link RecordBatches}. */
@ExtendWith(NettyLeakCheck.class)
class RecordBatchTest {

    private static final long TIMESTAMP = 1_700_000_000_000L;

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void corruptedRecordBytesShouldFailTheCrcCheckLikeKafka(CompressionType compression) {
        // Given
        ByteBuf buf = build(compression, 20);
        try {
            int last = buf.writerIndex() - 1;
            buf.setByte(last, buf.getByte(last) ^ 0x5A);
            RecordBatch batch = RecordBatch.wrap(buf);

            // When
            boolean valid = batch.isValid();

            // Then
            assertThat(valid).isFalse();
            assertThatThrownBy(batch::ensureValid).isInstanceOf(CorruptRecordException.class)
                    .hasMessageStartingWith("Record is corrupt (stored crc = " + batch.checksum()
                            + ", computed crc = ");
            MutableRecordBatch kafka = MemoryRecords.readableRecords(buf.nioBuffer()).batches().iterator().next();
            assertThat(kafka.isValid()).isFalse();
        } finally {
            buf.release();
        }
    }

    @Test
    void fieldsOutsideTheCrcShouldBeRewritableWithoutInvalidatingTheBatch() {
        // Given
        ByteBuf buf = build(CompressionType.NONE, 3);
        try {
            RecordBatch batch = RecordBatch.wrap(buf);
            long crc = batch.checksum();

            // When
            batch.setBaseOffset(123_456L);
            batch.setPartitionLeaderEpoch(9);

            // Then
            assertThat(batch.checksum()).isEqualTo(crc);
            assertThat(batch.isValid()).isTrue();
            assertThat(batch.baseOffset()).isEqualTo(123_456L);
            assertThat(batch.lastOffset()).isEqualTo(123_458L);
            assertThat(batch.nextOffset()).isEqualTo(123_459L);
            assertThat(batch.partitionLeaderEpoch()).isEqualTo(9);
            assertThat(batch.records()).extracting(Record::offset).containsExactly(123_456L, 123_457L, 123_458L);
        } finally {
            buf.release();
        }
    }

    @Test
    void setMaxTimestampShouldKeepTheOtherAttributeBitsAndRecomputeTheCrc() {
        // Given
        ByteBuf buf = new RecordBatchBuilder(PooledByteBufAllocator.DEFAULT, CompressionType.GZIP)
                .deleteHorizonMs(TIMESTAMP - 5)
                .producer(1L, (short) 0, 0)
                .transactional(true)
                .append(TIMESTAMP, bytes("k"), bytes("v"))
                .build();
        try {
            RecordBatch batch = RecordBatch.wrap(buf);

            // When
            batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, TIMESTAMP + 1_000);

            // Then
            batch.ensureValid();
            assertThat(batch.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
            assertThat(batch.maxTimestamp()).isEqualTo(TIMESTAMP + 1_000);
            assertThat(batch.compressionType()).isEqualTo(CompressionType.GZIP);
            assertThat(batch.isTransactional()).isTrue();
            assertThat(batch.isControlBatch()).isFalse();
            assertThat(batch.deleteHorizonMs()).hasValue(TIMESTAMP - 5);
            assertThat(batch.records().get(0).timestamp()).isEqualTo(TIMESTAMP + 1_000);
            batch.setMaxTimestamp(TimestampType.CREATE_TIME, TIMESTAMP);
            batch.ensureValid();
            assertThat(batch.records().get(0).timestamp()).isEqualTo(TIMESTAMP);
        } finally {
            buf.release();
        }
    }

    @Test
    void truncatedBatchShouldFailValidationWithCorruptRecordException() {
        // Given
        ByteBuf buf = build(CompressionType.NONE, 5);
        try {
            // When
            RecordBatch batch = RecordBatch.wrap(buf.slice(0, buf.readableBytes() - 7));

            // Then
            assertThat(batch.isValid()).isFalse();
            assertThatThrownBy(batch::ensureValid).isInstanceOf(CorruptRecordException.class)
                    .hasMessageContaining("does not match the");
            assertThatThrownBy(() -> RecordBatch.wrap(buf.slice(0, 60))).isInstanceOf(CorruptRecordException.class)
                    .hasMessageContaining("smaller than the minimum allowed overhead 61");
        } finally {
            buf.release();
        }
    }

    @Test
    void batchIteratorShouldStopQuietlyAtEveryPrefixOfATrailingBatch() {
        // Given
        ByteBuf buf = build(CompressionType.LZ4, 10);
        try {
            for (int cut = 0; cut < buf.readableBytes(); cut++) {
                // When
                int batches = count(RecordBatches.of(buf.slice(0, cut)));

                // Then
                assertThat(batches).as("batches in a %d-byte prefix", cut).isZero();
            }
            assertThat(count(RecordBatches.of(buf))).isEqualTo(1);
        } finally {
            buf.release();
        }
    }

    @Test
    void batchLengthsNoBatchCanHaveShouldThrowCorruptRecordException() {
        // Given
        ByteBuf tooSmall = Unpooled.buffer().writeLong(0).writeInt(10).writeZero(20);
        ByteBuf belowOverhead = Unpooled.buffer().writeLong(0).writeInt(30).writeInt(0).writeByte(2).writeZero(25);
        ByteBuf tooLarge = Unpooled.buffer().writeLong(0).writeInt(5_000).writeZero(20);

        try {
            // When / Then
            assertThatThrownBy(() -> count(RecordBatches.of(tooSmall))).isInstanceOf(CorruptRecordException.class)
                    .hasMessage("Record size 10 is less than the minimum record overhead (14)");
            assertThatThrownBy(() -> count(RecordBatches.of(belowOverhead)))
                    .isInstanceOf(CorruptRecordException.class)
                    .hasMessageContaining("smaller than the minimum allowed overhead 61");
            assertThatThrownBy(() -> count(RecordBatches.of(tooLarge, 1_000)))
                    .isInstanceOf(CorruptRecordException.class)
                    .hasMessage("Record size 5000 exceeds the largest allowable message size (1000).");
        } finally {
            tooSmall.release();
            belowOverhead.release();
            tooLarge.release();
        }
    }

    @Test
    void batchesWithOtherMagicValuesShouldBeRejected() {
        // Given
        ByteBuf legacy = Unpooled.buffer().writeLong(0).writeInt(20).writeInt(0).writeByte(1).writeZero(19);
        ByteBuf garbage = Unpooled.buffer().writeLong(0).writeInt(20).writeInt(0).writeByte(7).writeZero(19);

        try {
            // When / Then
            assertThatThrownBy(() -> count(RecordBatches.of(legacy))).isInstanceOf(InvalidRecordException.class)
                    .hasMessageContaining("has magic 1");
            assertThatThrownBy(() -> count(RecordBatches.of(garbage))).isInstanceOf(CorruptRecordException.class)
                    .hasMessage("Invalid magic found in record: 7");
        } finally {
            legacy.release();
            garbage.release();
        }
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void recordCountAboveTheRecordsPresentShouldFailLikeKafka(CompressionType compression) {
        // Given: a CRC-valid batch that declares one record more than it holds
        ByteBuf buf = build(compression, 4);
        try {
            buf.setInt(RecordBatch.RECORDS_COUNT_OFFSET, 5);
            fixCrc(buf);
            RecordBatch batch = RecordBatch.wrap(buf);

            // When / Then
            batch.ensureValid();
            assertThatThrownBy(batch::records).isInstanceOf(InvalidRecordException.class)
                    .hasMessage("Incorrect declared batch size, premature EOF reached");
            assertThatThrownBy(() -> kafkaRecords(buf))
                    .isInstanceOf(org.apache.kafka.common.InvalidRecordException.class);
        } finally {
            buf.release();
        }
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void recordCountBelowTheRecordsPresentShouldFailLikeKafka(CompressionType compression) {
        // Given
        ByteBuf buf = build(compression, 4);
        try {
            buf.setInt(RecordBatch.RECORDS_COUNT_OFFSET, 3);
            fixCrc(buf);
            RecordBatch batch = RecordBatch.wrap(buf);

            // When / Then
            assertThatThrownBy(batch::records).isInstanceOf(InvalidRecordException.class)
                    .hasMessage("Incorrect declared batch size, records still remaining in file");
            assertThatThrownBy(() -> kafkaRecords(buf))
                    .isInstanceOf(org.apache.kafka.common.InvalidRecordException.class)
                    .hasMessage("Incorrect declared batch size, records still remaining in file");
        } finally {
            buf.release();
        }
    }

    @Test
    void negativeAndHugeRecordCountsShouldFailWithoutAllocatingForThem() {
        // Given
        ByteBuf negative = build(CompressionType.NONE, 2);
        ByteBuf huge = build(CompressionType.NONE, 2);
        try {
            negative.setInt(RecordBatch.RECORDS_COUNT_OFFSET, -1);
            huge.setInt(RecordBatch.RECORDS_COUNT_OFFSET, Integer.MAX_VALUE);

            // When / Then
            assertThatThrownBy(() -> RecordBatch.wrap(negative).records()).isInstanceOf(InvalidRecordException.class)
                    .hasMessage("Found invalid record count -1 in magic v2 batch");
            assertThatThrownBy(() -> RecordBatch.wrap(huge).records()).isInstanceOf(InvalidRecordException.class)
                    .hasMessage("Incorrect declared batch size, premature EOF reached");
        } finally {
            negative.release();
            huge.release();
        }
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void bogusRecordLengthsShouldThrowInvalidRecordExceptionNotOutOfMemory(CompressionType compression) {
        // Given: a record whose key claims 1 GiB, and one whose length varint claims 2 GiB
        ByteBuf hugeKey = Unpooled.buffer();
        RecordCodec.writeVarint(hugeKey, 20);
        hugeKey.writeByte(0);
        RecordCodec.writeVarlong(hugeKey, 0);
        RecordCodec.writeVarint(hugeKey, 0);
        RecordCodec.writeVarint(hugeKey, 1 << 30);
        hugeKey.writeZero(16);
        ByteBuf hugeLength = Unpooled.buffer();
        RecordCodec.writeVarint(hugeLength, Integer.MAX_VALUE);
        hugeLength.writeZero(16);
        ByteBuf first = batchWithPayload(compression, 1, compress(compression, ByteBufUtil.getBytes(hugeKey)));
        ByteBuf second = batchWithPayload(compression, 1, compress(compression, ByteBufUtil.getBytes(hugeLength)));
        hugeKey.release();
        hugeLength.release();
        try {
            // When / Then
            assertThatThrownBy(() -> RecordBatch.wrap(first).records()).isInstanceOf(InvalidRecordException.class);
            assertThatThrownBy(() -> RecordBatch.wrap(second).records()).isInstanceOf(InvalidRecordException.class)
                    .hasMessageStartingWith("Invalid record size: expected 2147483647 bytes in record payload");
        } finally {
            first.release();
            second.release();
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void garbageCompressedPayloadShouldThrowCorruptRecordException(CompressionType compression) {
        // Given
        byte[] garbage = new byte[300];
        new Random(7).nextBytes(garbage);
        ByteBuf buf = batchWithPayload(compression, 3, garbage);
        try {
            // When / Then
            assertThatThrownBy(() -> RecordBatch.wrap(buf).records()).isInstanceOf(CorruptRecordException.class)
                    .hasMessageStartingWith("Failed to decompress record batch");
        } finally {
            buf.release();
        }
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void decompressionBeyondTheLimitShouldThrowCorruptRecordException(CompressionType compression) {
        // Given: 4 MiB of zeros compress to a few KiB
        ByteBuf buf = new RecordBatchBuilder(PooledByteBufAllocator.DEFAULT, compression)
                .append(TIMESTAMP, null, new byte[4 * 1024 * 1024])
                .build();
        try {
            RecordBatch batch = RecordBatch.wrap(buf);

            // When / Then
            assertThat(buf.readableBytes()).isLessThan(300_000);
            assertThatThrownBy(() -> batch.records(PooledByteBufAllocator.DEFAULT, 1024 * 1024))
                    .isInstanceOf(CorruptRecordException.class)
                    .hasMessageContaining("exceeds the limit of 1048576 bytes");
            assertThat(batch.records().get(0).valueSize()).isEqualTo(4 * 1024 * 1024);
        } finally {
            buf.release();
        }
    }

    @Test
    void bareSnappyBlockShouldBeReadAsKafkaDoes() throws IOException {
        // Given: some non-Java clients send a snappy block without the xerial stream framing
        byte[] raw = rawRecords(50);
        ByteBuf buf = batchWithPayload(CompressionType.SNAPPY, 50, Snappy.compress(raw));
        try {
            // When
            List<Record> records = RecordBatch.wrap(buf).records();

            // Then
            assertThat(records).hasSize(50);
            assertThat(records.get(49).value()).isEqualTo(bytes("value-49"));
            assertThat(kafkaRecords(buf)).hasSize(50);
        } finally {
            buf.release();
        }
    }

    @Test
    void snappyChunkLongerThanTheInputShouldThrowCorruptRecordException() {
        // Given
        byte[] framed = compress(CompressionType.SNAPPY, rawRecords(5));
        framed[16] = 0x7f; // first chunk length: ~2 GiB
        ByteBuf buf = batchWithPayload(CompressionType.SNAPPY, 5, framed);
        try {
            // When / Then
            assertThatThrownBy(() -> RecordBatch.wrap(buf).records()).isInstanceOf(CorruptRecordException.class)
                    .hasMessageContaining("chunk length");
        } finally {
            buf.release();
        }
    }

    @Test
    void lz4FrameWithBlockAndContentChecksumsShouldBeReadAndVerified() throws IOException {
        // Given: a frame with every optional checksum, as other LZ4 frame writers may produce
        byte[] raw = rawRecords(500);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (OutputStream out = new LZ4FrameOutputStream(bytes, LZ4FrameOutputStream.BLOCKSIZE.SIZE_64KB,
                raw.length, LZ4FrameOutputStream.FLG.Bits.BLOCK_INDEPENDENCE,
                LZ4FrameOutputStream.FLG.Bits.BLOCK_CHECKSUM, LZ4FrameOutputStream.FLG.Bits.CONTENT_CHECKSUM,
                LZ4FrameOutputStream.FLG.Bits.CONTENT_SIZE)) {
            out.write(raw);
        }
        byte[] frame = bytes.toByteArray();
        ByteBuf good = batchWithPayload(CompressionType.LZ4, 500, frame);
        byte[] badChecksum = frame.clone();
        badChecksum[badChecksum.length - 1] ^= 1;
        ByteBuf bad = batchWithPayload(CompressionType.LZ4, 500, badChecksum);
        try {
            // When
            List<Record> records = RecordBatch.wrap(good).records();

            // Then
            assertThat(records).hasSize(500);
            assertThatThrownBy(() -> RecordBatch.wrap(bad).records()).isInstanceOf(CorruptRecordException.class)
                    .hasMessageContaining("Content checksum mismatch");
        } finally {
            good.release();
            bad.release();
        }
    }

    @Test
    void unknownCompressionIdShouldThrowCorruptRecordException() {
        // Given
        ByteBuf buf = batchWithPayload(CompressionType.NONE, 1, rawRecords(1));
        try {
            buf.setShort(RecordBatch.ATTRIBUTES_OFFSET, 6);
            fixCrc(buf);
            RecordBatch batch = RecordBatch.wrap(buf);

            // When / Then
            assertThat(batch.isValid()).isTrue();
            assertThatThrownBy(batch::records).isInstanceOf(CorruptRecordException.class)
                    .hasMessage("Unknown compression type id: 6");
        } finally {
            buf.release();
        }
    }

    @Test
    void builderShouldEnforceKafkasOffsetAndTimestampRules() {
        // Given
        RecordBatchBuilder builder = new RecordBatchBuilder(PooledByteBufAllocator.DEFAULT, CompressionType.NONE)
                .baseOffset(10L)
                .appendWithOffset(12L, TIMESTAMP, null, bytes("v"), List.of());

        // When / Then
        assertThatThrownBy(() -> builder.appendWithOffset(12L, TIMESTAMP, null, null, List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Illegal offset 12 following previous offset 12 (Offsets must increase monotonically).");
        assertThatThrownBy(() -> builder.append(-5L, null, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("Invalid negative timestamp -5");
        assertThatThrownBy(() -> builder.baseOffset(0L)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> new RecordBatchBuilder(PooledByteBufAllocator.DEFAULT, CompressionType.LZ4)
                .compressionLevel(18)).isInstanceOf(IllegalArgumentException.class);
        ByteBuf buf = builder.append(TIMESTAMP + 1, null, null).build();
        try {
            RecordBatch batch = RecordBatch.wrap(buf);
            assertThat(batch.baseOffset()).isEqualTo(10L);
            assertThat(batch.lastOffsetDelta()).isEqualTo(3);
            assertThat(batch.records()).extracting(Record::offset).containsExactly(12L, 13L);
            assertThat(batch.maxTimestamp()).isEqualTo(TIMESTAMP + 1);
            assertThat(batch.baseTimestamp()).isEqualTo(TIMESTAMP);
        } finally {
            buf.release();
        }
        ByteBuf empty = new RecordBatchBuilder(PooledByteBufAllocator.DEFAULT, CompressionType.ZSTD).build();
        assertThat(empty.readableBytes()).isZero();
        empty.release();
    }

    @Test
    void sequencesShouldWrapPastIntegerMaxValue() {
        // Given
        ByteBuf buf = new RecordBatchBuilder(PooledByteBufAllocator.DEFAULT, CompressionType.NONE)
                .producer(5L, (short) 1, Integer.MAX_VALUE - 1)
                .append(TIMESTAMP, null, null)
                .append(TIMESTAMP, null, null)
                .append(TIMESTAMP, null, null)
                .build();
        try {
            // When
            RecordBatch batch = RecordBatch.wrap(buf);

            // Then
            assertThat(batch.lastSequence()).isEqualTo(0);
            assertThat(batch.records()).extracting(Record::sequence).containsExactly(Integer.MAX_VALUE - 1,
                    Integer.MAX_VALUE, 0);
            assertThat(RecordBatch.incrementSequence(7, 3)).isEqualTo(10);
        } finally {
            buf.release();
        }
    }

    private static ByteBuf build(CompressionType compression, int count) {
        RecordBatchBuilder builder = new RecordBatchBuilder(PooledByteBufAllocator.DEFAULT, compression)
                .producer(3L, (short) 0, 0);
        for (int i = 0; i < count; i++) {
            builder.append(TIMESTAMP + i, bytes("key-" + i), bytes("value-" + i),
                    List.of(new Header("h", bytes("x"))));
        }
        return builder.build();
    }

    /** Uncompressed record bytes: {@code count} records with offset deltas 0..count-1. */
    private static byte[] rawRecords(int count) {
        ByteBuf out = Unpooled.buffer();
        try {
            for (int i = 0; i < count; i++) {
                RecordCodec.writeRecord(out, i, i, new Record(i, TIMESTAMP + i, Record.NO_SEQUENCE,
                        bytes("key-" + i), bytes("value-" + i), List.of()));
            }
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static byte[] compress(CompressionType compression, byte[] raw) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (OutputStream out = Compression.wrapForOutput(compression, compression.defaultLevel(), bytes)) {
            out.write(raw);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
        return bytes.toByteArray();
    }

    /** A CRC-valid batch header (no producer, create time) around an arbitrary payload. */
    private static ByteBuf batchWithPayload(CompressionType compression, int count, byte[] payload) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.heapBuffer(RecordBatch.RECORD_BATCH_OVERHEAD + payload.length);
        buf.writeLong(0L).writeInt(RecordBatch.RECORD_BATCH_OVERHEAD - RecordBatch.LOG_OVERHEAD + payload.length)
                .writeInt(0).writeByte(RecordBatch.MAGIC).writeInt(0).writeShort(compression.id())
                .writeInt(count - 1).writeLong(TIMESTAMP).writeLong(TIMESTAMP + count)
                .writeLong(-1L).writeShort(-1).writeInt(-1).writeInt(count).writeBytes(payload);
        fixCrc(buf);
        return buf;
    }

    private static void fixCrc(ByteBuf buf) {
        buf.setInt(RecordBatch.CRC_OFFSET, (int) RecordBatch.wrap(buf).computeChecksum());
    }

    private static List<org.apache.kafka.common.record.Record> kafkaRecords(ByteBuf buf) {
        List<org.apache.kafka.common.record.Record> records = new ArrayList<>();
        for (MutableRecordBatch batch : MemoryRecords.readableRecords(buf.nioBuffer()).batches()) {
            batch.forEach(records::add);
        }
        return records;
    }

    private static int count(RecordBatches batches) {
        int count = 0;
        for (RecordBatch ignored : batches) {
            count++;
        }
        return count;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
