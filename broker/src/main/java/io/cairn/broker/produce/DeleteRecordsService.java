package io.cairn.broker.produce;

import io.cairn.broker.InternalTopics;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DeleteRecordsRequestData;
import io.cairn.wire.message.DeleteRecordsRequestData.DeleteRecordsPartition;
import io.cairn.wire.message.DeleteRecordsRequestData.DeleteRecordsTopic;
import io.cairn.wire.message.DeleteRecordsResponseData;
import io.cairn.wire.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import io.cairn.wire.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Kafka's {@code ReplicaManager.deleteRecords}: per partition the leader moves its log start offset to the requested
 * offset (-1: the high watermark; see {@link Partition#deleteRecordsOnLeader}), then the answer waits in the
 * {@link PartitionPurgatory} until the low watermark (the smallest log start offset of the live replicas, which
 * followers report in their fetches) reached it, at most {@code timeout_ms} (then REQUEST_TIMED_OUT). A topic the
 * caller may not delete from is TOPIC_AUTHORIZATION_FAILED, a partition the metadata does not have
 * UNKNOWN_TOPIC_OR_PARTITION, one this broker does not lead NOT_LEADER_OR_FOLLOWER, an internal topic
 * INVALID_TOPIC_EXCEPTION, a topic without {@code delete} in its cleanup policy POLICY_VIOLATION, an offset above the
 * high watermark (or below -1) OFFSET_OUT_OF_RANGE, each with low watermark -1. A partition named twice is answered
 * once, for its last offset, as Kafka's map of the request does.
 *
 * <p>Stateless and thread-safe; call it on a request-handler thread (moving the log start offset writes the log's
 * offsets checkpoint).
 */
public final class DeleteRecordsService {

    /** Kafka's {@code DeleteRecordsResponse.INVALID_LOW_WATERMARK}. */
    public static final long INVALID_LOW_WATERMARK = -1L;
    private static final Logger LOGGER = LogManager.getLogger(DeleteRecordsService.class);

    private final ReplicaManager replicas;
    private final MetadataNode metadata;
    private final PartitionPurgatory purgatory;

    public DeleteRecordsService(ReplicaManager replicas, MetadataNode metadata, PartitionPurgatory purgatory) {
        this.replicas = replicas;
        this.metadata = metadata;
        this.purgatory = purgatory;
    }

    /** Serves {@code request}; {@code deletable} says whether the caller may delete records of a topic. */
    public CompletableFuture<DeleteRecordsResponseData> deleteRecords(DeleteRecordsRequestData request,
                                                                      Predicate<String> deletable) {
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        for (DeleteRecordsTopic topic : request.topics()) {
            for (DeleteRecordsPartition p : topic.partitions()) {
                TopicPartition tp = new TopicPartition(topic.name(), p.partitionIndex());
                offsets.remove(tp);
                offsets.put(tp, p.offset());
            }
        }
        MetadataImage image = metadata.currentImage();
        List<DelayedDeleteRecords.Status> statuses = new ArrayList<>(offsets.size());
        // Kafka: DELETE on the topic first (TOPIC_AUTHORIZATION_FAILED), then whether the partition exists.
        offsets.forEach((tp, offset) -> statuses.add(!deletable.test(tp.topic())
                ? DelayedDeleteRecords.Status.failed(tp, Errors.TOPIC_AUTHORIZATION_FAILED)
                : image.partition(tp).isPresent()
                ? deleteLocally(tp, offset)
                : DelayedDeleteRecords.Status.failed(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION)));
        return DelayedDeleteRecords.await(statuses, request.timeoutMs(), purgatory, () -> response(statuses));
    }

    /** Kafka's {@code deleteRecordsOnLocalLog} for one partition. */
    private DelayedDeleteRecords.Status deleteLocally(TopicPartition tp, long offset) {
        if (InternalTopics.isInternal(tp.topic())) {
            return DelayedDeleteRecords.Status.failed(tp, Errors.INVALID_TOPIC_EXCEPTION);
        }
        try {
            Partition partition = replicas.leaderPartition(tp);
            Partition.DeleteRecordsResult result = partition.deleteRecordsOnLeader(offset);
            return DelayedDeleteRecords.Status.deleted(partition, result.requestedOffset(), result.lowWatermark());
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                LOGGER.error("Error processing delete records operation on partition {}", tp, e);
            }
            return DelayedDeleteRecords.Status.failed(tp, error);
        }
    }

    private static DeleteRecordsResponseData response(List<DelayedDeleteRecords.Status> statuses) {
        Map<String, DeleteRecordsTopicResult> topics = new LinkedHashMap<>();
        for (DelayedDeleteRecords.Status s : statuses) {
            topics.computeIfAbsent(s.topicPartition().topic(), name -> new DeleteRecordsTopicResult().setName(name))
                    .partitions().add(new DeleteRecordsPartitionResult()
                            .setPartitionIndex(s.topicPartition().partition())
                            .setLowWatermark(s.lowWatermark()).setErrorCode(s.error().code()));
        }
        return new DeleteRecordsResponseData().setThrottleTimeMs(0).setTopics(new ArrayList<>(topics.values()));
    }
}
