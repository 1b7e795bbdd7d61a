package io.cairn.log;

import static io.cairn.log.PartitionLogTest.readAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.testkit.CompressionBomb;
import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.InvalidTimestampException;
import io.cairn.wire.error.RecordBatchTooLargeException;
import io.cairn.wire.error.RecordTooLargeException;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The leader's append rules ({@link LogValidator}) as a producer's batch meets them through {@link PartitionLog}. */
class LogValidatorTest {

    private static final long MIB = 1024 * 1024;

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeLogs() {
        opened.forEach(PartitionLog::close);
    }

    private PartitionLog open(LogConfig config) {
        PartitionLog log = PartitionLog.open(tmp.resolve("topic-0"), config, LogEnvironment.of(time), true);
        opened.add(log);
        return log;
    }

    private static long allocatedByThisThread() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    private static ByteBuffer batch(Compression compression, TimestampType type, SimpleRecord... records) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024 + 2 * records.length * 64
            + sizeOf(records)), compression, type, 0L);
        for (SimpleRecord r : records) {
            builder.append(r);
        }
        return builder.build().buffer();
    }

    private static int sizeOf(SimpleRecord[] records) {
        int size = 0;
        for (SimpleRecord r : records) {
            size += (r.value() == null ? 0 : r.value().remaining()) + (r.key() == null ? 0 : r.key().remaining());
        }
        return size;
    }

    private static ByteBuffer batch(Compression compression, SimpleRecord... records) {
        return batch(compression, TimestampType.CREATE_TIME, records);
    }

    private static List<MutableRecordBatch> stored(PartitionLog log) {
        try (FetchDataInfo read = log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            List<MutableRecordBatch> batches = TestBatches.batches(read.records().readBytes());
            batches.forEach(MutableRecordBatch::ensureValid);
            return batches;
        }
    }

    /** Sets a header int of a batch built elsewhere and recomputes the CRC (what a hand-built producer could send). */
    private static ByteBuffer patchInt(ByteBuffer batch, int at, int value) {
        batch.putInt(at, value);
        MutableRecordBatch view = MemoryRecords.readableRecords(batch.duplicate()).batches().iterator().next();
        view.setMaxTimestamp(TimestampType.CREATE_TIME, view.maxTimestamp() + 1);
        view.setMaxTimestamp(TimestampType.CREATE_TIME, view.maxTimestamp() - 1);
        return batch;
    }

    @ParameterizedTest(name = "codec {0}")
    @ValueSource(ints = {CompressionBomb.GZIP, CompressionBomb.ZSTD})
    void aSmallBatchThatDecompressesWithoutLimitIsCorruptAndTheHeapStaysBounded(int codec) {
        // Given: one keyed record whose 512 MiB value compresses to about half a megabyte
        PartitionLog log = open(LogConfig.builder().cleanupPolicy("compact").build());
        ByteBuffer bomb = CompressionBomb.batch(codec, utf8("k"), 512 * MIB, time.milliseconds());
        assertThat(bomb.remaining()).isLessThan((int) MIB);
        long before = allocatedByThisThread();

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(bomb, 0, AppendOrigin.CLIENT))
            .isInstanceOf(CorruptRecordException.class).hasMessageContaining("exceeds the limit");
        assertThat(allocatedByThisThread() - before).isLessThan(4L * LogValidator.MAX_UNCOMPRESSED_BYTES);
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void aCompressedBatchWithinTheBoundIsAccepted() {
        // Given
        PartitionLog log = open(LogConfig.builder().cleanupPolicy("compact").build());

        // When
        log.appendAsLeader(CompressionBomb.batch(CompressionBomb.GZIP, utf8("k"), 8 * MIB, time.milliseconds()), 0,
            AppendOrigin.CLIENT);

        // Then
        assertThat(log.logEndOffset()).isEqualTo(1);
    }

    @ParameterizedTest(name = "compression {0}")
    @ValueSource(strings = {"none", "gzip", "zstd"})
    void keylessRecordsOnACompactedTopicAreNamedOneByOne(String codec) {
        // Given
        PartitionLog log = open(LogConfig.builder().cleanupPolicy("compact").build());
        long now = time.milliseconds();
        ByteBuffer records = batch(Compression.of(codec).build(), new SimpleRecord(now, utf8("k"), utf8("a")),
            new SimpleRecord(now, null, utf8("b")), new SimpleRecord(now, null, utf8("c")));

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOfSatisfying(RecordValidationException.class, e -> {
                assertThat(e.error()).isInstanceOf(InvalidRecordException.class);
                assertThat(e.recordErrors()).extracting(RecordValidationException.RecordError::batchIndex)
                    .containsExactly(1, 2);
                assertThat(e.recordErrors().get(0).message())
                    .isEqualTo("Compacted topic cannot accept message without key in topic partition topic-0");
                assertThat(e.getMessage()).startsWith("One or more records have been rejected due to 2 record errors");
            });
        assertThat(log.logEndOffset()).isZero();
    }

    @ParameterizedTest(name = "compression {0}")
    @ValueSource(strings = {"none", "lz4"})
    void everyRecordTimestampIsCheckedAgainstBeforeAndAfterMaxMs(String codec) {
        // Given
        PartitionLog log = open(LogConfig.builder().timestampBeforeMaxMs(1000).timestampAfterMaxMs(2000).build());
        long now = time.milliseconds();
        ByteBuffer records = batch(Compression.of(codec).build(), new SimpleRecord(now, null, utf8("ok")),
            new SimpleRecord(now - 1001, null, utf8("old")), new SimpleRecord(now + 2001, null, utf8("future")),
            new SimpleRecord(now + 2000, null, utf8("edge")));

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOfSatisfying(RecordValidationException.class, e -> {
                assertThat(e.error()).isInstanceOf(InvalidTimestampException.class)
                    .hasMessage("One or more records have been rejected due to invalid timestamp");
                assertThat(e.recordErrors()).extracting(RecordValidationException.RecordError::batchIndex)
                    .containsExactly(1, 2);
                assertThat(e.recordErrors().get(0).message()).isEqualTo("Timestamp " + (now - 1001)
                    + " of message with offset 1 is out of range. The timestamp should be within [" + (now - 1000)
                    + ", " + (now + 2000) + "]");
            });
    }

    @Test
    void aBatchThatClaimsLogAppendTimeIsAnInvalidTimestampOnALogAppendTimeTopic() {
        // Given
        PartitionLog log = open(LogConfig.builder().logAppendTime(true).build());
        ByteBuffer records = batch(Compression.NONE, TimestampType.LOG_APPEND_TIME,
            new SimpleRecord(time.milliseconds(), null, utf8("a")));

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOfSatisfying(RecordValidationException.class, e -> {
                assertThat(e.error()).isInstanceOf(InvalidTimestampException.class);
                assertThat(e.recordErrors().get(0).message()).endsWith("Producer should not set timestamp type to "
                    + "LogAppendTime.");
            });
    }

    @ParameterizedTest(name = "compression {0}")
    @ValueSource(strings = {"none", "snappy"})
    void theMaxTimestampIsRecomputedFromTheRecordsNotTakenFromTheHeader(String codec) {
        // Given: a header that claims a max timestamp no record has
        PartitionLog log = open(LogConfig.defaults());
        long now = time.milliseconds();
        ByteBuffer records = batch(Compression.of(codec).build(), new SimpleRecord(now - 20, null, utf8("a")),
            new SimpleRecord(now - 10, null, utf8("b")), new SimpleRecord(now - 30, null, utf8("c")));
        MemoryRecords.readableRecords(records.duplicate()).batches().iterator().next()
            .setMaxTimestamp(TimestampType.CREATE_TIME, now + 1000);

        // When
        LogAppendInfo info = log.appendAsLeader(records, 0, AppendOrigin.CLIENT);

        // Then
        assertThat(info.maxTimestamp()).isEqualTo(now - 10);
        assertThat(stored(log)).singleElement().satisfies(b -> {
            assertThat(b.maxTimestamp()).isEqualTo(now - 10);
            assertThat(b.timestampType()).isEqualTo(TimestampType.CREATE_TIME);
        });
    }

    @Test
    void logAppendTimeRewritesACompressedBatchsHeaderAndKeepsItsPayload() {
        // Given
        PartitionLog log = open(LogConfig.builder().logAppendTime(true).build());
        ByteBuffer records = batch(Compression.gzip().build(), new SimpleRecord(5L, null, utf8("a")),
            new SimpleRecord(6L, null, utf8("b")));
        ByteBuffer original = ByteBuffer.allocate(records.remaining()).put(records.duplicate()).flip();
        time.sleep(1000);

        // When
        LogAppendInfo info = log.appendAsLeader(records, 0, AppendOrigin.CLIENT);

        // Then
        assertThat(info.logAppendTime()).isEqualTo(time.milliseconds());
        assertThat(info.maxTimestamp()).isEqualTo(time.milliseconds());
        MutableRecordBatch b = stored(log).get(0);
        assertThat(b.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThat(b.maxTimestamp()).isEqualTo(time.milliseconds());
        assertThat(b.compressionType()).isEqualTo(CompressionType.GZIP);
        assertThat(b.sizeInBytes()).isEqualTo(original.remaining());
        for (Record r : b) {
            assertThat(r.timestamp()).isEqualTo(time.milliseconds());
        }
    }

    @Test
    void producerCompressionKeepsTheProducersBatchByteForByte() {
        // Given
        PartitionLog log = open(LogConfig.builder().compressionType("producer").build());
        ByteBuffer records = batch(Compression.lz4().build(), new SimpleRecord(time.milliseconds(), null, utf8("a")));
        ByteBuffer original = ByteBuffer.allocate(records.remaining()).put(records.duplicate()).flip();

        // When
        log.appendAsLeader(records, 0, AppendOrigin.CLIENT);

        // Then
        try (FetchDataInfo read = log.read(0, Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            ByteBuffer bytes = read.records().readBytes();
            assertThat(bytes.slice(21, bytes.remaining() - 21)).isEqualTo(original.slice(21, original.remaining() - 21));
        }
    }

    @ParameterizedTest(name = "{0} to {1}")
    @org.junit.jupiter.params.provider.CsvSource({"none,gzip,GZIP", "lz4,zstd,ZSTD", "gzip,uncompressed,NONE",
        "snappy,lz4,LZ4", "zstd,snappy,SNAPPY"})
    void aTopicCompressionTypeRecompressesToItsCodec(String producerCodec, String topicCodec, CompressionType stored) {
        // Given
        PartitionLog log = open(LogConfig.builder().compressionType(topicCodec).build());
        long now = time.milliseconds();
        log.appendAsLeader(batch(Compression.NONE, new SimpleRecord(now, null, utf8("first"))), 0,
            AppendOrigin.CLIENT);
        ByteBuffer records = batch(Compression.of(producerCodec).build(), new SimpleRecord(now, utf8("k"), utf8("a")),
            new SimpleRecord(now + 1, null, utf8("b")));

        // When
        LogAppendInfo info = log.appendAsLeader(records, 0, AppendOrigin.CLIENT);

        // Then
        assertThat(info.firstOffset()).isEqualTo(1);
        assertThat(info.lastOffset()).isEqualTo(2);
        List<MutableRecordBatch> batches = stored(log);
        assertThat(batches).extracting(MutableRecordBatch::compressionType).containsOnly(stored);
        assertThat(batches.get(1).maxTimestamp()).isEqualTo(now + 1);
        assertThat(readAll(log, 0)).containsExactly("0:first", "1:a", "2:b");
    }

    @Test
    void theConfiguredLevelIsUsedWhenRecompressing() {
        // Given: the same compressible records stored with gzip level 1 and level 9
        byte[] text = utf8("the quick brown fox jumps over the lazy dog ".repeat(2000) + "0123456789".repeat(500));
        int[] sizes = new int[2];
        int[] levels = {1, 9};
        for (int i = 0; i < 2; i++) {
            PartitionLog log = PartitionLog.open(tmp.resolve("level" + levels[i] + "-0"), LogConfig.builder()
                .compressionType("gzip").compressionGzipLevel(levels[i]).build(), LogEnvironment.of(time), true);
            opened.add(log);
            // When
            log.appendAsLeader(batch(Compression.NONE, new SimpleRecord(time.milliseconds(), null, text)), 0,
                AppendOrigin.CLIENT);
            sizes[i] = stored(log).get(0).sizeInBytes();
        }

        // Then
        assertThat(sizes[1]).isLessThan(sizes[0]);
    }

    @Test
    void aRecompressedBatchLargerThanMaxMessageBytesIsRecordTooLarge() {
        // Given: 64 KiB of zeros, tiny in gzip, over the limit once stored uncompressed
        PartitionLog log = open(LogConfig.builder().compressionType("uncompressed").maxMessageBytes(10_000).build());
        ByteBuffer records = batch(Compression.gzip().build(),
            new SimpleRecord(time.milliseconds(), null, new byte[64 * 1024]));

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOf(RecordTooLargeException.class);
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void aCompressedBatchWithInnerOffsetsThatSkipIsInvalid() {
        // Given: inner offsets 0 and 2 in a batch whose header says two records, last offset delta 1
        PartitionLog log = open(LogConfig.defaults());
        long now = time.milliseconds();
        ByteBuf built = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, io.cairn.wire.record.CompressionType.GZIP)
            .appendWithOffset(0, now, null, utf8("a"), List.of())
            .appendWithOffset(2, now, null, utf8("b"), List.of())
            .build();
        ByteBuffer records = ByteBuffer.allocate(built.readableBytes());
        built.readBytes(records);
        built.release();
        patchInt(records.flip(), 23, 1);

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOf(InvalidRecordException.class).hasMessageContaining("offset delta 2");
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void aCompressedBatchWithFewerRecordsThanItsCountIsInvalid() {
        // Given: two gzip records under a header that says three (offset range 0..2)
        PartitionLog log = open(LogConfig.defaults());
        long now = time.milliseconds();
        ByteBuffer records = batch(Compression.gzip().build(), new SimpleRecord(now, null, utf8("a")),
            new SimpleRecord(now, null, utf8("b")));
        patchInt(records, 57, 3);
        patchInt(records, 23, 2);

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOf(InvalidRecordException.class).hasMessageContaining("premature EOF");
    }

    @Test
    void aCompressedPayloadThatIsNotItsCodecIsCorrupt() {
        // Given: a gzip batch whose compressed bytes are overwritten, CRC recomputed
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer records = batch(Compression.gzip().build(), new SimpleRecord(time.milliseconds(), null,
            utf8("some value")));
        for (int i = 61; i < records.limit(); i++) {
            records.put(i, (byte) 0x55);
        }
        patchInt(records, 57, 1);

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOf(CorruptRecordException.class);
    }

    @Test
    void aBatchLargerThanTheSegmentIsRecordBatchTooLarge() {
        // Given
        PartitionLog log = open(LogConfig.builder().segmentBytes(1024).build());
        ByteBuffer records = batch(Compression.NONE, new SimpleRecord(time.milliseconds(), null, new byte[2000]));

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(records, 0, AppendOrigin.CLIENT))
            .isInstanceOf(RecordBatchTooLargeException.class).hasMessageContaining("segment size of 1024");
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void anIdempotentBatchWithoutASequenceOrWithABaseOffsetIsInvalid() {
        // Given
        PartitionLog log = open(LogConfig.defaults());
        ByteBuffer noSequence = TestBatches.idempotent(7L, (short) 0, 0, time.milliseconds(), "a");
        patchInt(noSequence, 53, -1);
        ByteBuffer withOffset = TestBatches.values(time.milliseconds(), "a");
        withOffset.putLong(0, 5L);

        // When / Then
        assertThatThrownBy(() -> log.appendAsLeader(noSequence, 0, AppendOrigin.CLIENT))
            .isInstanceOf(InvalidRecordException.class).hasMessageContaining("Invalid sequence number -1");
        assertThatThrownBy(() -> log.appendAsLeader(withOffset, 0, AppendOrigin.CLIENT))
            .isInstanceOf(InvalidRecordException.class).hasMessageContaining("should be 0");
    }
}
