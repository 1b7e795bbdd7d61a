package io.cairn.broker.produce;

import io.cairn.isr.Partition;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceResponseData.BatchIndexAndErrorMessage;
import io.cairn.wire.message.ProduceResponseData.PartitionProduceResponse;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One partition of a produce request from decoding to its response entry: the records it owns until they are
 * released (exactly once, whatever happens), where they went and how the append ended.
 *
 * <p>Not thread-safe: a request's partitions are handed from the request-handler thread that appends them to the
 * thread completing the acks; each hand-over goes through a {@code CompletableFuture}, which orders the accesses.
 */
final class ProducePartition {

    /** Kafka's {@code PartitionResponse} defaults: no offset, no append time, no log start offset. */
    static final long INVALID_OFFSET = -1L;

    /** The topic name; for a v13 request the name its topic id resolved to, or null when it did not. */
    private String topic;
    /** The topic id of a v13 request, else {@link Uuid#ZERO}. */
    private final Uuid topicId;
    private final int index;
    private ByteBuf records;
    private final PartitionProduceResponse response;
    private boolean pending = true;
    private Partition partition;
    private long requiredOffset = INVALID_OFFSET;
    /** The leader epoch of the partition when it was appended to; acks=all succeeds only if it still holds. */
    private int appendLeaderEpoch = -1;
    /** The transaction verification guard its append carries; null when the broker verifies nothing. */
    private VerificationGuard verification;

    private ProducePartition(String topic, Uuid topicId, int index, ByteBuf records) {
        this.topic = topic;
        this.topicId = topicId;
        this.index = index;
        this.records = records;
        this.response = new PartitionProduceResponse().setIndex(index).setBaseOffset(INVALID_OFFSET)
                .setLogAppendTimeMs(INVALID_OFFSET).setLogStartOffset(INVALID_OFFSET);
    }

    /**
     * Takes ownership of every records buffer of {@code request}. A partition named twice keeps its last entry, as
     * Kafka's map of partitions does; the records of the earlier entry are released at once.
     */
    static List<ProducePartition> collect(ProduceRequestData request, boolean byTopicId) {
        Map<Key, ProducePartition> partitions = new LinkedHashMap<>();
        for (ProduceRequestData.TopicProduceData topic : request.topicData()) {
            for (ProduceRequestData.PartitionProduceData data : topic.partitionData()) {
                ProducePartition partition = byTopicId
                        ? new ProducePartition(null, topic.topicId(), data.index(), data.records())
                        : new ProducePartition(topic.name(), Uuid.ZERO, data.index(), data.records());
                data.setRecords(null);
                ProducePartition replaced = partitions.put(new Key(topic.name(), topic.topicId(), data.index()),
                        partition);
                if (replaced != null) {
                    replaced.release();
                }
            }
        }
        return new ArrayList<>(partitions.values());
    }

    private record Key(String topic, Uuid topicId, int index) {
        Key {
            topicId = Objects.requireNonNullElse(topicId, Uuid.ZERO);
        }
    }

    String topic() {
        return topic;
    }

    void resolveTopic(String name) {
        this.topic = name;
    }

    Uuid topicId() {
        return topicId;
    }

    int index() {
        return index;
    }

    /** The records, or null once released (or when the request carried none). */
    ByteBuf records() {
        return records;
    }

    /** Releases the records; later calls do nothing. */
    void release() {
        ByteBuf owned = records;
        records = null;
        if (owned != null) {
            owned.release();
        }
    }

    /** True until the partition failed; after a successful append it stays true while acks=all waits. */
    boolean pending() {
        return pending;
    }

    PartitionProduceResponse response() {
        return response;
    }

    Partition partition() {
        return partition;
    }

    /** The guard of the partition's transaction verification, or null. */
    VerificationGuard verification() {
        return verification;
    }

    /** Makes the append carry {@code guard} (KIP-890). */
    void verifyWith(VerificationGuard guard) {
        this.verification = guard;
    }

    /** The offset the high watermark must reach for acks=all: the last appended offset + 1. */
    long requiredOffset() {
        return requiredOffset;
    }

    /** The leader epoch the append was made in. */
    int appendLeaderEpoch() {
        return appendLeaderEpoch;
    }

    /** Fails the partition with {@code error}, Kafka's {@code new PartitionResponse(error)}. */
    void fail(Errors error) {
        fail(error, INVALID_OFFSET, null, List.of());
    }

    /** Fails the partition before anything was appended (the response keeps no offset). */
    void fail(Errors error, long logStartOffset, String message, List<BatchIndexAndErrorMessage> recordErrors) {
        pending = false;
        release();
        response.setErrorCode(error.code()).setBaseOffset(INVALID_OFFSET).setLogAppendTimeMs(INVALID_OFFSET)
                .setLogStartOffset(logStartOffset).setErrorMessage(message).setRecordErrors(recordErrors);
    }

    /**
     * Records a successful append (or an exact retry of one, which Kafka answers with the original offsets) made in
     * {@code leaderEpoch} (read before it).
     */
    void appended(Partition target, LogAppendInfo info, int leaderEpoch) {
        this.partition = target;
        this.appendLeaderEpoch = leaderEpoch;
        this.requiredOffset = info.lastOffset() + 1;
        // A duplicate reports the original batch's timestamp as its append time (Kafka's UnifiedLog.append).
        long appendTime = info.duplicate() ? info.maxTimestamp() : info.logAppendTime();
        response.setBaseOffset(info.firstOffset()).setLogAppendTimeMs(appendTime)
                .setLogStartOffset(info.logStartOffset());
    }

    /** Ends an appended partition's wait for acks=all with {@code error} (the offsets stay, as in Kafka). */
    void completeAcks(Errors error) {
        pending = false;
        response.setErrorCode(error.code());
    }

    @Override
    public String toString() {
        return (topic != null ? topic : topicId.toString()) + "-" + index;
    }
}
