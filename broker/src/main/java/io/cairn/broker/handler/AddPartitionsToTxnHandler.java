package io.cairn.broker.handler;

import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.broker.txn.TransactionMetadata;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddPartitionsToTxnRequestData;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import io.cairn.wire.message.AddPartitionsToTxnResponseData;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult;
import io.cairn.wire.message.ApiKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

/**
 * AddPartitionsToTxn v0-v5 (Kafka's {@code handleAddPartitionsToTxnRequest}). v0-v3 come from producers: one
 * transaction, its partitions added (the client's transaction.version 0). v4+ come from brokers and batch transactions;
 * one with {@code verify_only} is only checked (KIP-890 part 1: is each partition in the ongoing transaction), one
 * without is added for the producer at transaction.version 2 (KIP-890 part 2: the partition's leader adds it when the
 * produce arrives); v5 is v4 for coordinators that may answer TRANSACTION_ABORTABLE. A partition that does not exist is
 * UNKNOWN_TOPIC_OR_PARTITION and the others of its transaction OPERATION_NOT_ATTEMPTED; otherwise every partition of a
 * transaction gets the coordinator's answer. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2. Immutable,
 * thread-safe.
 */
public final class AddPartitionsToTxnHandler implements ApiHandler<AddPartitionsToTxnRequestData,
        AddPartitionsToTxnResponseData> {

    private final TransactionCoordinator coordinator;
    private final MetadataNode metadata;

    public AddPartitionsToTxnHandler(TransactionCoordinator coordinator, MetadataNode metadata) {
        this.coordinator = coordinator;
        this.metadata = metadata;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.ADD_PARTITIONS_TO_TXN;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 5;
    }

    @Override
    public CompletionStage<AddPartitionsToTxnResponseData> handle(RequestContext ctx,
                                                                  AddPartitionsToTxnRequestData request) {
        MetadataImage image = metadata.currentImage();
        short version = ctx.apiVersion();
        // Kafka: v4+ comes from brokers (CLUSTER_ACTION on the cluster, else the whole request fails); v0-3 from
        // clients, which need WRITE on the transactional id and on each topic.
        if (version >= 4 && !ctx.authorizeCluster(AclOperation.CLUSTER_ACTION)) {
            return CompletableFuture.completedFuture(errorResponse(ctx, request, Errors.CLUSTER_AUTHORIZATION_FAILED));
        }
        if (version < 4) {
            if (!ctx.authorize(AclOperation.WRITE, AclResourceType.TRANSACTIONAL_ID,
                    request.v3AndBelowTransactionalId())) {
                Map<TopicPartition, Errors> refused = new LinkedHashMap<>();
                for (AddPartitionsToTxnTopic topic : request.v3AndBelowTopics()) {
                    topic.partitions().forEach(p -> refused.put(new TopicPartition(topic.name(), p),
                            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
                }
                return CompletableFuture.completedFuture(new AddPartitionsToTxnResponseData().setThrottleTimeMs(0)
                        .setResultsByTopicV3AndBelow(topicResults(refused)));
            }
            Map<String, Boolean> writable = new HashMap<>();
            return transaction(image, request.v3AndBelowTransactionalId(), request.v3AndBelowProducerId(),
                    request.v3AndBelowProducerEpoch(), false, request.v3AndBelowTopics(), version,
                    topic -> writable.computeIfAbsent(topic,
                            t -> ctx.authorize(AclOperation.WRITE, AclResourceType.TOPIC, t)))
                    .thenApply(results -> new AddPartitionsToTxnResponseData().setThrottleTimeMs(0)
                            .setResultsByTopicV3AndBelow(topicResults(results)));
        }
        List<String> ids = new ArrayList<>();
        List<CompletableFuture<Map<TopicPartition, Errors>>> results = new ArrayList<>();
        for (AddPartitionsToTxnTransaction transaction : request.transactions()) {
            ids.add(transaction.transactionalId());
            results.add(transaction(image, transaction.transactionalId(), transaction.producerId(),
                    transaction.producerEpoch(), transaction.verifyOnly(), transaction.topics(), version,
                    topic -> true));
        }
        return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData().setThrottleTimeMs(0)
                    .setErrorCode(Errors.NONE.code());
            for (int i = 0; i < ids.size(); i++) {
                response.resultsByTransaction().add(new AddPartitionsToTxnResult().setTransactionalId(ids.get(i))
                        .setTopicResults(topicResults(results.get(i).join())));
            }
            return response;
        });
    }

    /** One transaction: its partitions checked against the metadata, then added or verified. */
    private CompletableFuture<Map<TopicPartition, Errors>> transaction(MetadataImage image, String transactionalId,
            long producerId, short producerEpoch, boolean verifyOnly, List<AddPartitionsToTxnTopic> topics,
            short version, Predicate<String> writable) {
        Set<TopicPartition> partitions = new LinkedHashSet<>();
        for (AddPartitionsToTxnTopic topic : topics) {
            topic.partitions().forEach(p -> partitions.add(new TopicPartition(topic.name(), p)));
        }
        Map<TopicPartition, Errors> refused = new LinkedHashMap<>();
        for (TopicPartition tp : partitions) {
            if (!writable.test(tp.topic())) {
                refused.put(tp, Errors.TOPIC_AUTHORIZATION_FAILED);
            } else if (image.partition(tp).isEmpty()) {
                refused.put(tp, Errors.UNKNOWN_TOPIC_OR_PARTITION);
            }
        }
        if (!refused.isEmpty()) {
            Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
            partitions.forEach(tp -> errors.put(tp, refused.getOrDefault(tp, Errors.OPERATION_NOT_ATTEMPTED)));
            return CompletableFuture.completedFuture(errors);
        }
        if (verifyOnly) {
            return coordinator.verifyPartitions(transactionalId, producerId, producerEpoch, partitions);
        }
        short clientVersion = version >= 4 ? TransactionMetadata.TV_2 : 0;
        return coordinator.addPartitions(transactionalId, producerId, producerEpoch, partitions, clientVersion)
                .thenApply(error -> {
            Errors mapped = TransactionErrors.forVersion(error, version);
            Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
            partitions.forEach(tp -> errors.put(tp, mapped));
            return errors;
        });
    }

    private static List<AddPartitionsToTxnTopicResult> topicResults(Map<TopicPartition, Errors> errors) {
        Map<String, AddPartitionsToTxnTopicResult> byTopic = new LinkedHashMap<>();
        errors.forEach((tp, error) -> byTopic.computeIfAbsent(tp.topic(), t -> new AddPartitionsToTxnTopicResult()
                .setName(t)).resultsByPartition().add(new AddPartitionsToTxnPartitionResult()
                .setPartitionIndex(tp.partition()).setPartitionErrorCode(error.code())));
        return new ArrayList<>(byTopic.values());
    }

    @Override
    public AddPartitionsToTxnResponseData errorResponse(RequestContext ctx, AddPartitionsToTxnRequestData request,
                                                        Errors error) {
        AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData().setThrottleTimeMs(0);
        if (ctx.apiVersion() >= 4) {
            return response.setErrorCode(error.code());
        }
        Map<TopicPartition, Errors> errors = new LinkedHashMap<>();
        for (AddPartitionsToTxnTopic topic : request.v3AndBelowTopics()) {
            topic.partitions().forEach(p -> errors.put(new TopicPartition(topic.name(), p),
                    TransactionErrors.forVersion(error, ctx.apiVersion())));
        }
        return response.setResultsByTopicV3AndBelow(topicResults(errors));
    }

    @Override
    public void countErrors(AddPartitionsToTxnResponseData response, ErrorCounter counter) {
        for (AddPartitionsToTxnTopicResult topic : response.resultsByTopicV3AndBelow()) {
            countPartitions(topic, counter);
        }
        if (!response.resultsByTopicV3AndBelow().isEmpty()) {
            return;
        }
        counter.count(response.errorCode());
        for (AddPartitionsToTxnResult transaction : response.resultsByTransaction()) {
            for (AddPartitionsToTxnTopicResult topic : transaction.topicResults()) {
                countPartitions(topic, counter);
            }
        }
    }

    private static void countPartitions(AddPartitionsToTxnTopicResult topic, ErrorCounter counter) {
        for (AddPartitionsToTxnPartitionResult partition : topic.resultsByPartition()) {
            counter.count(partition.partitionErrorCode());
        }
    }
}
