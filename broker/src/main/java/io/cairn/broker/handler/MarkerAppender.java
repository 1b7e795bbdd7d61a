package io.cairn.broker.handler;

import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.record.ControlRecordType;
import io.cairn.wire.record.EndTransactionMarker;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.util.concurrent.CompletableFuture;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Appends one transaction marker to a partition this broker leads, as Kafka's {@code KafkaApis} does for
 * WriteTxnMarkers through {@code ReplicaManager.appendRecords}: a control batch (COMMIT or ABORT with the coordinator
 * epoch) appended with origin coordinator and {@code requiredAcks} -1, answered once the high watermark covers it
 * (a wait in the broker's one purgatory, bounded by {@code request.timeout.ms}). The outcome is Kafka's error of the
 * partition: NONE, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR,
 * INVALID_PRODUCER_EPOCH (an older producer epoch), TRANSACTION_COORDINATOR_FENCED (an older coordinator epoch), ….
 *
 * <p>Thread-safe. {@link #append} runs on the calling request-handler thread (it writes to the log); the returned
 * future completes on whichever thread moves the high watermark.
 */
public final class MarkerAppender {

    private static final Logger LOGGER = LogManager.getLogger(MarkerAppender.class);
    /** Kafka's {@code request.timeout.ms} default, which {@code handleWriteTxnMarkersRequest} waits at most. */
    public static final long DEFAULT_TIMEOUT_MS = 30_000L;

    private final ReplicaManager replicas;
    private final PartitionPurgatory purgatory;
    private final Time time;
    private final long timeoutMs;

    public MarkerAppender(ReplicaManager replicas, PartitionPurgatory purgatory, Time time, long timeoutMs) {
        this.replicas = replicas;
        this.purgatory = purgatory;
        this.time = time;
        this.timeoutMs = timeoutMs;
    }

    /** True when this broker has a log of {@code tp} (Kafka's {@code getMagic} is defined). */
    boolean hosts(TopicPartition tp) {
        return replicas.partition(tp).isPresent();
    }

    /** Appends the marker to {@code tp} as leader and completes with its partition error once the ISR has it. */
    public CompletableFuture<Errors> append(TopicPartition tp, long producerId, short producerEpoch,
            int coordinatorEpoch, boolean commit) {
        EndTransactionMarker marker = new EndTransactionMarker(commit ? ControlRecordType.COMMIT
                : ControlRecordType.ABORT, coordinatorEpoch);
        ByteBuf batch = RecordBatchBuilder.endTransactionMarker(UnpooledByteBufAllocator.DEFAULT, 0L,
                time.milliseconds(), RecordBatch.NO_PARTITION_LEADER_EPOCH, producerId, producerEpoch, marker);
        Partition partition;
        LogAppendInfo info;
        try {
            partition = replicas.leaderPartition(tp);
            info = partition.appendRecordsToLeader(batch.nioBuffer(), AppendOrigin.COORDINATOR, -1);
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                LOGGER.error("Error appending a transaction marker of producer {} to {}", producerId, tp, e);
            }
            return CompletableFuture.completedFuture(error);
        } finally {
            batch.release();
        }
        return purgatory.awaitHighWatermark(partition, info.lastOffset() + 1, timeoutMs);
    }
}
