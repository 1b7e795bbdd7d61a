package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.isr.EpochEndOffset;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.OffsetForLeaderEpochRequestData;
import io.cairn.wire.message.OffsetForLeaderEpochRequestData.OffsetForLeaderPartition;
import io.cairn.wire.message.OffsetForLeaderEpochRequestData.OffsetForLeaderTopic;
import io.cairn.wire.message.OffsetForLeaderEpochResponseData;
import io.cairn.wire.message.OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult;
import java.util.concurrent.CompletionStage;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * OffsetForLeaderEpoch v2-v4 (every version Kafka 4.1.1 serves), as Kafka's
 * {@code ReplicaManager.lastOffsetForLeaderEpoch}: for each partition, the largest leader epoch at most the one
 * asked for and the offset where it ends, from the leader's epoch history. Consumers validate their position with
 * it after a leader change (KIP-320), followers find where to truncate. The leader answers for everyone (the
 * {@code replica_id} of v3+ only matters for authorization): {@code current_leader_epoch} older than the leader's
 * is FENCED_LEADER_EPOCH, newer is UNKNOWN_LEADER_EPOCH, a partition this broker does not lead is
 * NOT_LEADER_OR_FOLLOWER, one the cluster does not have UNKNOWN_TOPIC_OR_PARTITION; an epoch the history cannot
 * place is answered with epoch -1 and offset -1 and no error. Immutable, thread-safe, never blocks (the epoch
 * history is in memory).
 */
public final class OffsetForLeaderEpochHandler
        implements ApiHandler<OffsetForLeaderEpochRequestData, OffsetForLeaderEpochResponseData> {

    private static final Logger LOGGER = LogManager.getLogger(OffsetForLeaderEpochHandler.class);

    private final ReplicaManager replicaManager;

    public OffsetForLeaderEpochHandler(ReplicaManager replicaManager) {
        this.replicaManager = replicaManager;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.OFFSET_FOR_LEADER_EPOCH;
    }

    @Override
    public short minVersion() {
        return 2;
    }

    @Override
    public short maxVersion() {
        return 4;
    }

    @Override
    public CompletionStage<OffsetForLeaderEpochResponseData> handle(RequestContext ctx,
            OffsetForLeaderEpochRequestData request) {
        OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData().setThrottleTimeMs(0);
        // Kafka: followers with CLUSTER_ACTION may ask about any topic, others about the topics they may DESCRIBE.
        boolean clusterAction = ctx.authorizeCluster(AclOperation.CLUSTER_ACTION);
        for (OffsetForLeaderTopic topic : request.topics()) {
            OffsetForLeaderTopicResult result = new OffsetForLeaderTopicResult().setTopic(topic.topic());
            boolean authorized = clusterAction
                    || ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, topic.topic());
            for (OffsetForLeaderPartition p : topic.partitions()) {
                result.partitions().add(authorized ? endOffset(new TopicPartition(topic.topic(), p.partition()), p)
                        : undefined(p.partition()).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code()));
            }
            response.topics().add(result);
        }
        return completedFuture(response);
    }

    private OffsetForLeaderEpochResponseData.EpochEndOffset endOffset(TopicPartition tp, OffsetForLeaderPartition p) {
        OffsetForLeaderEpochResponseData.EpochEndOffset answer = undefined(p.partition());
        try {
            Partition partition = replicaManager.partition(tp)
                    .orElseGet(() -> replicaManager.leaderPartition(tp));
            EpochEndOffset found = partition.lastOffsetForLeaderEpoch(p.currentLeaderEpoch(), p.leaderEpoch(), true);
            return answer.setErrorCode(Errors.NONE.code()).setLeaderEpoch(found.leaderEpoch())
                    .setEndOffset(found.endOffset());
        } catch (RuntimeException e) {
            Errors error = Errors.forException(e);
            if (error == Errors.UNKNOWN_SERVER_ERROR) {
                LOGGER.error("Error while responding to OffsetForLeaderEpoch for {}", tp, e);
            } else if (LOGGER.isDebugEnabled()) {
                LOGGER.debug("OffsetForLeaderEpoch for {} failed: {}", tp, e.getMessage());
            }
            return answer.setErrorCode(error.code());
        }
    }

    private static OffsetForLeaderEpochResponseData.EpochEndOffset undefined(int partition) {
        return new OffsetForLeaderEpochResponseData.EpochEndOffset().setPartition(partition)
                .setLeaderEpoch(EpochEndOffset.UNDEFINED_EPOCH).setEndOffset(EpochEndOffset.UNDEFINED_EPOCH_OFFSET);
    }

    @Override
    public OffsetForLeaderEpochResponseData errorResponse(RequestContext ctx, OffsetForLeaderEpochRequestData request,
            Errors error) {
        OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData().setThrottleTimeMs(0);
        for (OffsetForLeaderTopic topic : request.topics()) {
            OffsetForLeaderTopicResult result = new OffsetForLeaderTopicResult().setTopic(topic.topic());
            topic.partitions().forEach(p -> result.partitions().add(undefined(p.partition())
                    .setErrorCode(error.code())));
            response.topics().add(result);
        }
        return response;
    }
}
