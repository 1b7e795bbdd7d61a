package io.cairn.broker.produce;

import static java.util.concurrent.CompletableFuture.completedFuture;
import static java.util.concurrent.CompletableFuture.failedFuture;

import io.cairn.broker.metrics.BrokerTopicMetrics;
import io.cairn.broker.produce.ProduceRecords.Scan;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Predicate;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The produce path behind the Produce API (Kafka's {@code handleProduceRequest} past authentication, and
 * {@code ReplicaManager.appendRecords}): the request-wide checks (a transactional batch needs a transactional id),
 * then per partition an unknown topic id (v13) or partition, Kafka's record-set rules, the acks value, the transaction
 * verification with the coordinator ({@link ProduceVerification}, KIP-890) and the leader append, each failure its
 * own error code in its partition's entry.
 *
 * <p>Two-phase, and called on a request-handler thread: the batches are appended in request order (after the
 * coordinator's verification, on a request-handler thread again, when a transaction needs one), and
 * {@link Appending#appended} completes with the last one; the response follows at once for acks=1, once every high
 * watermark covers its append for acks=-1 ({@link DelayedProduce} in the broker's purgatory, bounded by
 * {@code timeoutMs}), and never for acks=0, where any partition error fails the response instead (the connection is
 * closed). Every records buffer of the request is released exactly once, right after its append or its failure.
 *
 * <p>Stateless; thread-safe.
 */
public final class ProduceService {

    private static final Logger LOGGER = LogManager.getLogger(ProduceService.class);
    private static final short TOPIC_ID_VERSION = 13;

    private final ReplicaManager replicas;
    private final MetadataNode metadata;
    private final PartitionPurgatory purgatory;
    private final BrokerTopicMetrics topicMetrics;
    private final TransactionVerifier verifier;
    private final Executor requestHandlers;

    /**
     * What the caller may write, decided by the API layer's authorizer.
     *
     * @param writeTopic           whether the caller may WRITE a topic (asked once per topic of a request)
     * @param writeTransactionalId whether transactional records may be written under a transactional id (called
     *                             with null when the request has none)
     */
    public record Authorization(Predicate<String> writeTopic, Predicate<String> writeTransactionalId) {

        /** Everything allowed: no authorizer. */
        public static final Authorization ALLOW_ALL = new Authorization(topic -> true, id -> true);
    }

    /**
     * The two stages of one produce request.
     *
     * @param appended completes once every batch of the request was appended or failed
     * @param response the response, or fails with the error that closes an acks=0 connection
     */
    public record Appending(CompletableFuture<?> appended, CompletableFuture<ProduceResponseData> response) {
    }

    /**
     * The produce path whose acks=all requests wait in {@code purgatory}; appends count in {@code topicMetrics}.
     * Transactional batches are verified (or, v12+, added to their transaction) by {@code verifier} (null: neither),
     * and appended once verified on {@code requestHandlers}.
     */
    public ProduceService(ReplicaManager replicas, MetadataNode metadata, PartitionPurgatory purgatory,
                          BrokerTopicMetrics topicMetrics, TransactionVerifier verifier, Executor requestHandlers) {
        this.replicas = replicas;
        this.metadata = metadata;
        this.purgatory = purgatory;
        this.topicMetrics = topicMetrics;
        this.verifier = verifier;
        this.requestHandlers = requestHandlers;
    }

    /**
     * Serves {@code request} of {@code version} from {@code clientId} (its {@code correlationId} named in errors)
     * on {@code listenerName}; {@code internalTopicsAllowed} for Kafka's admin client only.
     */
    public Appending produce(short version, String clientId, int correlationId, String listenerName,
                             boolean internalTopicsAllowed, ProduceRequestData request, Authorization authorization) {
        List<ProducePartition> partitions = ProducePartition.collect(request, version >= TOPIC_ID_VERSION);
        try {
            return start(version, clientId, correlationId, listenerName, internalTopicsAllowed, request,
                    authorization, partitions);
        } catch (RuntimeException | Error e) {
            partitions.forEach(ProducePartition::release);
            throw e;
        }
    }

    private Appending start(short version, String clientId, int correlationId, String listenerName,
                            boolean internalTopicsAllowed, ProduceRequestData request, Authorization authorization,
                            List<ProducePartition> partitions) {
        List<Scan> scans = new ArrayList<>(partitions.size());
        partitions.forEach(p -> scans.add(ProduceRecords.scan(p.records())));
        ApiException whole = ProduceChecks.transactionalIdError(authorization, request, scans);
        if (whole == null) {
            whole = ProduceChecks.requestError(request, scans);
        }
        if (whole == null) {
            MetadataImage image = metadata.currentImage();
            for (int i = 0; i < partitions.size(); i++) {
                ProduceChecks.checkPartition(version, image, partitions.get(i), scans.get(i),
                        authorization.writeTopic());
            }
            whole = ProduceChecks.checkTransactions(partitions, scans);
        }
        if (whole != null) {
            partitions.forEach(ProducePartition::release);
            CompletableFuture<ProduceResponseData> failed = request.acks() == 0
                    ? failedFuture(whole) : completedFuture(errorResponse(version, partitions, whole));
            return new Appending(failed, failed);
        }
        if (!ProduceChecks.validAcks(request.acks())) {
            for (ProducePartition p : partitions) {
                if (p.pending()) {
                    p.fail(Errors.INVALID_REQUIRED_ACKS);
                }
            }
        }
        CompletableFuture<Void> appended = new CompletableFuture<>();
        ProduceAppender appender = new ProduceAppender(replicas, request.acks(), internalTopicsAllowed, topicMetrics);
        CompletableFuture<Void> verified = ProduceVerification.start(verifier, replicas, request.transactionalId(),
                version, partitions, scans);
        if (verified.isDone()) {
            appender.appendAll(partitions, scans, appended);
        } else {
            // Kafka's wrapAsyncCallback: the append runs on a request-handler thread, never the verifier's.
            verified.whenComplete((ignored, failure) -> {
                try {
                    requestHandlers.execute(() -> appender.appendAll(partitions, scans, appended));
                } catch (RejectedExecutionException e) {
                    partitions.forEach(ProducePartition::release);
                    appended.completeExceptionally(e);
                }
            });
        }
        CompletableFuture<ProduceResponseData> response = appended.thenCompose(ignored -> {
            if (request.acks() != -1) {
                // A loop, not a stream: this runs once per acks=0/1 produce request.
                for (ProducePartition p : partitions) {
                    if (p.pending()) {
                        p.completeAcks(Errors.NONE);
                    }
                }
                try {
                    return completedFuture(respond(version, clientId, correlationId, listenerName, request,
                            partitions));
                } catch (ApiException e) {
                    return failedFuture(e);
                }
            }
            return DelayedProduce.await(partitions, request.timeoutMs(), purgatory,
                    () -> respond(version, clientId, correlationId, listenerName, request, partitions));
        });
        return new Appending(appended, response);
    }

    private ProduceResponseData respond(short version, String clientId, int correlationId, String listenerName,
                                        ProduceRequestData request, List<ProducePartition> partitions) {
        List<ProducePartition> failed = new ArrayList<>(0);
        for (ProducePartition p : partitions) {
            if (p.response().errorCode() != Errors.NONE.code()) {
                failed.add(p);
            }
        }
        if (!failed.isEmpty() && LOGGER.isDebugEnabled()) {
            for (ProducePartition p : failed) {
                LOGGER.debug("Produce request with correlation id {} from client {} on partition {} failed due to {}",
                        correlationId, clientId, p, Errors.forCode(p.response().errorCode()));
            }
        }
        if (request.acks() == 0) {
            if (failed.isEmpty()) {
                return new ProduceResponseData();
            }
            StringBuilder errors = new StringBuilder();
            for (ProducePartition p : failed) {
                errors.append(errors.length() == 0 ? "" : ", ").append(p).append(" -> ")
                        .append(Errors.forCode(p.response().errorCode()));
            }
            throw Errors.forCode(failed.get(0).response().errorCode()).exception("error during produce request "
                    + "with correlation id " + correlationId + " from client id " + clientId
                    + " with ack=0; topic and partition to exceptions: " + errors);
        }
        return ProduceResponses.build(version, partitions, failed, replicas, metadata.currentImage(), listenerName);
    }

    /** Kafka's {@code ProduceRequest.getErrorResponse}: every partition of {@code request} gets {@code error}. */
    public static ProduceResponseData errorResponse(short version, ProduceRequestData request, Errors error) {
        List<ProducePartition> partitions = ProducePartition.collect(request, version >= TOPIC_ID_VERSION);
        partitions.forEach(ProducePartition::release);
        return errorResponse(version, partitions, error.exception());
    }

    private static ProduceResponseData errorResponse(short version, List<ProducePartition> partitions,
                                                     ApiException error) {
        Errors code = Errors.forException(error);
        String message = code == Errors.UNKNOWN_SERVER_ERROR ? code.message() : error.getMessage();
        for (ProducePartition p : partitions) {
            p.fail(code, ProducePartition.INVALID_OFFSET, message, List.of());
        }
        return ProduceResponses.build(version, partitions, List.of(), null, null, null);
    }
}
