package io.cairn.log.producer;

/**
 * What a partition knows of one producer at a moment (Kafka's {@code DescribeProducersResponseData.ProducerState}
 * as {@code UnifiedLog.activeProducers} fills it). Immutable.
 *
 * @param producerId            the producer id
 * @param producerEpoch         its current epoch
 * @param lastSequence          the last sequence it wrote, or -1
 * @param lastTimestamp         the max timestamp of its last batch or marker
 * @param coordinatorEpoch      the coordinator epoch of its last marker, or -1
 * @param currentTxnStartOffset the first offset of its open transaction, or -1
 */
public record ActiveProducer(long producerId, short producerEpoch, int lastSequence, long lastTimestamp,
                             int coordinatorEpoch, long currentTxnStartOffset) {

    static ActiveProducer of(ProducerStateEntry entry) {
        return new ActiveProducer(entry.producerId(), entry.producerEpoch(), entry.lastSeq(), entry.lastTimestamp(),
            entry.coordinatorEpoch(), entry.currentTxnFirstOffset());
    }
}
