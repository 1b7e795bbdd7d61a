package io.cairn.broker.handler;

import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersRequestData.WritableTxnMarker;
import io.cairn.wire.message.WriteTxnMarkersRequestData.WritableTxnMarkerTopic;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerTopicResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * WriteTxnMarkers v1 (the only version Kafka 4.1.1 has), the inter-broker request a transaction coordinator sends to
 * the leaders of a transaction's partitions, as Kafka's {@code handleWriteTxnMarkersRequest}: for every marker and
 * partition, a partition without a log here is UNKNOWN_TOPIC_OR_PARTITION; one of {@code __consumer_offsets} goes
 * to the group coordinator ({@link OffsetsTopicMarkers}, whose COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS
 * and NOT_COORDINATOR become NOT_LEADER_OR_FOLLOWER, which the transaction coordinator retries); any other gets a
 * control batch appended as leader with acks=all ({@link MarkerAppender}). The response, per producer id, carries
 * every partition's error once all are known.
 *
 * <p>Stateless and thread-safe; runs on a request-handler thread (the appends write to logs).
 */
public final class WriteTxnMarkersHandler
        implements ApiHandler<WriteTxnMarkersRequestData, WriteTxnMarkersResponseData> {

    private final MarkerAppender appender;
    private final OffsetsTopicMarkers offsetsTopic;

    public WriteTxnMarkersHandler(MarkerAppender appender, OffsetsTopicMarkers offsetsTopic) {
        this.appender = appender;
        this.offsetsTopic = offsetsTopic;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.WRITE_TXN_MARKERS;
    }

    @Override
    public short minVersion() {
        return 1;
    }

    @Override
    public short maxVersion() {
        return 1;
    }

    @Override
    public CompletionStage<WriteTxnMarkersResponseData> handle(RequestContext ctx,
                                                              WriteTxnMarkersRequestData request) {
        // An inter-broker API: ALTER or CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED throughout.
        if (!ctx.authorizeCluster(AclOperation.ALTER) && !ctx.authorizeCluster(AclOperation.CLUSTER_ACTION)) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.CLUSTER_AUTHORIZATION_FAILED));
        }
        WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData();
        // Kafka's response is a map by producer id: two markers of one producer share an entry.
        Map<Long, ProducerResult> byProducer = new LinkedHashMap<>();
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (WritableTxnMarker marker : request.markers()) {
            ProducerResult producer = byProducer.computeIfAbsent(marker.producerId(), id -> {
                WritableTxnMarkerResult created = new WritableTxnMarkerResult().setProducerId(id);
                response.markers().add(created);
                return new ProducerResult(created, new LinkedHashMap<>());
            });
            for (WritableTxnMarkerTopic topic : marker.topics()) {
                WritableTxnMarkerTopicResult topicResult = producer.topics().computeIfAbsent(topic.name(), name -> {
                    WritableTxnMarkerTopicResult created = new WritableTxnMarkerTopicResult().setName(name);
                    producer.result().topics().add(created);
                    return created;
                });
                for (int index : topic.partitionIndexes()) {
                    WritableTxnMarkerPartitionResult partition = partitionResult(topicResult, index);
                    writes.add(write(new TopicPartition(topic.name(), index), marker)
                            .thenAccept(error -> partition.setErrorCode(error.code())));
                }
            }
        }
        return CompletableFuture.allOf(writes.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> response);
    }

    /** One producer id's entry of the response and its topics by name. */
    private record ProducerResult(WritableTxnMarkerResult result, Map<String, WritableTxnMarkerTopicResult> topics) {
    }

    /** The entry of {@code index} in {@code topic} (a partition named twice answers once, as Kafka's map does). */
    private static WritableTxnMarkerPartitionResult partitionResult(WritableTxnMarkerTopicResult topic, int index) {
        for (WritableTxnMarkerPartitionResult p : topic.partitions()) {
            if (p.partitionIndex() == index) {
                return p;
            }
        }
        WritableTxnMarkerPartitionResult created = new WritableTxnMarkerPartitionResult().setPartitionIndex(index);
        topic.partitions().add(created);
        return created;
    }

    private CompletableFuture<Errors> write(TopicPartition tp, WritableTxnMarker marker) {
        if (!appender.hosts(tp)) {
            return CompletableFuture.completedFuture(Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        if (ClusterView.GROUP_METADATA_TOPIC.equals(tp.topic())) {
            CompletableFuture<Void> written;
            try {
                written = offsetsTopic.completeTransaction(tp.partition(), marker.producerId(),
                        marker.producerEpoch(), marker.coordinatorEpoch(), marker.transactionResult());
            } catch (RuntimeException e) {
                written = CompletableFuture.failedFuture(e);
            }
            return written.handle((ignored, failure) -> failure == null ? Errors.NONE : groupError(failure));
        }
        return appender.append(tp, marker.producerId(), marker.producerEpoch(), marker.coordinatorEpoch(),
                marker.transactionResult());
    }

    private static Errors groupError(Throwable failure) {
        Errors error = Errors.forException(failure);
        if (error == Errors.COORDINATOR_NOT_AVAILABLE || error == Errors.COORDINATOR_LOAD_IN_PROGRESS
                || error == Errors.NOT_COORDINATOR) {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        return error;
    }

    /** Kafka's {@code WriteTxnMarkersResponse.errorCounts}: one code per partition. */
    @Override
    public void countErrors(WriteTxnMarkersResponseData response, ErrorCounter counter) {
        for (int m = 0; m < response.markers().size(); m++) {
            List<WritableTxnMarkerTopicResult> topics = response.markers().get(m).topics();
            for (int t = 0; t < topics.size(); t++) {
                List<WritableTxnMarkerPartitionResult> partitions = topics.get(t).partitions();
                for (int p = 0; p < partitions.size(); p++) {
                    counter.count(partitions.get(p).errorCode());
                }
            }
        }
    }

    /** Kafka's {@code WriteTxnMarkersRequest.getErrorResponse}: every partition of every marker gets the error. */
    @Override
    public WriteTxnMarkersResponseData errorResponse(RequestContext ctx, WriteTxnMarkersRequestData request,
                                                     Errors error) {
        WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData();
        for (WritableTxnMarker marker : request.markers()) {
            WritableTxnMarkerResult result = new WritableTxnMarkerResult().setProducerId(marker.producerId());
            for (WritableTxnMarkerTopic topic : marker.topics()) {
                WritableTxnMarkerTopicResult topicResult = new WritableTxnMarkerTopicResult().setName(topic.name());
                for (int index : topic.partitionIndexes()) {
                    topicResult.partitions().add(new WritableTxnMarkerPartitionResult().setPartitionIndex(index)
                            .setErrorCode(error.code()));
                }
                result.topics().add(topicResult);
            }
            response.markers().add(result);
        }
        return response;
    }
}
