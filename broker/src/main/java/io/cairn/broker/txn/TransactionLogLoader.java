package io.cairn.broker.txn;

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
 * Replays a {@code __transaction_state} partition into a transaction shard (Kafka's
 * {@code TransactionStateManager.loadTransactionMetadata}): reads the log from its start offset up to an end offset,
 * {@code transaction.state.log.load.buffer.size} bytes at a time (a larger batch is read whole), and hands every
 * record, decoded by {@link TransactionLog}, to a sink in log order; the last record of an id wins. Control batches
 * are skipped; records of an unknown type and records that do not decode are skipped, counted and logged, never
 * thrown. The same replay as the group coordinator's {@code CoordinatorLoader}, with this topic's decoding.
 *
 * <p>Thread-safety: stateless, thread-safe; one {@link #load} runs on its caller's thread and calls the sink there.
 */
public final class TransactionLogLoader {

    private static final Logger LOGGER = LogManager.getLogger(TransactionLogLoader.class);
    private static final int MAX_LOGGED_MALFORMED = 10;

    private TransactionLogLoader() {
    }

    /**
     * What one load did.
     *
     * @param records   records handed to the sink
     * @param skipped   records skipped (unknown type or malformed)
     * @param endOffset the offset loaded up to (exclusive)
     */
    public record LoadSummary(long records, long skipped, long endOffset) {
    }

    /**
     * Replays {@code log} from its log start offset up to {@code endOffset} into {@code sink}.
     *
     * @param chunkBytes how many bytes to read at a time
     * @throws io.cairn.wire.error.OffsetOutOfRangeException when the log is truncated meanwhile
     */
    public static LoadSummary load(PartitionLog log, long endOffset, Consumer<TransactionLog.Entry> sink,
                                   int chunkBytes) {
        if (chunkBytes <= 0) {
            throw new IllegalArgumentException("Invalid chunk size " + chunkBytes);
        }
        long[] counts = new long[2];
        long offset = log.logStartOffset();
        while (offset < endOffset) {
            ByteBuffer chunk;
            try (FetchDataInfo info = log.read(offset, chunkBytes, endOffset, true)) {
                if (info.records().length() == 0) {
                    break;
                }
                chunk = info.records().readBytes();
            }
            long next = chunk(log, chunk, endOffset, sink, counts);
            if (next <= offset) {
                throw new IllegalStateException("Loading " + log.dir().getFileName() + " made no progress at offset "
                        + offset);
            }
            offset = next;
        }
        if (counts[1] > 0) {
            LOGGER.warn("Skipped {} record(s) of {} while loading it", counts[1], log.dir().getFileName());
        }
        return new LoadSummary(counts[0], counts[1], endOffset);
    }

    private static long chunk(PartitionLog log, ByteBuffer chunk, long endOffset, Consumer<TransactionLog.Entry> sink,
                              long[] counts) {
        ByteBuf buf = Unpooled.wrappedBuffer(chunk);
        try {
            long next = -1L;
            for (RecordBatch batch : RecordBatches.of(buf)) {
                next = batch.nextOffset();
                if (batch.isControlBatch()) {
                    continue;
                }
                for (Record record : batch.records()) {
                    if (record.offset() >= endOffset) {
                        break;
                    }
                    Optional<TransactionLog.Entry> entry = decode(log, record, counts);
                    if (entry.isPresent()) {
                        sink.accept(entry.get());
                        counts[0]++;
                    }
                }
            }
            return next;
        } finally {
            buf.release();
        }
    }

    private static Optional<TransactionLog.Entry> decode(PartitionLog log, Record record, long[] counts) {
        try {
            Optional<TransactionLog.Entry> entry = TransactionLog.decode(record.hasKey() ? record.keyBuffer() : null,
                    record.hasValue() ? record.valueBuffer() : null);
            if (entry.isEmpty()) {
                counts[1]++;
            }
            return entry;
        } catch (TransactionLog.MalformedRecordException e) {
            counts[1]++;
            if (counts[1] <= MAX_LOGGED_MALFORMED) {
                LOGGER.warn("Skipping the malformed record at offset {} of {}: {}", record.offset(),
                        log.dir().getFileName(), e.getMessage());
            }
            return Optional.empty();
        }
    }
}
