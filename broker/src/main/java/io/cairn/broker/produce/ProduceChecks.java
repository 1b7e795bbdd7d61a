package io.cairn.broker.produce;

import io.cairn.broker.produce.ProduceRecords.Scan;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.protocol.Uuid;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The checks of a produce request before any append, in Kafka's order ({@code KafkaApis.handleProduceRequest},
 * {@code ReplicaManager.handleProduceAppend}): request-wide failures, then per partition the topic id (v13), the
 * partition, the record set, and the producers of transactional batches.
 *
 * <p>Stateless and thread-safe.
 */
final class ProduceChecks {

    private static final short TOPIC_ID_VERSION = 13;

    private ProduceChecks() {
    }

    /** Kafka's {@code isValidRequiredAcks}. */
    static boolean validAcks(short acks) {
        return acks == -1 || acks == 0 || acks == 1;
    }

    /**
     * Kafka's request-wide failures before any partition is looked at: a batch header Kafka's iterator calls corrupt
     * (CORRUPT_MESSAGE for the whole request, as {@code RequestUtils.flags} throws it), or a transactional batch in
     * a request without a transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
     */
    static ApiException requestError(ProduceRequestData request, List<Scan> scans) {
        boolean transactional = false;
        boolean idempotent = false;
        for (Scan scan : scans) {
            if (scan.corruptFirst() != null) {
                return Errors.CORRUPT_MESSAGE.exception(scan.corruptFirst());
            }
            transactional |= scan.transactional();
            idempotent |= scan.batches() > 0 && scan.producerId() >= 0;
            if (transactional && idempotent) {
                break;
            }
        }
        if (transactional && request.transactionalId() == null) {
            return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.exception();
        }
        return null;
    }

    /** Kafka's per-partition checks before the append: topic id, partition, record set. */
    static void checkPartition(short version, MetadataImage image, ProducePartition p, Scan scan,
                               Predicate<String> writable) {
        if (version >= TOPIC_ID_VERSION) {
            Optional<TopicImage> topic = image.topic(p.topicId());
            if (topic.isEmpty() || Uuid.ZERO.equals(p.topicId())) {
                p.fail(Errors.UNKNOWN_TOPIC_ID);
                return;
            }
            p.resolveTopic(topic.get().name());
        }
        if (p.topic() != null && !writable.test(p.topic())) {
            p.fail(Errors.TOPIC_AUTHORIZATION_FAILED);
            return;
        }
        if (p.topic() == null || image.partition(new TopicPartition(p.topic(), p.index())).isEmpty()) {
            p.fail(Errors.UNKNOWN_TOPIC_OR_PARTITION);
            return;
        }
        Errors invalid = ProduceRecords.validate(version, scan);
        if (invalid != null) {
            p.fail(invalid);
        }
    }

    /** Whether any partition's first batch is transactional (a loop: this runs on every produce request). */
    private static boolean anyTransactional(List<Scan> scans) {
        for (int i = 0; i < scans.size(); i++) {
            if (scans.get(i).transactional()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Kafka's first check of a produce request: transactional records need WRITE on their transactional id (none
     * given counts as refused), else the whole request fails with TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
     */
    static ApiException transactionalIdError(ProduceService.Authorization authorization, ProduceRequestData request,
                                             List<Scan> scans) {
        if (!anyTransactional(scans)) {
            return null;
        }
        String transactionalId = request.transactionalId();
        if (authorization.writeTransactionalId().test(transactionalId)) {
            return null;
        }
        return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.exception();
    }

    /**
     * Kafka's {@code handleProduceAppend} check before transaction verification: batches of more than one producer
     * fail the whole request (INVALID_PRODUCER_ID_MAPPING). Verification itself is {@link ProduceVerification}'s.
     */
    static ApiException checkTransactions(List<ProducePartition> partitions, List<Scan> scans) {
        Set<List<Long>> producers = new HashSet<>();
        for (int i = 0; i < partitions.size(); i++) {
            Scan scan = scans.get(i);
            if (partitions.get(i).pending() && scan.transactional() && scan.producerId() >= 0) {
                producers.add(List.of(scan.producerId(), (long) scan.producerEpoch()));
            }
        }
        if (producers.size() > 1) {
            return Errors.INVALID_PRODUCER_ID_MAPPING.exception(
                    "Transactional records contained more than one producer ID");
        }
        return null;
    }
}
