package io.cairn.broker.produce;

import io.cairn.broker.produce.ProduceRecords.Scan;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The transaction verification of one produce request (KIP-890 part 1, Kafka's
 * {@code ReplicaManager.maybeStartTransactionVerificationForPartitions} and its {@code postVerificationCallback}):
 * when the request has a transactional id and {@code transaction.partition.verification.enable} is on, or the request
 * is Produce v12+ (the producer's transaction.version 2, KIP-890 part 2, which sends no AddPartitionsToTxn), each
 * transactional partition asks its leader log for a verification guard; those whose transaction is not yet ongoing
 * there are verified with the coordinator, or for v12+ added to the transaction by it ({@link TransactionVerifier}),
 * and the append then carries the guard. A write of a finished transaction's epoch is thereby refused: the
 * coordinator's epoch moved on with the commit or abort. A
 * partition that is not verified fails with Kafka's produce error: INVALID_TXN_STATE ("Partition was not added to the
 * transaction"); NOT_ENOUGH_REPLICAS ("Unable to verify the partition has been added to the transaction. Underlying
 * error: X") for the coordinator's retriable CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS,
 * COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR, which older clients do not retry correctly; any other as itself.
 *
 * An add that meets CONCURRENT_TRANSACTIONS is retried by the leader for Kafka's 100 ms and then answered as such.
 *
 * <p>Stateless; called on a request-handler thread. The returned stage completes on the verifier's thread.
 */
public final class ProduceVerification {

    /** Produce v11+ clients understand TRANSACTION_ABORTABLE (Kafka's {@code genericErrorSupported}). */
    private static final short ABORTABLE_VERSION = 11;
    /** Produce v12+ has the leader add the partition to the transaction (Kafka's {@code addPartition}). */
    private static final short ADD_PARTITION_VERSION = 12;
    /**
     * An add that meets CONCURRENT_TRANSACTIONS (the producer's previous transaction still writes its markers) is
     * retried by the leader after Kafka's {@code add.partitions.to.txn.retry.backoff.ms} default, 20 ms, until its
     * {@code add.partitions.to.txn.retry.backoff.max.ms} default, 100 ms, has passed: 5 retries.
     */
    static final long ADD_RETRY_BACKOFF_MS = 20L;
    public static final int ADD_RETRIES = 5;
    private static final Set<Errors> UNVERIFIABLE = Set.of(Errors.CONCURRENT_TRANSACTIONS, Errors.NETWORK_EXCEPTION,
            Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR);

    private ProduceVerification() {
    }

    /**
     * Starts the verification of {@code partitions}; completes once every partition has its guard or its error.
     * Without a {@code verifier}, or with verification disabled before v12, nothing is checked, as in Kafka.
     */
    static CompletableFuture<Void> start(TransactionVerifier verifier, ReplicaManager replicas, String transactionalId,
                                         short version, List<ProducePartition> partitions, List<Scan> scans) {
        boolean add = version >= ADD_PARTITION_VERSION;
        if (verifier == null || transactionalId == null || (!add && !verifier.verificationEnabled())) {
            return CompletableFuture.completedFuture(null);
        }
        Map<TopicPartition, ProducePartition> toVerify = new LinkedHashMap<>();
        long producerId = -1L;
        short producerEpoch = -1;
        for (int i = 0; i < partitions.size(); i++) {
            ProducePartition p = partitions.get(i);
            Scan scan = scans.get(i);
            if (!p.pending() || !scan.transactional() || scan.producerId() < 0) {
                continue;
            }
            producerId = scan.producerId();
            producerEpoch = scan.producerEpoch();
            TopicPartition tp = new TopicPartition(p.topic(), p.index());
            try {
                VerificationGuard guard = replicas.leaderPartition(tp).maybeStartTransactionVerification(producerId,
                        scan.baseSequence(), producerEpoch, add);
                p.verifyWith(guard);
                if (guard != VerificationGuard.SENTINEL) {
                    toVerify.put(tp, p);
                }
            } catch (ApiException e) {
                fail(p, Errors.forException(e), false);
            }
        }
        if (toVerify.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        Request request = new Request(verifier, transactionalId, producerId, producerEpoch,
                version >= ABORTABLE_VERSION, add);
        return request.send(toVerify, add ? ADD_RETRIES : 0);
    }

    /** One producer's verification or add, retried while the coordinator is still completing its last transaction. */
    private record Request(TransactionVerifier verifier, String transactionalId, long producerId, short producerEpoch,
                           boolean abortableSupported, boolean add) {

        CompletableFuture<Void> send(Map<TopicPartition, ProducePartition> partitions, int retriesLeft) {
            return verifier.verifyOrAdd(transactionalId, producerId, producerEpoch, partitions.keySet(),
                    abortableSupported, add).thenCompose(errors -> {
                        Map<TopicPartition, ProducePartition> retry = new LinkedHashMap<>();
                        errors.forEach((tp, error) -> {
                            ProducePartition p = partitions.get(tp);
                            if (p == null || error == Errors.NONE) {
                                return;
                            }
                            if (error == Errors.CONCURRENT_TRANSACTIONS && retriesLeft > 0) {
                                retry.put(tp, p);
                            } else {
                                fail(p, error, add);
                            }
                        });
                        if (retry.isEmpty()) {
                            return CompletableFuture.completedFuture(null);
                        }
                        return CompletableFuture.supplyAsync(() -> retry, CompletableFuture.delayedExecutor(
                                ADD_RETRY_BACKOFF_MS, TimeUnit.MILLISECONDS, Runnable::run))
                                .thenCompose(again -> send(again, retriesLeft - 1));
                    });
        }
    }

    private static void fail(ProducePartition p, Errors error, boolean add) {
        if (add && error == Errors.CONCURRENT_TRANSACTIONS) {
            // Kafka 4.1 hands a TV2 producer CONCURRENT_TRANSACTIONS itself, which it retries.
            p.fail(error);
        } else if (error == Errors.INVALID_TXN_STATE) {
            p.fail(error, ProducePartition.INVALID_OFFSET, "Partition was not added to the transaction", List.of());
        } else if (UNVERIFIABLE.contains(error)) {
            p.fail(Errors.NOT_ENOUGH_REPLICAS, ProducePartition.INVALID_OFFSET, "Unable to verify the partition has "
                    + "been added to the transaction. Underlying error: " + error.name(), List.of());
        } else {
            p.fail(error);
        }
    }
}
