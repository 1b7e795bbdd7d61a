package io.cairn.broker.group;

import io.cairn.log.FetchDataInfo;
import io.cairn.log.PartitionLog;
import io.cairn.wire.record.Record;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Replays a {@code __consumer_offsets} partition into a coordinator shard: reads the log from its start offset up to
 * an end offset (the high watermark), chunk by chunk into heap buffers, and hands every record, decoded by
 * {@link GroupRecordSerde}, to a sink in log order. Control batches (transaction markers) are skipped; compressed
 * batches are decompressed (the topic keeps the producer's compression, so any codec may appear). Records of a type
 * Cairn does not read (KIP-848 consumer, share and streams groups) and records that do not decode are skipped, counted
 * and logged, never thrown: a bad record must not keep the coordinator from loading.
 *
 * <p>Transactions are not filtered yet: a transactional offset commit is applied as if committed, whatever its
 * transaction's outcome. Cairn does not write transactional offset commits before TxnOffsetCommit exists; the
 * transaction issue adds the filtering (pending producers, aborted ranges) with it.
 *
 * <p>Thread-safety: stateless, thread-safe; one {@link #load} runs on its caller's thread and calls the sink there.
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
     * @param bytes     bytes of the batches read, control batches included
     * @param endOffset the offset the load covered up to (exclusive): the end offset it was given
     * @param elapsedMs how long the load took
     */
    public record LoadSummary(long records, long skipped, long bytes, long endOffset, long elapsedMs) {
    }

    /** {@link #load(PartitionLog, long, Consumer, int)} with {@link #DEFAULT_CHUNK_BYTES}. */
    public static LoadSummary load(PartitionLog log, long endOffset, Consumer<CoordinatorRecord> sink) {
        return load(log, endOffset, sink, DEFAULT_CHUNK_BYTES);
    }

    /**
     * Replays {@code log} from its log start offset up to {@code endOffset} into {@code sink}, in log order.
     *
     * @param log        the {@code __consumer_offsets} partition
     * @param endOffset  where to stop (exclusive): the high watermark, so that nothing uncommitted is replayed
     * @param sink       receives every record; what it throws ends the load
     * @param chunkBytes how many bytes to read at a time; a batch larger than that is read whole
     * @throws io.cairn.wire.error.OffsetOutOfRangeException when the log is truncated or its start moves meanwhile
     * @throws io.cairn.wire.error.CorruptRecordException    when a batch of the log does not decompress
     * @throws io.cairn.wire.error.InvalidRecordException    when a batch's records do not decode
     */
    public static LoadSummary load(PartitionLog log, long endOffset, Consumer<CoordinatorRecord> sink,
                                   int chunkBytes) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("Invalid chunk size " + chunkBytes);
        }
        long startNanos = System.nanoTime();
        Replay replay = new Replay(log, endOffset, sink);
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
        return new LoadSummary(replay.records, replay.skipped, replay.bytes, endOffset, elapsedMs);
    }

    /** The state of one load. Confined to the loading thread. */
    private static final class Replay {

        private final PartitionLog log;
        private final long endOffset;
        private final Consumer<CoordinatorRecord> sink;
        private long records;
        private long skipped;
        private long unknownType;
        private long bytes;

        Replay(PartitionLog log, long endOffset, Consumer<CoordinatorRecord> sink) {
            this.log = log;
            this.endOffset = endOffset;
            this.sink = sink;
        }

        /** Replays the complete batches of {@code chunk}; returns the offset after the last one. */
        long chunk(ByteBuffer chunk) {
            ByteBuf buf = Unpooled.wrappedBuffer(chunk);
            try {
                long next = -1L;
                for (RecordBatch batch : RecordBatches.of(buf)) {
                    next = batch.nextOffset();
                    bytes += batch.sizeInBytes();
                    if (!batch.isControlBatch()) {
                        batch(batch);
                    }
                }
                return next;
            } finally {
                buf.release();
            }
        }

        private void batch(RecordBatch batch) {
            for (Record record : batch.records()) {
                if (record.offset() >= endOffset) {
                    return;
                }
                Optional<CoordinatorRecord> decoded;
                try {
                    if (!record.hasKey()) {
                        throw new GroupRecordSerde.MalformedRecordException("Record has no key");
                    }
                    decoded = GroupRecordSerde.decode(record.keyBuffer(), record.valueBuffer());
                } catch (GroupRecordSerde.MalformedRecordException e) {
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
                sink.accept(decoded.get());
                records++;
            }
        }
    }
}
