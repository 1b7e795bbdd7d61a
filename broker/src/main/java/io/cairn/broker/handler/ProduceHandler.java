package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;
import static java.util.concurrent.CompletableFuture.failedFuture;

import io.cairn.broker.handler.ProduceRecords.Scan;
import io.cairn.broker.metrics.BrokerTopicMetrics;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
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
 * Produce v3-v13, advertised from v0 as Kafka 4.x does (KAFKA-18659), following Kafka's {@code handleProduceRequest}
 * and {@code ReplicaManager.appendRecords}: the request-wide checks (a transactional batch needs a transactional
 * id), then per partition an unknown topic id (v13) or partition, Kafka's record-set rules, the acks value, the
 * transaction verification with the coordinator ({@link ProduceVerification}, KIP-890) and the leader append, each
 * failure its own error code in its partition's entry.
 *
 * <p>Two-phase, and called on a request-handler thread (never on the event loop, {@link #runsOn()}): the batches
 * are appended in request order (after the coordinator's verification, on a request-handler thread again, when a
 * transaction needs one), and {@code dispatched} completes with the last one;
 * the response follows at once for acks=1, once every high watermark covers its append for acks=-1
 * ({@link DelayedProduce} in the broker's purgatory, bounded by {@code timeoutMs}), and never for acks=0, where any
 * partition error closes the connection instead. Every records buffer of the request is released exactly once, right
 * after its append or its failure.
 *
 * <p>Stateless; thread-safe.
 */
public final class ProduceHandler implements TwoPhaseApiHandler<ProduceRequestData, ProduceResponseData> {

    private static final Logger LOGGER = LogManager.getLogger(ProduceHandler.class);
    private static final short MIN_VERSION = 3;
    private static final short MAX_VERSION = 13;
    private static final short TOPIC_ID_VERSION = 13;
    /** Kafka's {@code AdminUtils.ADMIN_CLIENT_ID}: the only client allowed to append to internal topics. */
    private static final String ADMIN_CLIENT_ID = "__admin_client";

    private final ReplicaManager replicas;
    private final MetadataNode metadata;
    private final PartitionPurgatory purgatory;
    private final BrokerTopicMetrics topicMetrics;
    private final TransactionVerifier verifier;
    private final Executor requestHandlers;

    /**
     * A handler whose acks=all requests wait in {@code purgatory}; appends count in {@code topicMetrics}. Transactional
     * batches are verified (or, v12+, added to their transaction) by {@code verifier} (null: neither), and appended
     * once verified on {@code requestHandlers}.
     */
    public ProduceHandler(ReplicaManager replicas, MetadataNode metadata, PartitionPurgatory purgatory,
            BrokerTopicMetrics topicMetrics, TransactionVerifier verifier, Executor requestHandlers) {
        this.replicas = replicas;
        this.topicMetrics = topicMetrics;
        this.metadata = metadata;
        this.purgatory = purgatory;
        this.verifier = verifier;
        this.requestHandlers = requestHandlers;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.PRODUCE;
    }

    @Override
    public short minVersion() {
        return MIN_VERSION;
    }

    @Override
    public short maxVersion() {
        return MAX_VERSION;
    }

    /** Kafka's {@code ApiKeys.PRODUCE_API_VERSIONS_RESPONSE_MIN_VERSION}. */
    @Override
    public short advertisedMinVersion() {
        return 0;
    }

    @Override
    public boolean expectsResponse(ProduceRequestData request) {
        return request.acks() != 0;
    }

    @Override
    public Stages<ProduceResponseData> dispatch(RequestContext ctx, ProduceRequestData request) {
        List<ProducePartition> partitions = ProducePartition.collect(request, ctx.apiVersion() >= TOPIC_ID_VERSION);
        try {
            return start(ctx, request, partitions);
        } catch (RuntimeException | Error e) {
            partitions.forEach(ProducePartition::release);
            throw e;
        }
    }

    private Stages<ProduceResponseData> start(RequestContext ctx, ProduceRequestData request,
                                              List<ProducePartition> partitions) {
        short version = ctx.apiVersion();
        List<Scan> scans = new ArrayList<>(partitions.size());
        partitions.forEach(p -> scans.add(ProduceRecords.scan(p.records())));
        ApiException whole = ProduceChecks.transactionalIdError(ctx, request, scans);
        if (whole == null) {
            whole = ProduceChecks.requestError(request, scans);
        }
        if (whole == null) {
            MetadataImage image = metadata.currentImage();
            Predicate<String> writable = ProduceChecks.writableTopics(ctx);
            for (int i = 0; i < partitions.size(); i++) {
                ProduceChecks.checkPartition(version, image, partitions.get(i), scans.get(i), writable);
            }
            whole = ProduceChecks.checkTransactions(partitions, scans);
        }
        if (whole != null) {
            partitions.forEach(ProducePartition::release);
            CompletableFuture<ProduceResponseData> failed = request.acks() == 0
                    ? failedFuture(whole) : completedFuture(errorResponse(version, partitions, whole));
            return new Stages<>(failed, failed);
        }
        if (!ProduceChecks.validAcks(request.acks())) {
            partitions.stream().filter(ProducePartition::pending).forEach(p -> p.fail(Errors.INVALID_REQUIRED_ACKS));
        }
        CompletableFuture<Void> appended = new CompletableFuture<>();
        ProduceAppender appender = new ProduceAppender(replicas, request.acks(),
                ADMIN_CLIENT_ID.equals(ctx.clientId()), topicMetrics);
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
                partitions.stream().filter(ProducePartition::pending).forEach(p -> p.completeAcks(Errors.NONE));
                try {
                    return completedFuture(respond(ctx, request, partitions));
                } catch (ApiException e) {
                    return failedFuture(e);
                }
            }
            return DelayedProduce.await(partitions, request.timeoutMs(), purgatory,
                    () -> respond(ctx, request, partitions));
        });
        return new Stages<>(appended, response);
    }

    private ProduceResponseData respond(RequestContext ctx, ProduceRequestData request,
                                        List<ProducePartition> partitions) {
        List<ProducePartition> failed = new ArrayList<>(0);
        for (ProducePartition p : partitions) {
            if (p.response().errorCode() != Errors.NONE.code()) {
                failed.add(p);
            }
        }
        if (!failed.isEmpty() && LOGGER.isDebugEnabled()) {
            for (ProducePartition p : failed) {
                LOGGER.debug("Produce request with correlation id {} from client {} on partition {} failed due to {}",
                        ctx.correlationId(), ctx.clientId(), p, Errors.forCode(p.response().errorCode()));
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
                    + "with correlation id " + ctx.correlationId() + " from client id " + ctx.clientId()
                    + " with ack=0; topic and partition to exceptions: " + errors);
        }
        return ProduceResponses.build(ctx.apiVersion(), partitions, failed, replicas, metadata.currentImage(),
                ctx.listenerName());
    }

    /** Kafka's {@code ProduceResponse.errorCounts}: one code per partition. */
    @Override
    public void countErrors(ProduceResponseData response, ErrorCounter counter) {
        List<ProduceResponseData.TopicProduceResponse> topics = response.responses();
        for (int t = 0; t < topics.size(); t++) {
            List<ProduceResponseData.PartitionProduceResponse> partitions = topics.get(t).partitionResponses();
            for (int p = 0; p < partitions.size(); p++) {
                counter.count(partitions.get(p).errorCode());
            }
        }
    }

    @Override
    public ProduceResponseData errorResponse(RequestContext ctx, ProduceRequestData request, Errors error) {
        List<ProducePartition> partitions = ProducePartition.collect(request, ctx.apiVersion() >= TOPIC_ID_VERSION);
        partitions.forEach(ProducePartition::release);
        return errorResponse(ctx.apiVersion(), partitions, error.exception());
    }

    /** Kafka's {@code ProduceRequest.getErrorResponse}: every partition gets the error and its message. */
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
