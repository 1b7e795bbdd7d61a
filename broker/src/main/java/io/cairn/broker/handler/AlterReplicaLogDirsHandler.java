package io.cairn.broker.handler;

import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterReplicaLogDirsRequestData;
import io.cairn.wire.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDir;
import io.cairn.wire.message.AlterReplicaLogDirsRequestData.AlterReplicaLogDirTopic;
import io.cairn.wire.message.AlterReplicaLogDirsResponseData;
import io.cairn.wire.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirPartitionResult;
import io.cairn.wire.message.AlterReplicaLogDirsResponseData.AlterReplicaLogDirTopicResult;
import io.cairn.wire.message.ApiKey;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * AlterReplicaLogDirs v1-2 (Kafka 4.1.1's range), as Kafka's {@code handleAlterReplicaLogDirsRequest}: the request's
 * (directory, partition) pairs, a partition named twice taking its last directory, go to
 * {@link ReplicaManager#alterReplicaLogDirs}, which moves each hosted replica into that log directory (a future log
 * copied and swapped in on the replica manager's own threads) and answers per partition: NONE, LOG_DIR_NOT_FOUND,
 * REPLICA_NOT_AVAILABLE (not hosted here yet; the directory is kept for when it is), INVALID_TOPIC_EXCEPTION (a name
 * too long for a future log's directory) or KAFKA_STORAGE_ERROR. The answer comes once the moves started, not when
 * they finish: clients watch DescribeLogDirs for that. Results are grouped by topic.
 *
 * <p>Stateless and thread-safe; runs on a request-handler thread (starting a move creates a log directory).
 */
public final class AlterReplicaLogDirsHandler
        implements ApiHandler<AlterReplicaLogDirsRequestData, AlterReplicaLogDirsResponseData> {

    private final ReplicaManager replicas;

    public AlterReplicaLogDirsHandler(ReplicaManager replicas) {
        this.replicas = replicas;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ALTER_REPLICA_LOG_DIRS;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 2;
    }

    @Override
    public CompletionStage<AlterReplicaLogDirsResponseData> handle(RequestContext ctx,
                                                                  AlterReplicaLogDirsRequestData request) {
        Map<TopicPartition, String> partitionDirs = new LinkedHashMap<>();
        for (AlterReplicaLogDir dir : request.dirs()) {
            for (AlterReplicaLogDirTopic topic : dir.topics()) {
                for (int partition : topic.partitions()) {
                    partitionDirs.put(new TopicPartition(topic.name(), partition), dir.path());
                }
            }
        }
        Map<TopicPartition, Errors> results = replicas.alterReplicaLogDirs(partitionDirs);
        Map<String, AlterReplicaLogDirTopicResult> topics = new TreeMap<>();
        results.forEach((tp, error) -> topics.computeIfAbsent(tp.topic(),
                name -> new AlterReplicaLogDirTopicResult().setTopicName(name)).partitions()
                .add(new AlterReplicaLogDirPartitionResult().setPartitionIndex(tp.partition())
                        .setErrorCode(error.code())));
        return CompletableFuture.completedFuture(new AlterReplicaLogDirsResponseData().setThrottleTimeMs(0)
                .setResults(List.copyOf(topics.values())));
    }

    @Override
    public void countErrors(AlterReplicaLogDirsResponseData response, ErrorCounter counter) {
        List<AlterReplicaLogDirTopicResult> topics = response.results();
        for (int t = 0; t < topics.size(); t++) {
            List<AlterReplicaLogDirPartitionResult> partitions = topics.get(t).partitions();
            for (int p = 0; p < partitions.size(); p++) {
                counter.count(partitions.get(p).errorCode());
            }
        }
    }

    /** Kafka's {@code AlterReplicaLogDirsRequest.getErrorResponse}: every partition of the request gets the error. */
    @Override
    public AlterReplicaLogDirsResponseData errorResponse(RequestContext ctx, AlterReplicaLogDirsRequestData request,
                                                         Errors error) {
        Map<String, AlterReplicaLogDirTopicResult> topics = new TreeMap<>();
        for (AlterReplicaLogDir dir : request.dirs()) {
            for (AlterReplicaLogDirTopic topic : dir.topics()) {
                AlterReplicaLogDirTopicResult result = topics.computeIfAbsent(topic.name(),
                        name -> new AlterReplicaLogDirTopicResult().setTopicName(name));
                for (int partition : topic.partitions()) {
                    result.partitions().add(new AlterReplicaLogDirPartitionResult().setPartitionIndex(partition)
                            .setErrorCode(error.code()));
                }
            }
        }
        return new AlterReplicaLogDirsResponseData().setResults(List.copyOf(topics.values()));
    }
}
