package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.producer.ActiveProducer;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.controller.TopicNames;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeProducersRequestData;
import io.cairn.wire.message.DescribeProducersRequestData.TopicRequest;
import io.cairn.wire.message.DescribeProducersResponseData;
import io.cairn.wire.message.DescribeProducersResponseData.PartitionResponse;
import io.cairn.wire.message.DescribeProducersResponseData.ProducerState;
import io.cairn.wire.message.DescribeProducersResponseData.TopicResponse;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * DescribeProducers v0 (KIP-664; the only version), as Kafka's {@code handleDescribeProducersRequest}: per partition
 * the producer state of this broker's replica (producer id, epoch, last sequence and timestamp, coordinator epoch,
 * first offset of the open transaction). An illegal topic name is INVALID_TOPIC_EXCEPTION with Kafka's message, a
 * topic the metadata does not have UNKNOWN_TOPIC_OR_PARTITION; a partition this broker does not host is
 * NOT_LEADER_OR_FOLLOWER when the metadata has it, else UNKNOWN_TOPIC_OR_PARTITION. Like Kafka, any replica answers
 * (the admin client asks the leader).
 *
 * <p>Stateless and thread-safe; runs on a request-handler thread (the producer state is read under the log's lock).
 */
public final class DescribeProducersHandler
        implements ApiHandler<DescribeProducersRequestData, DescribeProducersResponseData> {

    private final ReplicaManager replicas;
    private final MetadataNode metadata;

    public DescribeProducersHandler(ReplicaManager replicas, MetadataNode metadata) {
        this.replicas = replicas;
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_PRODUCERS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 0;
    }

    @Override
    public CompletionStage<DescribeProducersResponseData> handle(RequestContext ctx,
                                                                DescribeProducersRequestData request) {
        MetadataImage image = metadata.currentImage();
        DescribeProducersResponseData response = new DescribeProducersResponseData();
        for (TopicRequest topic : request.topics()) {
            TopicResponse topicResponse = new TopicResponse().setName(topic.name());
            Optional<String> illegal = TopicNames.validateForRequest(topic.name());
            // Kafka: a valid name, then READ on the topic, then whether it exists.
            Errors topicError = illegal.isPresent() ? Errors.INVALID_TOPIC_EXCEPTION
                    : !ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic.name())
                    ? Errors.TOPIC_AUTHORIZATION_FAILED
                    : image.topic(topic.name()).isEmpty() ? Errors.UNKNOWN_TOPIC_OR_PARTITION : Errors.NONE;
            for (int index : topic.partitionIndexes()) {
                PartitionResponse partition = topicError == Errors.NONE
                        ? describe(image, new TopicPartition(topic.name(), index))
                        : new PartitionResponse().setPartitionIndex(index).setErrorCode(topicError.code())
                                .setErrorMessage(illegal.orElse(topicError.message()));
                topicResponse.partitions().add(partition);
            }
            response.topics().add(topicResponse);
        }
        return completedFuture(response);
    }

    private PartitionResponse describe(MetadataImage image, TopicPartition tp) {
        PartitionResponse response = new PartitionResponse().setPartitionIndex(tp.partition());
        Optional<Partition> partition = replicas.partition(tp);
        if (partition.isEmpty()) {
            Errors error = image.partition(tp).isPresent() ? Errors.NOT_LEADER_OR_FOLLOWER
                    : Errors.UNKNOWN_TOPIC_OR_PARTITION;
            return response.setErrorCode(error.code());
        }
        List<ActiveProducer> producers = partition.get().log().activeProducers();
        for (ActiveProducer p : producers) {
            response.activeProducers().add(new ProducerState().setProducerId(p.producerId())
                    .setProducerEpoch(p.producerEpoch()).setLastSequence(p.lastSequence())
                    .setLastTimestamp(p.lastTimestamp()).setCoordinatorEpoch(p.coordinatorEpoch())
                    .setCurrentTxnStartOffset(p.currentTxnStartOffset()));
        }
        return response;
    }

    /** Kafka's {@code DescribeProducersResponse.errorCounts}: one code per partition. */
    @Override
    public void countErrors(DescribeProducersResponseData response, ErrorCounter counter) {
        List<TopicResponse> topics = response.topics();
        for (int t = 0; t < topics.size(); t++) {
            List<PartitionResponse> partitions = topics.get(t).partitions();
            for (int p = 0; p < partitions.size(); p++) {
                counter.count(partitions.get(p).errorCode());
            }
        }
    }

    /** Kafka's {@code DescribeProducersRequest.getErrorResponse}: every partition gets the error. */
    @Override
    public DescribeProducersResponseData errorResponse(RequestContext ctx, DescribeProducersRequestData request,
                                                       Errors error) {
        DescribeProducersResponseData response = new DescribeProducersResponseData();
        for (TopicRequest topic : request.topics()) {
            TopicResponse topicResponse = new TopicResponse().setName(topic.name());
            for (int index : topic.partitionIndexes()) {
                topicResponse.partitions().add(new PartitionResponse().setPartitionIndex(index)
                        .setErrorCode(error.code()).setErrorMessage(error.message()));
            }
            response.topics().add(topicResponse);
        }
        return response;
    }
}
