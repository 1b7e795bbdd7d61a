package io.cairn.isr;

import io.cairn.log.LogConfig;
import io.cairn.log.LogDirNames;
import io.cairn.log.LogManager;
import io.cairn.log.PartitionLog;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.logging.log4j.Logger;

/**
 * The replica moves between this broker's log directories (AlterReplicaLogDirs, KIP-113), the replica manager's
 * part of them (Kafka's {@code ReplicaManager.alterReplicaLogDirs} and {@code LogManager.maybeUpdatePreferredLogDir}):
 * a move creates the partition's future log in the target directory and hands the partition to the
 * {@link ReplicaAlterLogDirsManager}, whose threads copy and then swap it in. The swap retires the old log first (its
 * directory renamed {@code -delete} and fsynced) and renames the future one into place second, so a restart finds
 * either both logs (the move resumes from the future log's end: {@link #resume}) or only the future log, which is
 * then complete and becomes the log ({@link #completeCutShortSwap}). A directory named for a partition of the
 * metadata image that is not hosted here yet is remembered as its preferred directory. The copy is throttled by
 * {@link #quota()}, the broker's (or the cluster default's) {@code replica.alter.log.dirs.io.max.bytes.per.second}.
 *
 * <p>Thread-safety: thread-safe. Move requests, resumptions and the replica manager's partition removals are
 * serialised by one lock ({@link #whileNoMoveStarts}), so no move starts on a partition being removed.
 */
final class LogDirMoves implements AutoCloseable {

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(LogDirMoves.class);
    /** Bytes per copy step of a replica move: Kafka's {@code replica.fetch.max.bytes} default. */
    private static final int FETCH_BYTES = 1024 * 1024;
    /** Back-off of a throttled or failed replica move: Kafka's {@code replica.fetch.backoff.ms} default. */
    private static final long BACKOFF_MS = 1000L;

    private final List<LogManager> logManagers;
    private final Function<TopicPartition, Optional<Partition>> partitions;
    private final Predicate<TopicPartition> inImage;
    private final Runnable checkpointHighWatermarks;
    private final ReplicationQuota quota;
    private final ReplicaAlterLogDirsManager movers;
    /** Log directories named by AlterReplicaLogDirs for partitions not hosted yet; written under {@link #lock}. */
    private final Map<TopicPartition, LogManager> preferredLogDirs = new ConcurrentHashMap<>();
    private final Object lock = new Object();

    /**
     * @param logManagers              the log directories, one mover thread each
     * @param hosted                   the hosted partition of a topic partition, or null (what the movers see)
     * @param partitions               the hosted partition, if the metadata applier created it (never created here)
     * @param inImage                  whether the current metadata image has a partition
     * @param checkpointHighWatermarks writes the high-watermark checkpoints (after a swap)
     * @param quota                    the throttle of the copy
     */
    LogDirMoves(List<LogManager> logManagers, Function<TopicPartition, Partition> hosted,
                Function<TopicPartition, Optional<Partition>> partitions, Predicate<TopicPartition> inImage,
                Runnable checkpointHighWatermarks, ReplicationQuota quota) {
        this.logManagers = logManagers;
        this.partitions = partitions;
        this.inImage = inImage;
        this.checkpointHighWatermarks = checkpointHighWatermarks;
        this.quota = quota;
        this.movers = new ReplicaAlterLogDirsManager(logManagers.size(), hosted, quota, new LogDirSwapper(),
            FETCH_BYTES, BACKOFF_MS);
    }

    ReplicationQuota quota() {
        return quota;
    }

    /**
     * For each partition, the log directory (an absolute path of {@code log.dirs}) its replica on this broker should
     * live in. A move to another directory cancels a move in progress to a third one; the directory is remembered
     * for a partition of the metadata image not hosted here yet, which answers REPLICA_NOT_AVAILABLE (as does one
     * the image does not have); a hosted partition outside that directory gets a future log there and starts moving.
     * Errors: INVALID_TOPIC_EXCEPTION when the future log's name would exceed 255 characters, LOG_DIR_NOT_FOUND for
     * a path that is not a log directory, KAFKA_STORAGE_ERROR when the disk fails.
     */
    Map<TopicPartition, Errors> alter(Map<TopicPartition, String> partitionDirs) {
        Map<TopicPartition, Errors> results = new HashMap<>();
        synchronized (lock) {
            partitionDirs.forEach((tp, dir) -> results.put(tp, alter(tp, dir)));
        }
        return results;
    }

    private Errors alter(TopicPartition tp, String dir) {
        if (LogDirNames.futureDirNameLength(tp.topic(), tp.partition()) > LogDirNames.MAX_NAME_LENGTH) {
            LOGGER.warn("Unable to alter log dirs for {}: the topic name is too long", tp);
            return Errors.INVALID_TOPIC_EXCEPTION;
        }
        LogManager target = logManagers.stream()
            .filter(m -> m.logDir().toAbsolutePath().toString().equals(dir)).findFirst().orElse(null);
        if (target == null) {
            LOGGER.warn("Unable to alter log dirs for {}: failed to find log directory {}", tp, dir);
            return Errors.LOG_DIR_NOT_FOUND;
        }
        try {
            Partition p = partitions.apply(tp).orElse(null);
            if (p != null && p.futureLog().filter(f -> !managerOf(f).equals(target)).isPresent()) {
                cancel(p);
            }
            if (inImage.test(tp)) {
                // Only partitions of the metadata image: what requests can make this map hold stays bounded.
                preferredLogDirs.put(tp, target);
            }
            if (p == null || p.isRemoved()) {
                LOGGER.warn("Unable to alter log dirs for {}: this broker hosts no replica of it yet", tp);
                return Errors.REPLICA_NOT_AVAILABLE;
            }
            if (!managerOf(p.log()).equals(target) && p.futureLog().isEmpty()) {
                PartitionLog current = p.log();
                PartitionLog future = target.createFutureLog(tp.topic(), tp.partition(), current.config(),
                    p.topicId(), current.logStartOffset());
                p.setFutureLog(future);
                movers.add(tp);
                LOGGER.info("Moving {} from {} to {}", tp, current.dir().getParent(), target.logDir());
            }
            return Errors.NONE;
        } catch (RuntimeException e) {
            LOGGER.warn("Unable to alter log dirs for {}", tp, e);
            return Errors.forException(e);
        }
    }

    /** Stops the partition's move and deletes its future log. */
    private void cancel(Partition p) {
        movers.remove(p.topicPartition());
        PartitionLog future = p.removeFutureLog();
        if (future != null) {
            managerOf(future).deleteFutureLog(p.topic(), p.partitionIndex());
            LOGGER.info("Cancelled the move of {} to {}", p.topicPartition(), future.dir().getParent());
        }
    }

    /** A newly hosted partition whose future log survived a restart goes on moving into it. */
    void resume(Partition p) {
        synchronized (lock) {
            LogManager current = managerOf(p.log());
            for (LogManager manager : logManagers) {
                PartitionLog future = manager.getFutureLog(p.topic(), p.partitionIndex()).orElse(null);
                if (future == null || p.futureLog().isPresent()) {
                    continue;
                }
                if (manager.equals(current) || !future.topicId().map(p.topicId()::equals).orElse(true)) {
                    manager.deleteFutureLog(p.topic(), p.partitionIndex());
                    continue;
                }
                p.setFutureLog(future);
                movers.add(p.topicPartition());
                LOGGER.info("Resuming the move of {} into {} at offset {}", p.topicPartition(), manager.logDir(),
                    future.logEndOffset());
            }
        }
    }

    /**
     * For a partition that has no log in any directory: its future log of topic {@code topicId}, if one exists,
     * becomes its log. A move stopped between retiring the old log and renaming the future one left it, complete.
     */
    Optional<PartitionLog> completeCutShortSwap(TopicPartition tp, Uuid topicId, LogConfig config) {
        for (LogManager manager : logManagers) {
            Optional<PartitionLog> future = manager.getFutureLog(tp.topic(), tp.partition());
            if (future.isPresent() && future.get().topicId().map(topicId::equals).orElse(true)) {
                LOGGER.info("Completing the move of {} into {}: its future log becomes its log", tp,
                    manager.logDir());
                PartitionLog promoted = manager.promoteFutureLog(tp.topic(), tp.partition(), config);
                promoted.updateConfig(config);
                return Optional.of(promoted);
            }
        }
        return Optional.empty();
    }

    /** The directory an AlterReplicaLogDirs named for a partition now being created, if any (taken once). */
    LogManager takePreferredLogDir(TopicPartition tp) {
        return preferredLogDirs.remove(tp);
    }

    /** Runs {@code removal} (the replica manager removing a partition) while no move can start. */
    void whileNoMoveStarts(Runnable removal) {
        synchronized (lock) {
            removal.run();
        }
    }

    /** Drops what a move of {@code tp} holds (the thread's state, a preferred directory); call before removing it. */
    void forget(TopicPartition tp) {
        preferredLogDirs.remove(tp);
        movers.remove(tp);
    }

    /** The log manager whose directory holds {@code log} (a current or a future log). */
    private LogManager managerOf(PartitionLog log) {
        Path parent = log.dir().getParent();
        for (LogManager manager : logManagers) {
            if (manager.logDir().equals(parent)) {
                return manager;
            }
        }
        throw new IllegalStateException(log.dir() + " is in no log directory");
    }

    /** Stops the mover threads, each after its current step. */
    @Override
    public void close() {
        movers.close();
    }

    /** The log directories' half of a swap: the old copy retired first, then the future log renamed into place. */
    private final class LogDirSwapper implements ReplicaAlterLogDirsManager.Swapper {

        @Override
        public PartitionLog swap(Partition partition, PartitionLog current, PartitionLog future) {
            managerOf(current).deleteLog(partition.topic(), partition.partitionIndex());
            return managerOf(future).promoteFutureLog(partition.topic(), partition.partitionIndex(),
                current.config());
        }

        @Override
        public void afterSwap(Partition partition) {
            checkpointHighWatermarks.run();
        }
    }
}
