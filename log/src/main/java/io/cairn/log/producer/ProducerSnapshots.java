package io.cairn.log.producer;

import io.cairn.log.io.FileLayer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Producer-state snapshots, {@code <20-digit offset>.snapshot} in the partition directory, written at each segment
 * roll and on clean shutdown, in Kafka's version-1 format so {@code kafka-dump-log} can print them (big-endian):
 * <pre>
 * version int16 = 1
 * crc     uint32 = CRC32C of every byte after this field
 * count   int32
 * count × { producerId int64, epoch int16, lastSequence int32, lastOffset int64, offsetDelta int32,
 *           timestamp int64, coordinatorEpoch int32, currentTxnFirstOffset int64 }
 * </pre>
 * Like Kafka, a snapshot keeps only each producer's last batch; the batches after the snapshot offset are replayed
 * from the log on load. Stateless and thread-safe; callers serialise per partition.
 */
public final class ProducerSnapshots {

    public static final String SUFFIX = ".snapshot";
    private static final Logger LOGGER = LogManager.getLogger(ProducerSnapshots.class);
    private static final int ENTRY_SIZE = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;

    private ProducerSnapshots() {
    }

    public static Path file(Path dir, long offset) {
        return dir.resolve(String.format("%020d", offset) + SUFFIX);
    }

    /**
     * Writes the state as the snapshot at {@code offset}, atomically and durably: a temp file, fsynced, renamed into
     * place, the directory fsynced ({@link FileLayer#atomicMove}).
     */
    public static void write(FileLayer layer, Path dir, long offset, ProducerStateManager state) {
        List<ProducerStateEntry> entries = new ArrayList<>(state.activeProducers());
        ByteBuffer body = ByteBuffer.allocate(4 + ENTRY_SIZE * entries.size());
        body.putInt(entries.size());
        for (ProducerStateEntry e : entries) {
            BatchMetadata last = e.lastBatch();
            body.putLong(e.producerId()).putShort(e.producerEpoch())
                .putInt(last == null ? -1 : last.lastSeq())
                .putLong(last == null ? -1L : last.lastOffset())
                .putInt(last == null ? 0 : last.offsetDelta())
                .putLong(e.lastTimestamp()).putInt(e.coordinatorEpoch()).putLong(e.currentTxnFirstOffset());
        }
        body.flip();
        CRC32C crc = new CRC32C();
        crc.update(body.duplicate());
        ByteBuffer out = ByteBuffer.allocate(6 + body.remaining());
        out.putShort((short) 1).putInt((int) crc.getValue()).put(body).flip();
        Path target = file(dir, offset);
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        try {
            try (FileChannel ch = layer.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
                while (out.hasRemaining()) {
                    ch.write(out);
                }
                ch.force(true);
            }
            layer.atomicMove(tmp, target);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write producer snapshot " + target, e);
        }
    }

    /** Reads a snapshot; empty when it is corrupt (the caller falls back to an older one or a full replay). */
    public static Optional<List<ProducerStateEntry>> read(Path file) {
        try {
            ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(file));
            if (buf.remaining() < 10 || buf.getShort() != 1) {
                return Optional.empty();
            }
            long crc = Integer.toUnsignedLong(buf.getInt());
            CRC32C actual = new CRC32C();
            actual.update(buf.duplicate());
            if (actual.getValue() != crc) {
                return Optional.empty();
            }
            int count = buf.getInt();
            if (count < 0 || buf.remaining() != (long) count * ENTRY_SIZE) {
                return Optional.empty();
            }
            List<ProducerStateEntry> entries = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                long pid = buf.getLong();
                short epoch = buf.getShort();
                int lastSeq = buf.getInt();
                long lastOffset = buf.getLong();
                int offsetDelta = buf.getInt();
                long timestamp = buf.getLong();
                int coordinatorEpoch = buf.getInt();
                long txnFirst = buf.getLong();
                ProducerStateEntry e = new ProducerStateEntry(pid, epoch, coordinatorEpoch, timestamp, txnFirst);
                if (lastSeq >= 0) {
                    int firstSeq = Math.max(0, lastSeq - offsetDelta);
                    e.addBatch(epoch, new BatchMetadata(firstSeq, lastSeq, lastOffset, offsetDelta, timestamp));
                }
                entries.add(e);
            }
            return Optional.of(entries);
        } catch (IOException e) {
            LOGGER.warn("Cannot read producer snapshot {}: {}", file, e.toString());
            return Optional.empty();
        }
    }

    /** Snapshot files by offset. */
    public static TreeMap<Long, Path> list(Path dir) {
        TreeMap<Long, Path> out = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(p -> {
                String name = p.getFileName().toString();
                if (name.endsWith(SUFFIX) && name.length() == 20 + SUFFIX.length()) {
                    out.put(Long.parseLong(name.substring(0, 20)), p);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
        return out;
    }

    /** Deletes snapshots with an offset above {@code offset}. */
    public static void deleteAfter(Path dir, long offset) {
        deleteIf(dir, o -> o > offset);
    }

    /** Deletes snapshots with an offset below {@code offset}. */
    public static void deleteBefore(Path dir, long offset) {
        deleteIf(dir, o -> o < offset);
    }

    private static void deleteIf(Path dir, java.util.function.LongPredicate which) {
        for (var e : list(dir).entrySet()) {
            if (which.test(e.getKey())) {
                try {
                    Files.deleteIfExists(e.getValue());
                } catch (IOException ex) {
                    throw new UncheckedIOException("cannot delete " + e.getValue(), ex);
                }
            }
        }
    }
}
