package io.cairn.broker.produce;

import io.cairn.broker.InternalTopics;
import io.cairn.broker.produce.ProduceRecords.Scan;
import io.cairn.broker.metrics.BrokerTopicMetrics;
import io.cairn.broker.metrics.TopicMeters;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.RecordValidationException;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.CorruptRecordException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.InvalidRecordException;
import io.cairn.wire.error.InvalidTimestampException;
import io.cairn.wire.error.InvalidTopicException;
import io.cairn.wire.error.KafkaStorageException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.RecordBatchTooLargeException;
import io.cairn.wire.error.RecordTooLargeException;
import io.cairn.wire.error.UnknownTopicIdException;
import io.cairn.wire.error.UnknownTopicOrPartitionException;
import io.cairn.wire.message.ProduceResponseData.BatchIndexAndErrorMessage;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The leader appends of one produce request (Kafka's {@code ReplicaManager.appendToLocalLog}): each pending
 * partition's batch goes to its leader partition in request order, in place in the request's buffer, and its
 * outcome lands in its response entry with Kafka's rules for what a failure reports: no log start offset for the
 * errors Kafka passes through (unknown partition, not leader, too large, corrupt, storage), the partition's log
 * start offset for the others, and the record errors and message of KIP-467 for record-level refusals.
 *
 * <p>One instance per request, used by one append thread; not thread-safe.
 */
final class ProduceAppender {

    private static final Logger LOGGER = LogManager.getLogger(ProduceAppender.class);

    private final ReplicaManager replicas;
    private final short acks;
    private final boolean internalTopicsAllowed;
    private final BrokerTopicMetrics topicMetrics;
    /** The meters of the last topic appended to: a request's partitions come grouped by topic. */
    private TopicMeters lastMeters;
    private String lastTopic;

    ProduceAppender(ReplicaManager replicas, short acks, boolean internalTopicsAllowed,
            BrokerTopicMetrics topicMetrics) {
        this.replicas = replicas;
        this.topicMetrics = topicMetrics;
        this.acks = acks;
        this.internalTopicsAllowed = internalTopicsAllowed;
    }

    /** Appends every pending partition, releases every buffer, then completes {@code appended}. */
    void appendAll(List<ProducePartition> partitions, List<Scan> scans, CompletableFuture<Void> appended) {
        try {
            for (int i = 0; i < partitions.size(); i++) {
                ProducePartition p = partitions.get(i);
                try {
                    if (p.pending()) {
                        append(p, scans.get(i).firstBytes());
                    }
                } finally {
                    p.release();
                }
            }
            appended.complete(null);
        } catch (RuntimeException | Error e) {
            partitions.forEach(ProducePartition::release);
            appended.completeExceptionally(e);
        }
    }

    private void append(ProducePartition p, int batchBytes) {
        TopicPartition tp = new TopicPartition(p.topic(), p.index());
        if (InternalTopics.isInternal(p.topic()) && !internalTopicsAllowed) {
            p.fail(Errors.INVALID_TOPIC_EXCEPTION);
            return;
        }
        Partition partition = null;
        TopicMeters meters = null;
        // Kafka drops the bytes after the last complete batch; the rest is the one batch it accepts.
        ByteBuffer batch = p.records().nioBuffer(p.records().readerIndex(), batchBytes);
        try {
            partition = replicas.leaderPartition(tp);
            // Only topics this broker leads get meters: unknown names from a client create no series.
            meters = meters(p.topic());
            meters.totalProduceRequest();
            if (!Uuid.ZERO.equals(p.topicId()) && !p.topicId().equals(partition.topicId())) {
                p.fail(Errors.INCONSISTENT_TOPIC_ID);
                return;
            }
            // Read before the append: a change of epoch in between fails the wait (retriable), never goes unseen.
            int leaderEpoch = partition.leaderEpoch();
            LogAppendInfo info = partition.appendRecordsToLeader(batch, AppendOrigin.CLIENT, acks, p.verification());
            p.appended(partition, info, leaderEpoch);
            if (!info.duplicate()) {
                meters.messagesIn(info.recordCount(), batchBytes);
            }
        } catch (RecordTooLargeException | RecordBatchTooLargeException e) {
            p.fail(Errors.forException(e));
            if (meters != null) {
                meters.bytesRejected(batchBytes);
            }
        } catch (UnknownTopicOrPartitionException | NotLeaderOrFollowerException | CorruptRecordException
                 | KafkaStorageException | UnknownTopicIdException | InvalidTopicException e) {
            // Kafka's pass-through errors: not counted as failed produce requests.
            p.fail(Errors.forException(e));
        } catch (RecordValidationException e) {
            List<BatchIndexAndErrorMessage> recordErrors = new ArrayList<>(e.recordErrors().size());
            for (RecordValidationException.RecordError error : e.recordErrors()) {
                recordErrors.add(new BatchIndexAndErrorMessage().setBatchIndex(error.batchIndex())
                        .setBatchIndexErrorMessage(error.message()));
            }
            p.fail(Errors.forException(e.error()), partition.logStartOffset(), e.error().getMessage(), recordErrors);
            meters.failedProduceRequest();
        } catch (InvalidRecordException | InvalidTimestampException e) {
            failed(meters);
            if (partition == null) {
                p.fail(Errors.forException(e));
                return;
            }
            p.fail(Errors.forException(e), partition.logStartOffset(), null, List.of());
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            failed(meters);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                LOGGER.error("Error processing append operation on partition {}", tp, e);
            }
            p.fail(error, partition != null && partition.isLeader() ? partition.logStartOffset()
                    : ProducePartition.INVALID_OFFSET, null, List.of());
        }
    }

    private TopicMeters meters(String topic) {
        if (!topic.equals(lastTopic)) {
            lastMeters = topicMetrics.forTopic(topic);
            lastTopic = topic;
        }
        return lastMeters;
    }

    private static void failed(TopicMeters meters) {
        if (meters != null) {
            meters.failedProduceRequest();
        }
    }
}
