package io.cairn.broker.handler;

import io.cairn.broker.produce.DeleteRecordsService;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DeleteRecordsRequestData;
import io.cairn.wire.message.DeleteRecordsRequestData.DeleteRecordsPartition;
import io.cairn.wire.message.DeleteRecordsRequestData.DeleteRecordsTopic;
import io.cairn.wire.message.DeleteRecordsResponseData;
import io.cairn.wire.message.DeleteRecordsResponseData.DeleteRecordsPartitionResult;
import io.cairn.wire.message.DeleteRecordsResponseData.DeleteRecordsTopicResult;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * DeleteRecords v0-2 (Kafka 4.1.1's range), as Kafka's {@code handleDeleteRecordsRequest}: DELETE on each topic,
 * asked of the authorizer, then the {@link DeleteRecordsService} moves each log start offset and answers once the
 * low watermarks reached them.
 *
 * <p>Stateless and thread-safe; runs on a request-handler thread (moving the log start offset writes the log's
 * offsets checkpoint).
 */
public final class DeleteRecordsHandler implements ApiHandler<DeleteRecordsRequestData, DeleteRecordsResponseData> {

    private final DeleteRecordsService service;

    public DeleteRecordsHandler(DeleteRecordsService service) {
        this.service = service;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DELETE_RECORDS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 2;
    }

    @Override
    public CompletionStage<DeleteRecordsResponseData> handle(RequestContext ctx, DeleteRecordsRequestData request) {
        // Kafka: DELETE on the topic, asked once per topic
        Map<String, Boolean> deletable = new HashMap<>();
        return service.deleteRecords(request, topic -> deletable.computeIfAbsent(topic,
                t -> ctx.authorize(AclOperation.DELETE, AclResourceType.TOPIC, t)));
    }

    /** Kafka's {@code DeleteRecordsResponse.errorCounts}: one code per partition. */
    @Override
    public void countErrors(DeleteRecordsResponseData response, ErrorCounter counter) {
        List<DeleteRecordsTopicResult> topics = response.topics();
        for (int t = 0; t < topics.size(); t++) {
            List<DeleteRecordsPartitionResult> partitions = topics.get(t).partitions();
            for (int p = 0; p < partitions.size(); p++) {
                counter.count(partitions.get(p).errorCode());
            }
        }
    }

    /** Kafka's {@code DeleteRecordsRequest.getErrorResponse}: every partition gets the error and low watermark -1. */
    @Override
    public DeleteRecordsResponseData errorResponse(RequestContext ctx, DeleteRecordsRequestData request,
                                                   Errors error) {
        DeleteRecordsResponseData response = new DeleteRecordsResponseData();
        for (DeleteRecordsTopic topic : request.topics()) {
            DeleteRecordsTopicResult result = new DeleteRecordsTopicResult().setName(topic.name());
            for (DeleteRecordsPartition p : topic.partitions()) {
                result.partitions().add(new DeleteRecordsPartitionResult().setPartitionIndex(p.partitionIndex())
                        .setLowWatermark(DeleteRecordsService.INVALID_LOW_WATERMARK).setErrorCode(error.code()));
            }
            response.topics().add(result);
        }
        return response;
    }
}
