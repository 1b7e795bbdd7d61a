package io.cairn.broker.share.partition;

import io.cairn.broker.fetch.TopicIdPartition;
import io.cairn.broker.share.partition.ShareRecordTypes.AckBatch;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The request-side helpers of ShareFetch and ShareAcknowledge: resolving topic ids and authorizing topics (Kafka's
 * erroneous partitions: UNKNOWN_TOPIC_ID, TOPIC_AUTHORIZATION_FAILED), validating acknowledgement batches (Kafka's
 * {@code validateAcknowledgementBatches}: INVALID_REQUEST for a batch whose last offset is before its first, batches
 * out of order or overlapping, no types, a type count that is neither one nor the batch's length, a type outside
 * 0-3) and the current leader of partitions answered NOT_LEADER_OR_FOLLOWER.
 */
final class ShareRequests {

    private ShareRequests() {
    }

    /** A partition of a request, resolved: its topic name or the error of an erroneous one. */
    record Resolved(TopicIdPartition tp, Errors error) {
    }

    /** Resolves {@code topicId}'s partition against {@code image}; unknown ids and unauthorized topics are errors. */
    static Resolved resolve(MetadataImage image, io.cairn.wire.protocol.Uuid topicId, int partition,
                            Predicate<String> readAllowed) {
        Optional<TopicImage> topic = image.topic(topicId);
        if (topic.isEmpty()) {
            return new Resolved(new TopicIdPartition(topicId, null, partition), Errors.UNKNOWN_TOPIC_ID);
        }
        TopicIdPartition tp = new TopicIdPartition(topicId, topic.get().name(), partition);
        if (!readAllowed.test(topic.get().name())) {
            return new Resolved(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
        }
        if (topic.get().partition(partition).isEmpty()) {
            return new Resolved(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
        }
        return new Resolved(tp, Errors.NONE);
    }

    /** NONE when the batches are well formed, else INVALID_REQUEST. */
    static Errors validate(List<AckBatch> batches) {
        long previousLast = -1L;
        for (AckBatch batch : batches) {
            if (batch.firstOffset() < 0 || batch.lastOffset() < batch.firstOffset()
                    || batch.firstOffset() <= previousLast) {
                return Errors.INVALID_REQUEST;
            }
            byte[] types = batch.types();
            long length = batch.lastOffset() - batch.firstOffset() + 1;
            if (types.length == 0 || (types.length > 1 && types.length != length)) {
                return Errors.INVALID_REQUEST;
            }
            for (byte type : types) {
                if (type < ShareRecordTypes.GAP || type > ShareRecordTypes.REJECT) {
                    return Errors.INVALID_REQUEST;
                }
            }
            previousLast = batch.lastOffset();
        }
        return Errors.NONE;
    }

    /** Acknowledge types of the wire as bytes. */
    static byte[] types(List<Byte> types) {
        byte[] array = new byte[types == null ? 0 : types.size()];
        for (int j = 0; j < array.length; j++) {
            array[j] = types.get(j);
        }
        return array;
    }

    /** A leader's id, epoch and endpoint on {@code listenerName}, for partitions answered NOT_LEADER_OR_FOLLOWER. */
    record Leader(int id, int epoch, String host, int port, String rack) {
    }

    /** The current leaders of {@code partitions}, those with a live endpoint on {@code listenerName}. */
    static Map<TopicIdPartition, Leader> leaders(MetadataImage image, List<TopicIdPartition> partitions,
                                                 String listenerName) {
        Map<TopicIdPartition, Leader> leaders = new LinkedHashMap<>();
        for (TopicIdPartition tp : partitions) {
            if (tp.topic() == null) {
                continue;
            }
            Optional<PartitionRegistration> registration = image.partition(tp.topicPartition());
            if (registration.isEmpty() || !registration.get().hasLeader()) {
                continue;
            }
            int id = registration.get().leader();
            Optional<BrokerRegistration> broker = image.broker(id).filter(b -> !b.fenced());
            broker.flatMap(b -> b.endpoint(listenerName)).ifPresent(e -> leaders.put(tp, new Leader(id,
                registration.get().leaderEpoch(), e.host(), e.port(), broker.get().rack().orElse(null))));
        }
        return leaders;
    }
}
