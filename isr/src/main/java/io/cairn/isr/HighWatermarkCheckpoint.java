package io.cairn.isr;

import io.cairn.log.io.CheckpointFile;
import io.cairn.log.io.FileLayer;
import io.cairn.metadata.image.TopicPartition;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The high watermarks of the partitions of one log directory, in Kafka's {@code replication-offset-checkpoint}
 * file (Kafka's {@code OffsetCheckpointFile}), so that a restarted broker answers consumers with the high watermark
 * it had instead of the log start offset. Written atomically and durably (temp file, fsync, rename, directory
 * fsync: {@link CheckpointFile}).
 *
 * <pre>
 * 0                     version
 * 2                     number of entries
 * orders 0 1042         topic, partition, high watermark (one line per partition, separated by spaces)
 * payments 3 77
 * </pre>
 *
 * <p>Stateless and thread-safe; the caller serialises writes to one directory.
 */
public final class HighWatermarkCheckpoint {

    /** Kafka's file name, in each log directory. */
    public static final String FILE_NAME = "replication-offset-checkpoint";
    private static final int VERSION = 0;
    private static final Logger LOGGER = LogManager.getLogger(HighWatermarkCheckpoint.class);

    private HighWatermarkCheckpoint() {
    }

    /** Replaces the checkpoint of {@code logDir} with {@code highWatermarks}. */
    public static void write(FileLayer layer, Path logDir, Map<TopicPartition, Long> highWatermarks) {
        List<String> lines = new ArrayList<>(highWatermarks.size());
        highWatermarks.forEach((tp, hw) -> lines.add(tp.topic() + " " + tp.partition() + " " + hw));
        CheckpointFile.writeEntries(layer, logDir.resolve(FILE_NAME), VERSION, lines);
    }

    /**
     * The checkpointed high watermarks of {@code logDir}; empty when there is no file. A malformed file is reported
     * at WARN and ignored (the partitions then start from their log start offset, as without a checkpoint), so that
     * a damaged checkpoint never keeps the broker from starting; a malformed line skips only that line.
     */
    public static Map<TopicPartition, Long> read(Path logDir) {
        Path file = logDir.resolve(FILE_NAME);
        List<String> lines;
        try {
            lines = CheckpointFile.readEntries(file, VERSION);
        } catch (RuntimeException e) {
            LOGGER.warn("Ignoring the unreadable high-watermark checkpoint {}: {}", file, e.getMessage());
            return Map.of();
        }
        Map<TopicPartition, Long> highWatermarks = new HashMap<>();
        for (String line : lines) {
            String[] fields = line.trim().split("\\s+");
            try {
                if (fields.length != 3) {
                    throw new NumberFormatException("expected 3 fields");
                }
                highWatermarks.put(new TopicPartition(fields[0], Integer.parseInt(fields[1])),
                    Long.parseLong(fields[2]));
            } catch (NumberFormatException e) {
                LOGGER.warn("Ignoring the malformed line '{}' of high-watermark checkpoint {}", line, file);
            }
        }
        return highWatermarks;
    }
}
