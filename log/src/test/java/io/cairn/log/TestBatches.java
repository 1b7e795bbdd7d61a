package io.cairn.log;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.ControlRecordType;
import org.apache.kafka.common.record.EndTransactionMarker;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;

/** Builds v2 batches with kafka-clients, the reference encoder, and decodes what the log returns. */
public final class TestBatches {

    private TestBatches() {
    }

    /** One uncompressed batch of values with the given timestamp. */
    public static ByteBuffer values(long timestamp, String... values) {
        return withCompression(Compression.NONE, timestamp, values);
    }

    public static ByteBuffer withCompression(Compression compression, long timestamp, String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(timestamp, null, values[i].getBytes(StandardCharsets.UTF_8));
        }
        return copy(MemoryRecords.withRecords(compression, records).buffer());
    }

    /** One batch with per-record timestamps. */
    public static ByteBuffer timestamped(long[] timestamps) {
        SimpleRecord[] records = new SimpleRecord[timestamps.length];
        for (int i = 0; i < timestamps.length; i++) {
            records[i] = new SimpleRecord(timestamps[i], null, ("v" + i).getBytes(StandardCharsets.UTF_8));
        }
        return copy(MemoryRecords.withRecords(Compression.NONE, records).buffer());
    }

    /** One batch of key/value records (value null = tombstone). */
    public static ByteBuffer keyed(long timestamp, String... keyValues) {
        SimpleRecord[] records = new SimpleRecord[keyValues.length / 2];
        for (int i = 0; i < records.length; i++) {
            String v = keyValues[2 * i + 1];
            records[i] = new SimpleRecord(timestamp, keyValues[2 * i].getBytes(StandardCharsets.UTF_8),
                v == null ? null : v.getBytes(StandardCharsets.UTF_8));
        }
        return copy(MemoryRecords.withRecords(Compression.NONE, records).buffer());
    }

    /** An idempotent batch. */
    public static ByteBuffer idempotent(long producerId, short epoch, int baseSequence, long timestamp,
                                        String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(timestamp, null, values[i].getBytes(StandardCharsets.UTF_8));
        }
        return copy(MemoryRecords.withIdempotentRecords(Compression.NONE, producerId, epoch, baseSequence, records)
            .buffer());
    }

    /** A transactional batch. */
    public static ByteBuffer transactional(long producerId, short epoch, int baseSequence, long timestamp,
                                           String... values) {
        SimpleRecord[] records = new SimpleRecord[values.length];
        for (int i = 0; i < values.length; i++) {
            records[i] = new SimpleRecord(timestamp, null, values[i].getBytes(StandardCharsets.UTF_8));
        }
        return copy(MemoryRecords.withTransactionalRecords(Compression.NONE, producerId, epoch, baseSequence,
            records).buffer());
    }

    /** A COMMIT or ABORT marker. */
    public static ByteBuffer marker(long producerId, short epoch, boolean commit, long timestamp) {
        return marker(producerId, epoch, commit, timestamp, 0);
    }

    /** A COMMIT or ABORT marker written by coordinator epoch {@code coordinatorEpoch}. */
    public static ByteBuffer marker(long producerId, short epoch, boolean commit, long timestamp,
                                    int coordinatorEpoch) {
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT
            : ControlRecordType.ABORT, coordinatorEpoch);
        return copy(MemoryRecords.withEndTransactionMarker(0L, timestamp, 0, producerId, epoch, marker).buffer());
    }

    /** Concatenates batches. */
    public static ByteBuffer concat(ByteBuffer... batches) {
        int size = 0;
        for (ByteBuffer b : batches) {
            size += b.remaining();
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        for (ByteBuffer b : batches) {
            out.put(b.duplicate());
        }
        return out.flip();
    }

    /** Decodes batches with kafka-clients (which checks their CRC when asked). */
    public static List<MutableRecordBatch> batches(ByteBuffer bytes) {
        List<MutableRecordBatch> out = new ArrayList<>();
        for (MutableRecordBatch b : MemoryRecords.readableRecords(bytes.duplicate()).batches()) {
            out.add(b);
        }
        return out;
    }

    /** Offsets and values of every record in whole batches of {@code bytes} (a trailing partial batch is ignored). */
    public static List<String> offsetsAndValues(ByteBuffer bytes) {
        List<String> out = new ArrayList<>();
        for (MutableRecordBatch b : batches(bytes)) {
            b.ensureValid();
            for (Record r : b) {
                out.add(r.offset() + ":" + (r.hasValue() ? StandardCharsets.UTF_8.decode(r.value()) : "null"));
            }
        }
        return out;
    }

    public static int magic() {
        return RecordBatch.CURRENT_MAGIC_VALUE;
    }

    private static ByteBuffer copy(ByteBuffer src) {
        ByteBuffer out = ByteBuffer.allocate(src.remaining());
        out.put(src.duplicate());
        return out.flip();
    }
}
