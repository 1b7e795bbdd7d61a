package io.cairn.broker.fetch;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.function.Function;

/**
 * One partition of a fetch session (Kafka's {@code CachedPartition}): the last request parameters, so an incremental
 * fetch may omit the partition, and the last high watermark and log start offset sent, so an incremental response
 * may omit the partition while nothing changed.
 *
 * <p>Not thread-safe: guarded by its {@link FetchSession}'s monitor.
 */
final class CachedPartition {

    private final Uuid topicId;
    private final int partition;
    private String topic;
    private PartitionFetch fetch;
    private long highWatermark = -1L;
    private long localLogStartOffset = -1L;

    CachedPartition(TopicIdPartition tp, PartitionFetch fetch) {
        this.topicId = tp.topicId();
        this.topic = tp.topic();
        this.partition = tp.partition();
        this.fetch = fetch;
    }

    /** A partition of a new session, with the response that created it. */
    CachedPartition(TopicIdPartition tp, PartitionFetch fetch, FetchResponseData.PartitionData sent) {
        this(tp, fetch);
        this.highWatermark = sent.highWatermark();
        this.localLogStartOffset = sent.logStartOffset();
    }

    TopicIdPartition topicIdPartition() {
        return new TopicIdPartition(topicId, topic, partition);
    }

    PartitionFetch fetch() {
        return fetch;
    }

    void updateRequest(PartitionFetch newFetch) {
        this.fetch = newFetch;
    }

    /** Learns the name of a topic id that was unknown when the partition joined the session. */
    void maybeResolveName(Function<Uuid, String> topicNames) {
        if (topic == null) {
            topic = topicNames.apply(topicId);
        }
    }

    /**
     * Whether {@code response} must be sent in an incremental response (Kafka's {@code maybeUpdateResponseData}):
     * records, a changed high watermark or log start offset, an error, a preferred replica or a diverging epoch.
     * With {@code update} the sent values are remembered; an error forgets the high watermark so the partition is
     * sent again once the error clears.
     */
    boolean mustRespond(FetchResponseData.PartitionData response, boolean update) {
        boolean must = response.records() != null && response.records().readableBytes() > 0;
        if (highWatermark != response.highWatermark()) {
            must = true;
            if (update) {
                highWatermark = response.highWatermark();
            }
        }
        if (localLogStartOffset != response.logStartOffset()) {
            must = true;
            if (update) {
                localLogStartOffset = response.logStartOffset();
            }
        }
        if (response.preferredReadReplica() != -1) {
            must = true;
        }
        if (response.errorCode() != Errors.NONE.code()) {
            must = true;
            if (update) {
                highWatermark = -1L;
            }
        }
        if (response.divergingEpoch().epoch() >= 0 || response.divergingEpoch().endOffset() >= 0) {
            must = true;
        }
        return must;
    }
}
