package io.cairn.wire.record;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.MutableRecordBatch;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Test helpers that translate between Cairn's record types and kafka-clients' (test scope only): sample records,
 * batches built by Kafka's {@code MemoryRecordsBuilder}, and field-by-field comparisons. Stateless.
 */
final class KafkaInterop {

    private KafkaInterop() {
    }

    /** One record to append, on either side. */
    record SampleRecord(long timestamp, byte[] key, byte[] value, List<Header> headers) {
    }

    /** The fields of a batch header that the builder sets. */
    record BatchSpec(CompressionType compression, org.apache.kafka.common.record.TimestampType timestampType,
                     long baseOffset, long logAppendTime, long producerId, short producerEpoch, int baseSequence,
                     boolean transactional, boolean control, int partitionLeaderEpoch) {

        static BatchSpec plain(CompressionType compression) {
            return new BatchSpec(compression, org.apache.kafka.common.record.TimestampType.CREATE_TIME, 0L,
                    RecordBatch.NO_TIMESTAMP, RecordBatch.NO_PRODUCER_ID, RecordBatch.NO_PRODUCER_EPOCH,
                    RecordBatch.NO_SEQUENCE, false, false, RecordBatch.NO_PARTITION_LEADER_EPOCH);
        }

        static BatchSpec idempotent(CompressionType compression, long baseOffset) {
            return new BatchSpec(compression, org.apache.kafka.common.record.TimestampType.CREATE_TIME, baseOffset,
                    RecordBatch.NO_TIMESTAMP, 4242L, (short) 7, 1000, false, false, 12);
        }
    }

    static Compression kafkaCompression(CompressionType type) {
        return Compression.of(org.apache.kafka.common.record.CompressionType.forId(type.id())).build();
    }

    /**
     * Records with keys, null keys, null values, empty values, headers (with null values) and a spread of
     * timestamps; values repeat a pattern so every codec actually compresses, and {@code valueSize} large values
     * make a few thousand records cross codec block boundaries (lz4 64 KiB, snappy 32 KiB).
     */
    static List<SampleRecord> sampleRecords(long seed, int count, int valueSize) {
        Random random = new Random(seed);
        List<SampleRecord> records = new ArrayList<>(count);
        long timestamp = 1_700_000_000_000L + random.nextInt(1000);
        for (int i = 0; i < count; i++) {
            timestamp += random.nextInt(50) - 10;
            byte[] key = i % 5 == 1 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
            byte[] value;
            if (i % 7 == 3) {
                value = null;
            } else if (i % 11 == 4) {
                value = new byte[0];
            } else {
                value = new byte[random.nextInt(valueSize + 1)];
                for (int j = 0; j < value.length; j++) {
                    value[j] = (byte) (j % 17 == 0 ? random.nextInt(256) : 'a' + (i + j) % 26);
                }
            }
            List<Header> headers = new ArrayList<>();
            for (int h = 0; h < i % 3; h++) {
                headers.add(new Header("h" + h + "-é", h == 1 ? null : ("v" + i).getBytes(StandardCharsets.UTF_8)));
            }
            records.add(new SampleRecord(timestamp, key, value, headers));
        }
        return records;
    }

    static org.apache.kafka.common.header.Header[] kafkaHeaders(List<Header> headers) {
        return headers.stream().map(h -> new RecordHeader(h.key(), h.value()))
                .toArray(org.apache.kafka.common.header.Header[]::new);
    }

    /** A batch built by Kafka's own {@code MemoryRecordsBuilder}. */
    static ByteBuffer kafkaBatch(BatchSpec spec, List<SampleRecord> records) {
        MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), (byte) 2,
                kafkaCompression(spec.compression()), spec.timestampType(), spec.baseOffset(), spec.logAppendTime(),
                spec.producerId(), spec.producerEpoch(), spec.baseSequence(), spec.transactional(), spec.control(),
                spec.partitionLeaderEpoch());
        for (SampleRecord record : records) {
            builder.append(record.timestamp(), record.key(), record.value(), kafkaHeaders(record.headers()));
        }
        return builder.build().buffer();
    }

    /** The same batch built by Cairn's {@link RecordBatchBuilder}, on a heap buffer the caller releases. */
    static ByteBuf cairnBatch(BatchSpec spec, List<SampleRecord> records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(io.netty.buffer.PooledByteBufAllocator.DEFAULT,
                spec.compression())
                .baseOffset(spec.baseOffset())
                .partitionLeaderEpoch(spec.partitionLeaderEpoch())
                .producer(spec.producerId(), spec.producerEpoch(), spec.baseSequence())
                .transactional(spec.transactional())
                .control(spec.control());
        if (spec.timestampType() == org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME) {
            builder.logAppendTime(spec.logAppendTime());
        }
        for (SampleRecord record : records) {
            builder.append(record.timestamp(), record.key(), record.value(), record.headers());
        }
        return builder.build();
    }

    static byte[] bytes(ByteBuffer buffer) {
        if (buffer == null) {
            return null;
        }
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    static ByteBuf wrap(ByteBuffer buffer) {
        return Unpooled.wrappedBuffer(buffer.duplicate());
    }

    static void assertSameHeader(MutableRecordBatch kafka, RecordBatch cairn) {
        assertThat(cairn.baseOffset()).as("baseOffset").isEqualTo(kafka.baseOffset());
        assertThat(cairn.lastOffset()).as("lastOffset").isEqualTo(kafka.lastOffset());
        assertThat(cairn.sizeInBytes()).as("sizeInBytes").isEqualTo(kafka.sizeInBytes());
        assertThat(cairn.partitionLeaderEpoch()).as("partitionLeaderEpoch").isEqualTo(kafka.partitionLeaderEpoch());
        assertThat(cairn.magic()).as("magic").isEqualTo(kafka.magic());
        assertThat(cairn.checksum()).as("crc").isEqualTo(kafka.checksum());
        assertThat(cairn.compressionType().id()).as("compression").isEqualTo(kafka.compressionType().id);
        assertThat(cairn.timestampType().id()).as("timestampType").isEqualTo(kafka.timestampType().id);
        assertThat(cairn.isTransactional()).as("transactional").isEqualTo(kafka.isTransactional());
        assertThat(cairn.isControlBatch()).as("control").isEqualTo(kafka.isControlBatch());
        assertThat(cairn.maxTimestamp()).as("maxTimestamp").isEqualTo(kafka.maxTimestamp());
        assertThat(cairn.deleteHorizonMs()).as("deleteHorizonMs").isEqualTo(kafka.deleteHorizonMs());
        assertThat(cairn.producerId()).as("producerId").isEqualTo(kafka.producerId());
        assertThat(cairn.producerEpoch()).as("producerEpoch").isEqualTo(kafka.producerEpoch());
        assertThat(cairn.baseSequence()).as("baseSequence").isEqualTo(kafka.baseSequence());
        assertThat(cairn.lastSequence()).as("lastSequence").isEqualTo(kafka.lastSequence());
        assertThat(cairn.recordCount()).as("recordCount").isEqualTo(kafka.countOrNull());
    }

    static void assertSameRecords(Iterable<org.apache.kafka.common.record.Record> kafka, List<Record> cairn) {
        List<org.apache.kafka.common.record.Record> kafkaRecords = new ArrayList<>();
        kafka.forEach(kafkaRecords::add);
        assertThat(cairn).hasSameSizeAs(kafkaRecords);
        for (int i = 0; i < cairn.size(); i++) {
            assertSameRecord(kafkaRecords.get(i), cairn.get(i));
        }
    }

    static void assertSameRecord(org.apache.kafka.common.record.Record kafka, Record cairn) {
        String at = "record at offset " + kafka.offset();
        assertThat(cairn.offset()).as(at).isEqualTo(kafka.offset());
        assertThat(cairn.timestamp()).as(at + " timestamp").isEqualTo(kafka.timestamp());
        assertThat(cairn.sequence()).as(at + " sequence").isEqualTo(kafka.sequence());
        assertThat(cairn.key()).as(at + " key").isEqualTo(bytes(kafka.key()));
        assertThat(cairn.value()).as(at + " value").isEqualTo(bytes(kafka.value()));
        assertThat(cairn.keySize()).as(at + " keySize").isEqualTo(kafka.keySize());
        assertThat(cairn.valueSize()).as(at + " valueSize").isEqualTo(kafka.valueSize());
        List<Header> kafkaHeaders = Arrays.stream(kafka.headers()).map(h -> new Header(h.key(), h.value())).toList();
        assertThat(cairn.headers()).as(at + " headers").isEqualTo(kafkaHeaders);
    }

    /** Compares a record read by Cairn with the sample it was built from. */
    static void assertMatchesSample(Record record, SampleRecord sample, long expectedOffset, long expectedTimestamp) {
        assertThat(record.offset()).isEqualTo(expectedOffset);
        assertThat(record.timestamp()).isEqualTo(expectedTimestamp);
        assertThat(record.key()).isEqualTo(sample.key());
        assertThat(record.value()).isEqualTo(sample.value());
        assertThat(record.headers()).isEqualTo(sample.headers());
    }
}
