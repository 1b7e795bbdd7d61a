package io.cairn.broker.handler;

import io.cairn.isr.ReplicaManager;
import io.cairn.log.LogManager;
import io.cairn.log.PartitionLog;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeLogDirsRequestData;
import io.cairn.wire.message.DescribeLogDirsRequestData.DescribableLogDirTopic;
import io.cairn.wire.message.DescribeLogDirsResponseData;
import io.cairn.wire.message.DescribeLogDirsResponseData.DescribeLogDirsPartition;
import io.cairn.wire.message.DescribeLogDirsResponseData.DescribeLogDirsResult;
import io.cairn.wire.message.DescribeLogDirsResponseData.DescribeLogDirsTopic;
import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.logging.log4j.Logger;

/**
 * DescribeLogDirs v1-4 (Kafka 4.1.1's range), as Kafka's {@code handleDescribeLogDirsRequest} and
 * {@code ReplicaManager.describeLogDirs}: one result per {@code log.dirs} entry with its absolute path, and for the
 * partitions asked for (null topics: every log) that have a log in it, the log's size in bytes, its offset lag (the
 * high watermark minus the log end offset, at least 0) and, from v4, the volume's total and usable bytes
 * (Long.MAX_VALUE when the file system reports a negative size, as Kafka). A directory that cannot be read is
 * KAFKA_STORAGE_ERROR. Topics without a matching partition in a directory are left out. A replica moving into a
 * directory (AlterReplicaLogDirs) is listed there too, as a future replica ({@code is_future_key} true) whose lag is
 * how far its log end offset is behind the current log's (-1 when the partition is not hosted any more), as Kafka's
 * {@code getLogEndOffsetLag}.
 *
 * <p>Stateless and thread-safe; runs on a request-handler thread (it asks the file system for the volumes' space).
 */
public final class DescribeLogDirsHandler
        implements ApiHandler<DescribeLogDirsRequestData, DescribeLogDirsResponseData> {

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(DescribeLogDirsHandler.class);

    /** Kafka's {@code DescribeLogDirsResponse.INVALID_OFFSET_LAG}: the lag is not known. */
    static final long INVALID_OFFSET_LAG = -1L;

    private final ReplicaManager replicas;

    public DescribeLogDirsHandler(ReplicaManager replicas) {
        this.replicas = replicas;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_LOG_DIRS;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 4;
    }

    @Override
    public CompletionStage<DescribeLogDirsResponseData> handle(RequestContext ctx,
                                                              DescribeLogDirsRequestData request) {
        Set<TopicPartition> wanted = null;
        if (request.topics() != null) {
            wanted = new HashSet<>();
            for (DescribableLogDirTopic topic : request.topics()) {
                for (int index : topic.partitions()) {
                    wanted.add(new TopicPartition(topic.topic(), index));
                }
            }
        }
        DescribeLogDirsResponseData response = new DescribeLogDirsResponseData().setThrottleTimeMs(0)
                .setErrorCode(Errors.NONE.code());
        for (LogManager manager : replicas.logManagers()) {
            response.results().add(describe(replicas, manager, wanted));
        }
        return CompletableFuture.completedFuture(response);
    }

    private static DescribeLogDirsResult describe(ReplicaManager replicas, LogManager manager,
                                                  Set<TopicPartition> wanted) {
        String path = manager.logDir().toAbsolutePath().toString();
        DescribeLogDirsResult result = new DescribeLogDirsResult().setLogDir(path);
        try {
            FileStore store = Files.getFileStore(manager.logDir());
            result.setTotalBytes(positive(store.getTotalSpace())).setUsableBytes(positive(store.getUsableSpace()));
        } catch (IOException e) {
            LOGGER.warn("Unable to describe replica dirs for {}", path, e);
            return result.setErrorCode(Errors.KAFKA_STORAGE_ERROR.code());
        }
        Map<String, DescribeLogDirsTopic> topics = new TreeMap<>();
        for (PartitionLog log : manager.allLogs()) {
            add(topics, wanted, log, Math.max(0L, log.highWatermark() - log.logEndOffset()), false);
        }
        for (PartitionLog future : manager.allFutureLogs()) {
            long lag = replicas.partition(new TopicPartition(future.topic(), future.partition()))
                    .map(p -> p.logEndOffset() - future.logEndOffset()).orElse(INVALID_OFFSET_LAG);
            add(topics, wanted, future, lag, true);
        }
        result.setTopics(new ArrayList<>(topics.values()));
        return result.setErrorCode(Errors.NONE.code());
    }

    private static void add(Map<String, DescribeLogDirsTopic> topics, Set<TopicPartition> wanted, PartitionLog log,
                            long offsetLag, boolean future) {
        if (wanted != null && !wanted.contains(new TopicPartition(log.topic(), log.partition()))) {
            return;
        }
        topics.computeIfAbsent(log.topic(), name -> new DescribeLogDirsTopic().setName(name)).partitions()
                .add(new DescribeLogDirsPartition().setPartitionIndex(log.partition()).setPartitionSize(log.size())
                        .setOffsetLag(offsetLag).setIsFutureKey(future));
    }

    /** Kafka's {@code adjustForLargeFileSystems}: a file system too large for a long reports a negative size. */
    private static long positive(long bytes) {
        return bytes < 0 ? Long.MAX_VALUE : bytes;
    }

    /** Kafka's {@code DescribeLogDirsRequest.getErrorResponse}: the error at the top (v3+) and no results. */
    @Override
    public DescribeLogDirsResponseData errorResponse(RequestContext ctx, DescribeLogDirsRequestData request,
                                                     Errors error) {
        return new DescribeLogDirsResponseData().setErrorCode(error.code());
    }
}
