package io.cairn.broker.fetch;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.FetchableTopicResponse;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Builds Fetch response bodies (Kafka's {@code FetchResponse.of} and {@code partitionResponse}) and releases the
 * records they hold. Stateless.
 */
public final class FetchResponses {

    /** Kafka's {@code INVALID_HIGH_WATERMARK}, {@code INVALID_LAST_STABLE_OFFSET}, {@code INVALID_LOG_START_OFFSET}. */
    static final long INVALID_OFFSET = -1L;

    private FetchResponses() {
    }

    /** A partition that failed with {@code error}: offsets unknown (-1) and no records. */
    static PartitionData partitionError(int partition, Errors error) {
        return new PartitionData().setPartitionIndex(partition).setErrorCode(error.code())
            .setHighWatermark(INVALID_OFFSET).setLastStableOffset(INVALID_OFFSET).setLogStartOffset(INVALID_OFFSET)
            .setAbortedTransactions(null).setRecords(Unpooled.EMPTY_BUFFER);
    }

    /**
     * The response for {@code partitions} in their order; consecutive partitions of one topic share a topic entry,
     * as Kafka groups them (it keeps the order rather than grouping all partitions of a topic).
     */
    static FetchResponseData of(Errors error, int sessionId, Map<TopicIdPartition, PartitionData> partitions,
                                List<FetchResponseData.NodeEndpoint> nodeEndpoints) {
        List<FetchableTopicResponse> topics = new ArrayList<>();
        FetchableTopicResponse last = null;
        TopicIdPartition lastTp = null;
        for (Map.Entry<TopicIdPartition, PartitionData> e : partitions.entrySet()) {
            TopicIdPartition tp = e.getKey();
            PartitionData data = e.getValue().setPartitionIndex(tp.partition());
            if (last == null || !Objects.equals(lastTp.topic(), tp.topic())
                    || !lastTp.topicId().equals(tp.topicId())) {
                last = new FetchableTopicResponse().setTopic(tp.topic() == null ? "" : tp.topic())
                    .setTopicId(tp.topicId()).setPartitions(new ArrayList<>());
                topics.add(last);
                lastTp = tp;
            }
            last.partitions().add(data);
        }
        return new FetchResponseData().setErrorCode(error.code()).setSessionId(sessionId).setResponses(topics)
            .setNodeEndpoints(new ArrayList<>(nodeEndpoints));
    }

    /** Releases the records of every partition of {@code response} (each exactly once). */
    public static void release(FetchResponseData response) {
        for (FetchableTopicResponse topic : response.responses()) {
            for (PartitionData partition : topic.partitions()) {
                release(partition);
            }
        }
    }

    /** Releases the records of one partition and clears the field, so a second call releases nothing. */
    static void release(PartitionData partition) {
        ByteBuf records = partition.records();
        if (records != null) {
            partition.setRecords(null);
            ReferenceCountUtil.release(records);
        }
    }
}
