package io.cairn.wire.record;

import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link RecordBatch#scanRecords} against {@link RecordBatch#records}, and {@link RecordBatch#of(ByteBuffer, int)}. */
class RecordBatchScanTest {

    private static final long TIMESTAMP = 1_700_000_000_000L;

    private static ByteBuffer built(CompressionType compression) {
        ByteBuf buf = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, compression)
                .append(TIMESTAMP, "k".getBytes(StandardCharsets.UTF_8), "v1".getBytes(StandardCharsets.UTF_8))
                .append(TIMESTAMP + 7, null, new byte[300], List.of(new Header("h", new byte[] {1})))
                .append(TIMESTAMP - 3, new byte[0], null)
                .build();
        ByteBuffer out = ByteBuffer.allocate(buf.readableBytes() + 10);
        out.position(10);
        buf.readBytes(out);
        buf.release();
        return out.flip();
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void theScanSeesWhatTheDecoderSeesWithoutCopyingKeysOrValues(CompressionType compression) {
        // Given: a batch 10 bytes into a buffer
        ByteBuffer buffer = built(compression);
        RecordBatch batch = RecordBatch.of(buffer, 10);
        List<String> scanned = new ArrayList<>();

        // When
        int count = batch.scanRecords(PooledByteBufAllocator.DEFAULT, 1 << 20, (index, offsetDelta, timestamp,
                keySize, valueSize) -> scanned.add(index + ":" + offsetDelta + ":" + timestamp + ":" + keySize + ":"
                + valueSize));

        // Then
        List<String> decoded = new ArrayList<>();
        List<Record> records = batch.records();
        for (int i = 0; i < records.size(); i++) {
            Record r = records.get(i);
            decoded.add(i + ":" + r.offset() + ":" + r.timestamp() + ":" + r.keySize() + ":" + r.valueSize());
        }
        assertThat(count).isEqualTo(3);
        assertThat(scanned).isEqualTo(decoded).containsExactly("0:0:" + TIMESTAMP + ":1:2",
                "1:1:" + (TIMESTAMP + 7) + ":-1:300", "2:2:" + (TIMESTAMP - 3) + ":0:-1");
        assertThat(batch.isValid()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"GZIP", "SNAPPY", "LZ4", "ZSTD"})
    void aCompressedBatchOverTheBoundIsCorrupt(CompressionType compression) {
        // Given
        RecordBatch batch = RecordBatch.of(built(compression), 10);

        // When / Then
        assertThatThrownBy(() -> batch.scanRecords(PooledByteBufAllocator.DEFAULT, 100, (i, o, t, k, v) -> { }))
                .isInstanceOf(CorruptRecordException.class).hasMessageContaining("exceeds the limit of 100 bytes");
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"NONE", "GZIP"})
    void aCountAboveTheRecordsOrARecordLongerThanItsDataIsInvalid(CompressionType compression) {
        // Given
        ByteBuffer more = built(compression);
        more.putInt(10 + RecordBatch.RECORDS_COUNT_OFFSET, 4);
        ByteBuffer fewer = built(compression);
        fewer.putInt(10 + RecordBatch.RECORDS_COUNT_OFFSET, 2);

        // When / Then
        assertThatThrownBy(() -> RecordBatch.of(more, 10).scanRecords(PooledByteBufAllocator.DEFAULT, 1 << 20,
                (i, o, t, k, v) -> { })).isInstanceOf(InvalidRecordException.class).hasMessageContaining("premature");
        assertThatThrownBy(() -> RecordBatch.of(fewer, 10).scanRecords(PooledByteBufAllocator.DEFAULT, 1 << 20,
                (i, o, t, k, v) -> { })).isInstanceOf(InvalidRecordException.class).hasMessageContaining("remaining");
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"NONE"})
    void aValueLengthPastTheBatchIsInvalidNotAnIndexError(CompressionType compression) {
        // Given: the first record's value length (after length, attributes, deltas and the 1-byte key) set to 60
        ByteBuffer buffer = built(compression);
        int valueLengthAt = 10 + RecordBatch.RECORDS_OFFSET + 1 + 1 + 1 + 1 + 1 + 1;
        assertThat(buffer.get(valueLengthAt)).isEqualTo((byte) 4);
        buffer.put(valueLengthAt, (byte) 120);

        // When / Then
        assertThatThrownBy(() -> RecordBatch.of(buffer, 10).scanRecords(PooledByteBufAllocator.DEFAULT, 1 << 20,
                (i, o, t, k, v) -> { })).isInstanceOf(InvalidRecordException.class);
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = {"NONE"})
    void aViewOverAByteBufferWritesThroughAndNeedsOnlyAHeader(CompressionType compression) {
        // Given
        ByteBuffer buffer = built(compression);
        RecordBatch batch = RecordBatch.of(buffer, 10);

        // When
        batch.setBaseOffset(42);
        batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, TIMESTAMP + 100);
        ByteBuffer header = ByteBuffer.allocate(RecordBatch.RECORD_BATCH_OVERHEAD);
        header.put(buffer.duplicate().position(10).limit(10 + RecordBatch.RECORD_BATCH_OVERHEAD)).flip();

        // Then
        assertThat(buffer.getLong(10)).isEqualTo(42);
        assertThat(RecordBatch.of(buffer, 10).isValid()).isTrue();
        assertThat(RecordBatch.of(header, 0).lastOffset()).isEqualTo(44);
        assertThat(RecordBatch.of(header, 0).timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThatThrownBy(() -> RecordBatch.of(header, 1)).isInstanceOf(CorruptRecordException.class);
    }
}
