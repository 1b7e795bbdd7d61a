package io.cairn.log;

import java.util.UUID;

/**
 * The names of partition directories inside a log directory, as Kafka's {@code UnifiedLog} names them: a partition's
 * log is {@code <topic>-<partition>}; a future log (the copy that replaces it in another log directory, KIP-113) is
 * {@code <topic>-<partition>.<32 hex digits>-future}; a log being deleted ends in {@code -delete}. Stateless.
 */
public final class LogDirNames {

    public static final String FUTURE_SUFFIX = "-future";
    public static final String DELETE_SUFFIX = "-delete";
    /** Kafka's bound on a directory name (KAFKA-4893): a future log's name must fit in it. */
    public static final int MAX_NAME_LENGTH = 255;

    private LogDirNames() {
    }

    /** {@code <topic>-<partition>}. */
    public static String partitionDirName(String topic, int partition) {
        return topic + "-" + partition;
    }

    /** A new future log directory name for the partition, unique by a random id (Kafka's {@code logFutureDirName}). */
    public static String futureDirName(String topic, int partition) {
        return partitionDirName(topic, partition) + "." + UUID.randomUUID().toString().replace("-", "") + FUTURE_SUFFIX;
    }

    /** The longest name a future log of {@code topic}-{@code partition} gets. */
    public static int futureDirNameLength(String topic, int partition) {
        return partitionDirName(topic, partition).length() + 1 + 32 + FUTURE_SUFFIX.length();
    }

    /** Whether {@code name} is a future log's directory name. */
    public static boolean isFuture(String name) {
        if (!name.endsWith(FUTURE_SUFFIX)) {
            return false;
        }
        int dot = name.lastIndexOf('.');
        return dot > 0 && dot == name.length() - FUTURE_SUFFIX.length() - 33 && isPartitionDir(name.substring(0, dot));
    }

    /** {@code <topic>-<partition>} of a partition's or future log's directory name. */
    public static String partitionNameOf(String name) {
        return isFuture(name) ? name.substring(0, name.lastIndexOf('.')) : name;
    }

    /** Whether {@code name} is {@code <topic>-<partition>} with a partition number of at least 0. */
    public static boolean isPartitionDir(String name) {
        int dash = name.lastIndexOf('-');
        if (dash <= 0 || name.endsWith(DELETE_SUFFIX)) {
            return false;
        }
        try {
            return Integer.parseInt(name.substring(dash + 1)) >= 0;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
