package io.cairn.compat.replication;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a power cut leaves of a stopped (SIGKILLed) broker's partition logs, for either kind: the bytes of the active
 * segment that were never fsynced may be lost. Kafka's segment format and its file names are the same on both; the
 * point known to be on disk is the recovery point each broker checkpoints after its flushes (Kafka's
 * {@code recovery-point-offset-checkpoint} in the log directory, Cairn's {@code log-offsets-checkpoint} in the
 * partition's), which lags the flushes themselves, so the cut never reaches below a flush. The metadata log (Raft,
 * which fsyncs what it acknowledges) is left alone, and so are indexes and checkpoint files (each written whole and
 * fsynced, or rebuilt when the log is recovered).
 */
final class PowerCut {

    private static final Pattern PARTITION_DIR = Pattern.compile("(.+)-(\\d+)");
    private static final String METADATA_LOG = "__cluster_metadata-0";
    private static final String[] HOW = {"cut", "zeroed", "garbled"};

    private PowerCut() {
    }

    /**
     * Loses the unsynced tail of the active segment of every partition in {@code dataDir} that {@code topics} accepts
     * (by topic name): from a random byte of the second half of its batches on, past the recovery point and past every
     * batch below {@code synced} (a partition directory's name to an offset known to be fsynced, 0 when none), the file
     * is cut there, or the rest zeroed (the size was written, the data was not), or overwritten with random bytes.
     * Returns what was done to each, naming {@code nodeId}.
     */
    static List<String> loseUnsyncedTails(Path dataDir, Predicate<String> topics, ToLongFunction<String> synced,
                                          int nodeId, Random random) throws IOException {
        List<Path> dirs;
        try (Stream<Path> files = Files.list(dataDir)) {
            dirs = files.filter(Files::isDirectory).filter(dir -> {
                String name = dir.getFileName().toString();
                var matcher = PARTITION_DIR.matcher(name);
                return !name.equals(METADATA_LOG) && matcher.matches() && topics.test(matcher.group(1));
            }).sorted().toList();
        }
        List<String> cuts = new ArrayList<>();
        for (Path dir : dirs) {
            String name = dir.getFileName().toString();
            List<Path> segments = segments(dir);
            if (segments.isEmpty()) {
                continue;
            }
            Path last = segments.get(segments.size() - 1);
            long end = batchesEnd(last, Long.MAX_VALUE);
            long keep = Math.max(synced.applyAsLong(name), recoveryPoint(dataDir, dir));
            long from = Math.max(end / 2, batchesEnd(last, keep));
            long cut = from + (long) (random.nextDouble() * (end - from));
            int how = random.nextInt(HOW.length);
            try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE)) {
                if (how == 0) {
                    ch.truncate(cut);
                } else {
                    byte[] rest = new byte[(int) (end - cut)];
                    if (how == 2) {
                        random.nextBytes(rest);
                    }
                    ch.write(ByteBuffer.wrap(rest), cut);
                }
            }
            cuts.add(name + " on node " + nodeId + " " + HOW[how] + " at byte " + cut + " of " + end);
        }
        return cuts;
    }

    /** {@code base-last@leaderEpoch:crc} of each batch of a partition's log whose base offset is below {@code end}. */
    static List<String> batchesBelow(Path dir, long end) throws IOException {
        List<String> batches = new ArrayList<>();
        for (Path segment : segments(dir)) {
            for (Header batch : headers(segment)) {
                if (batch.base() >= end) {
                    return batches;
                }
                batches.add(batch.base() + "-" + batch.last() + "@" + batch.leaderEpoch() + ":"
                        + Integer.toUnsignedString(batch.crc(), 16));
            }
        }
        return batches;
    }

    private static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(".log")).sorted().toList();
        }
    }

    /** The byte after the last whole batch of a segment file whose base offset is below {@code below}. */
    private static long batchesEnd(Path segment, long below) throws IOException {
        long end = 0;
        for (Header batch : headers(segment)) {
            if (batch.base() >= below) {
                break;
            }
            end = batch.end();
        }
        return end;
    }

    /** A batch's header fields (Kafka's format v2) and the byte after it in its file. */
    private record Header(long base, long last, int leaderEpoch, int crc, long end) {
    }

    /** The headers of a segment file's whole batches, up to the first that is not whole or has no length. */
    private static List<Header> headers(Path segment) throws IOException {
        List<Header> headers = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
            long size = ch.size();
            long position = 0;
            ByteBuffer header = ByteBuffer.allocate(27);
            while (position + header.capacity() <= size) {
                header.clear();
                ch.read(header, position);
                long base = header.getLong(0);
                int length = header.getInt(8);
                if (length <= 0 || position + 12 + length > size) {
                    break;
                }
                position += 12 + length;
                headers.add(new Header(base, base + header.getInt(23), header.getInt(12), header.getInt(17),
                        position));
            }
        }
        return headers;
    }

    /** The recovery point the broker last checkpointed for partition directory {@code dir}; 0 when none. */
    private static long recoveryPoint(Path dataDir, Path dir) throws IOException {
        Path cairn = dir.resolve("log-offsets-checkpoint");
        if (Files.exists(cairn)) {
            for (String line : Files.readAllLines(cairn, StandardCharsets.UTF_8)) {
                String[] parts = line.trim().split("\\s+");
                if (parts.length == 2 && parts[0].equals("recovery-point")) {
                    return Math.max(0L, Long.parseLong(parts[1]));
                }
            }
        }
        Path kafka = dataDir.resolve("recovery-point-offset-checkpoint");
        if (Files.exists(kafka)) {
            var matcher = PARTITION_DIR.matcher(dir.getFileName().toString());
            if (matcher.matches()) {
                for (String line : Files.readAllLines(kafka, StandardCharsets.UTF_8)) {
                    String[] parts = line.trim().split("\\s+");
                    if (parts.length == 3 && parts[0].equals(matcher.group(1)) && parts[1].equals(matcher.group(2))) {
                        return Long.parseLong(parts[2]);
                    }
                }
            }
        }
        return 0L;
    }
}
