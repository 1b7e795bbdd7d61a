package io.cairn.broker.coordinator;

import io.cairn.log.FetchDataInfo;
import io.cairn.log.PartitionLog;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.record.ControlRecordType;
import io.cairn.wire.record.EndTransactionMarker;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Optional;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Replays a partition of a coordinator kind's internal topic into its shard (Kafka's {@code CoordinatorLoaderImpl}):
 * reads the log from its start offset up to an end offset, chunk by chunk into heap buffers, and hands every record,
 * decoded by the kind's {@link CoordinatorSerde}, to the shard in log order. A record of a transactional batch is
 * replayed with its producer (the shard keeps it pending); a control batch's COMMIT or ABORT marker ends that
 * producer's transaction; other control records are skipped. Compressed batches are decompressed (the topic keeps the
 * producer's compression, so any codec may appear). Records of a type the kind does not read and records that do
 * not decode are skipped, counted and logged, never thrown: a bad record must not keep the coordinator from loading.
 *
 * <p>Thread-safety: stateless, thread-safe; one {@link #load} runs on its caller's thread and calls the shard there.
 * The log may be appended to meanwhile (the end offset bounds the read).
 */
public final class CoordinatorLoader {

    /** How many bytes are read from the log at a time (a larger batch is read whole). */
    public static final int DEFAULT_CHUNK_BYTES = 1024 * 1024;

    private static final Logger LOGGER = LogManager.getLogger(CoordinatorLoader.class);
    /** Malformed records logged one by one per load; the rest only in the summary. */
    private static final int MAX_LOGGED_MALFORMED = 10;

    private CoordinatorLoader() {
    }

    /**
     * What one load did.
     *
     * @param records   records handed to the sink
     * @param skipped   records skipped: an unknown record type, a missing key or a record that does not decode
     * @param markers   transaction markers replayed
     * @param bytes     bytes of the batches read, control batches included
     * @param endOffset the offset the load covered up to (exclusive): the end offset it was given
     * @param elapsedMs how long the load took
     */
    public record LoadSummary(long records, long skipped, long markers, long bytes, long endOffset, long elapsedMs) {
    }

    /** {@link #load(PartitionLog, long, CoordinatorSerde, CoordinatorShard, int)} with {@link #DEFAULT_CHUNK_BYTES}. */
    public static <R> LoadSummary load(PartitionLog log, long endOffset, CoordinatorSerde<R> serde,
                                       CoordinatorShard<R> shard) {
        return load(log, endOffset, serde, shard, DEFAULT_CHUNK_BYTES);
    }

    /**
     * Replays {@code log} from its log start offset up to {@code endOffset} into {@code shard}, in log order.
     *
     * @param log        the partition of the internal topic
     * @param endOffset  where to stop (exclusive)
     * @param serde      decodes the records
     * @param shard      receives every record and marker; what it throws ends the load
     * @param chunkBytes how many bytes to read at a time; a batch larger than that is read whole
     * @throws io.cairn.wire.error.OffsetOutOfRangeException when the log is truncated or its start moves meanwhile
     * @throws io.cairn.wire.error.CorruptRecordException    when a batch of the log does not decompress
     * @throws io.cairn.wire.error.InvalidRecordException    when a batch's records do not decode
     */
    public static <R> LoadSummary load(PartitionLog log, long endOffset, CoordinatorSerde<R> serde,
                                       CoordinatorShard<R> shard, int chunkBytes) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("Invalid chunk size " + chunkBytes);
        }
        long startNanos = System.nanoTime();
        Replay<R> replay = new Replay<>(log, endOffset, serde, shard);
        long offset = log.logStartOffset();
        while (offset < endOffset) {
            ByteBuffer chunk;
            try (FetchDataInfo info = log.read(offset, chunkBytes, endOffset, true)) {
                if (info.records().length() == 0) {
                    break;
                }
                chunk = info.records().readBytes();
            }
            long next = replay.chunk(chunk);
            if (next <= offset) {
                throw new IllegalStateException("Loading " + log.dir().getFileName() + " made no progress at offset "
                        + offset + ": the read returned no complete batch");
            }
            offset = next;
        }
        long elapsedMs = (System.nanoTime() - startNanos) / 1_000_000L;
        if (replay.skipped > 0) {
            LOGGER.warn("Skipped {} record(s) of {} while loading it ({} of an unknown record type, the others "
                    + "malformed)", replay.skipped, log.dir().getFileName(), replay.unknownType);
        }
        return new LoadSummary(replay.records, replay.skipped, replay.markers, replay.bytes, endOffset, elapsedMs);
    }

    /** The state of one load. Confined to the loading thread. */
    private static final class Replay<R> {

        private final PartitionLog log;
        private final long endOffset;
        private final CoordinatorSerde<R> serde;
        private final CoordinatorShard<R> shard;
        private long records;
        private long markers;
        private long skipped;
        private long unknownType;
        private long bytes;

        Replay(PartitionLog log, long endOffset, CoordinatorSerde<R> serde, CoordinatorShard<R> shard) {
            this.log = log;
            this.endOffset = endOffset;
            this.serde = serde;
            this.shard = shard;
        }

        /** Replays the complete batches of {@code chunk}; returns the offset after the last one. */
        long chunk(ByteBuffer chunk) {
            ByteBuf buf = Unpooled.wrappedBuffer(chunk);
            try {
                long next = -1L;
                for (RecordBatch batch : RecordBatches.of(buf)) {
                    next = batch.nextOffset();
                    bytes += batch.sizeInBytes();
                    if (batch.isControlBatch()) {
                        control(batch);
                    } else {
                        batch(batch);
                    }
                }
                return next;
            } finally {
                buf.release();
            }
        }

        private void control(RecordBatch batch) {
            for (Record record : batch.records()) {
                if (record.offset() >= endOffset) {
                    return;
                }
                ControlRecordType type;
                try {
                    type = ControlRecordType.parse(record.key());
                    if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                        EndTransactionMarker.parse(record);
                    }
                } catch (InvalidRecordException e) {
                    skipped++;
                    LOGGER.warn("Skipping the malformed control record at offset {} of {}: {}", record.offset(),
                            log.dir().getFileName(), e.getMessage());
                    continue;
                }
                if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
                    shard.replayEndTransactionMarker(batch.producerId(), batch.producerEpoch(),
                        type == ControlRecordType.COMMIT);
                    markers++;
                }
            }
        }

        private void batch(RecordBatch batch) {
            long producerId = batch.isTransactional() ? batch.producerId() : RecordBatch.NO_PRODUCER_ID;
            short producerEpoch = batch.isTransactional() ? batch.producerEpoch() : RecordBatch.NO_PRODUCER_EPOCH;
            for (Record record : batch.records()) {
                if (record.offset() >= endOffset) {
                    return;
                }
                Optional<R> decoded;
                try {
                    if (!record.hasKey()) {
                        throw new CoordinatorSerde.MalformedRecordException("Record has no key");
                    }
                    decoded = serde.decode(record.keyBuffer(), record.valueBuffer());
                } catch (CoordinatorSerde.MalformedRecordException e) {
                    skipped++;
                    if (skipped - unknownType <= MAX_LOGGED_MALFORMED) {
                        LOGGER.warn("Skipping the malformed record at offset {} of {}: {}", record.offset(),
                                log.dir().getFileName(), e.getMessage());
                    }
                    continue;
                }
                if (decoded.isEmpty()) {
                    skipped++;
                    unknownType++;
                    continue;
                }
                shard.replay(record.offset(), producerId, producerEpoch, decoded.get());
                records++;
            }
        }
    }
}
