package io.cairn.broker.handler;

import io.cairn.broker.group.ClientInfo;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.GroupShard;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import io.cairn.wire.message.JoinGroupRequestData;
import io.cairn.wire.message.JoinGroupResponseData;
import io.cairn.wire.message.LeaveGroupRequestData;
import io.cairn.wire.message.LeaveGroupResponseData;
import io.cairn.wire.message.OffsetCommitRequestData;
import io.cairn.wire.message.OffsetCommitRequestData.OffsetCommitRequestPartition;
import io.cairn.wire.message.OffsetCommitRequestData.OffsetCommitRequestTopic;
import io.cairn.wire.message.OffsetCommitResponseData;
import io.cairn.wire.message.OffsetCommitResponseData.OffsetCommitResponsePartition;
import io.cairn.wire.message.OffsetCommitResponseData.OffsetCommitResponseTopic;
import io.cairn.wire.message.OffsetDeleteRequestData;
import io.cairn.wire.message.OffsetDeleteResponseData;
import io.cairn.wire.message.SyncGroupRequestData;
import io.cairn.wire.message.SyncGroupResponseData;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The APIs about one group (Kafka 4.1.1's versions): JoinGroup v0-v9, SyncGroup v0-v5, Heartbeat v0-v4 and
 * LeaveGroup v0-v5, served by the group's {@code ClassicGroupManager} (or, for a consumer group's members speaking
 * the classic protocol, its {@code ClassicProtocolMembers}), and OffsetCommit v2-v9, TxnOffsetCommit v0-v5
 * and OffsetDelete v0, served by its {@code OffsetManager} after the checks of the group, classic or consumer
 * ({@code GroupShard}), each on the group's coordinator shard, with Kafka's whole-request error responses. Stateless
 * factories.
 */
public final class GroupHandlers {

    private static final String UNKNOWN_MEMBER_ID = "";

    private GroupHandlers() {
    }

    public static ApiHandler<JoinGroupRequestData, JoinGroupResponseData> joinGroup(GroupCoordinator coordinator) {
        return new GroupApiHandler<>(ApiKey.JOIN_GROUP, 0, 9, coordinator, JoinGroupRequestData::groupId,
            GroupHandlers::join, (ctx, request, error) -> joinError(ctx.apiVersion(), error));
    }

    /** A classic JoinGroup, to the group of either type ({@link GroupShard#joinGroup}). */
    private static CompletableFuture<JoinGroupResponseData> join(GroupShard shard, RequestContext ctx,
                                                                 JoinGroupRequestData request) {
        return shard.joinGroup(clientInfo(ctx), request, ctx.apiVersion());
    }

    /** Kafka's JoinGroupRequest.getErrorResponse. */
    static JoinGroupResponseData joinError(short version, Errors error) {
        return new JoinGroupResponseData().setThrottleTimeMs(0).setErrorCode(error.code()).setGenerationId(-1)
            .setProtocolType(null).setProtocolName(version >= 7 ? null : "").setLeader(UNKNOWN_MEMBER_ID)
            .setMemberId(UNKNOWN_MEMBER_ID).setMembers(List.of());
    }

    public static ApiHandler<SyncGroupRequestData, SyncGroupResponseData> syncGroup(GroupCoordinator coordinator) {
        return new GroupApiHandler<>(ApiKey.SYNC_GROUP, 0, 5, coordinator, SyncGroupRequestData::groupId,
            (shard, ctx, request) -> shard.syncGroup(request, ctx.apiVersion()),
            (ctx, request, error) -> new SyncGroupResponseData().setThrottleTimeMs(0).setErrorCode(error.code())
                .setProtocolType(null).setProtocolName(null).setAssignment(new byte[0]));
    }

    public static ApiHandler<HeartbeatRequestData, HeartbeatResponseData> heartbeat(GroupCoordinator coordinator) {
        return new GroupApiHandler<>(ApiKey.HEARTBEAT, 0, 4, coordinator, HeartbeatRequestData::groupId,
            (shard, ctx, request) -> shard.heartbeat(request, ctx.apiVersion()),
            (ctx, request, error) -> new HeartbeatResponseData().setThrottleTimeMs(0).setErrorCode(error.code()));
    }

    public static ApiHandler<LeaveGroupRequestData, LeaveGroupResponseData> leaveGroup(GroupCoordinator coordinator) {
        return new GroupApiHandler<>(ApiKey.LEAVE_GROUP, 0, 5, coordinator, LeaveGroupRequestData::groupId,
            (shard, ctx, request) -> shard.leaveGroup(request, ctx.apiVersion()),
            (ctx, request, error) -> new LeaveGroupResponseData().setThrottleTimeMs(0).setErrorCode(error.code()));
    }

    public static ApiHandler<OffsetCommitRequestData, OffsetCommitResponseData> offsetCommit(
            GroupCoordinator coordinator, MetadataNode metadata) {
        return new GroupApiHandler<>(ApiKey.OFFSET_COMMIT, 2, 9, coordinator, OffsetCommitRequestData::groupId,
            (shard, ctx, request) -> {
                // Kafka's handleOffsetCommitRequest: topics the caller may not READ answer TOPIC_AUTHORIZATION_FAILED
                // and are not committed.
                List<OffsetCommitRequestTopic> unreadable = new ArrayList<>();
                List<OffsetCommitRequestTopic> readable = new ArrayList<>();
                for (OffsetCommitRequestTopic topic : request.topics()) {
                    (ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic.name()) ? readable : unreadable)
                        .add(topic);
                }
                OffsetCommitRequestData authorized = unreadable.isEmpty() ? request : new OffsetCommitRequestData()
                    .setGroupId(request.groupId()).setGenerationIdOrMemberEpoch(request.generationIdOrMemberEpoch())
                    .setMemberId(request.memberId()).setGroupInstanceId(request.groupInstanceId())
                    .setRetentionTimeMs(request.retentionTimeMs()).setTopics(readable);
                Errors validation = shard.validateOffsetCommit(request.groupId(),
                    request.generationIdOrMemberEpoch(), request.memberId(), request.groupInstanceId(),
                    ctx.apiVersion());
                CompletableFuture<OffsetCommitResponseData> committed = shard.offsets().commit(authorized,
                    ctx.apiVersion(), validation, (topic, partition) -> metadata.currentImage().topic(topic)
                        .map(t -> !t.partitions().containsKey(partition)).orElse(true));
                if (unreadable.isEmpty()) {
                    return committed;
                }
                OffsetCommitResponseData refused = offsetCommitError(
                    new OffsetCommitRequestData().setTopics(unreadable), Errors.TOPIC_AUTHORIZATION_FAILED);
                return committed.thenApply(response -> {
                    List<OffsetCommitResponseTopic> all = new ArrayList<>(response.topics());
                    all.addAll(refused.topics());
                    return response.setTopics(all);
                });
            },
            (ctx, request, error) -> offsetCommitError(request, error));
    }

    /** Kafka's OffsetCommitRequest.getErrorResponse: every partition carries the error. */
    static OffsetCommitResponseData offsetCommitError(OffsetCommitRequestData request, Errors error) {
        OffsetCommitResponseData response = new OffsetCommitResponseData().setThrottleTimeMs(0);
        for (OffsetCommitRequestTopic topic : request.topics()) {
            OffsetCommitResponseTopic result = new OffsetCommitResponseTopic().setName(topic.name())
                .setTopicId(topic.topicId());
            for (OffsetCommitRequestPartition p : topic.partitions()) {
                result.partitions().add(new OffsetCommitResponsePartition().setPartitionIndex(p.partitionIndex())
                    .setErrorCode(error.code()));
            }
            response.topics().add(result);
        }
        return response;
    }

    /**
     * TxnOffsetCommit v0-v5: the group's KIP-447 checks ({@code GroupShard.validateTxnOffsetCommit}), then
     * a transactional write of the producer's offsets, visible after its COMMIT marker. Partitions of unknown topics
     * get UNKNOWN_TOPIC_OR_PARTITION, as Kafka's KafkaApis filters them.
     */
    public static ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> txnOffsetCommit(
            GroupCoordinator coordinator, MetadataNode metadata) {
        return new GroupApiHandler<>(ApiKey.TXN_OFFSET_COMMIT, 0, 5, coordinator, TxnOffsetCommitRequestData::groupId,
            (shard, ctx, request) -> commitTxnOffsets(shard, request, metadata, null),
            (ctx, request, error) -> txnOffsetCommitError(request, error));
    }

    /**
     * On the group's shard: the KIP-447 checks, then the transactional write, carrying {@code verification} (the
     * guard of the offsets partition's transaction verification; null: none).
     */
    static CompletableFuture<TxnOffsetCommitResponseData> commitTxnOffsets(GroupShard shard,
            TxnOffsetCommitRequestData request, MetadataNode metadata, VerificationGuard verification) {
        Errors validation = shard.validateTxnOffsetCommit(request.groupId(), request.generationId(),
            request.memberId(), request.groupInstanceId());
        return shard.offsets().commitTransactional(request, validation,
            (topic, partition) -> metadata.currentImage().topic(topic)
                .map(t -> !t.partitions().containsKey(partition)).orElse(true), verification);
    }

    /**
     * TxnOffsetCommit v0-v5 verified by {@code verifier} before the write (KIP-890, {@link TxnOffsetCommitHandler}):
     * v5 adds the group's offsets partition to the producer's transaction, v0-v4 verify it when
     * transaction.partition.verification.enable is on.
     */
    public static ApiHandler<TxnOffsetCommitRequestData, TxnOffsetCommitResponseData> txnOffsetCommit(
            GroupCoordinator coordinator, MetadataNode metadata, TransactionVerifier verifier) {
        return new TxnOffsetCommitHandler(txnOffsetCommit(coordinator, metadata), coordinator,
            (request, guard) -> coordinator.call(request.groupId(),
                shard -> commitTxnOffsets(shard, request, metadata, guard)), verifier);
    }

    /** Kafka's TxnOffsetCommitRequest.getErrorResponse: every partition carries the error. */
    static TxnOffsetCommitResponseData txnOffsetCommitError(TxnOffsetCommitRequestData request, Errors error) {
        TxnOffsetCommitResponseData response = new TxnOffsetCommitResponseData().setThrottleTimeMs(0);
        for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic topic : request.topics()) {
            TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic result =
                new TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic().setName(topic.name());
            for (TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition p : topic.partitions()) {
                result.partitions().add(new TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition()
                    .setPartitionIndex(p.partitionIndex()).setErrorCode(error.code()));
            }
            response.topics().add(result);
        }
        return response;
    }

    public static ApiHandler<OffsetDeleteRequestData, OffsetDeleteResponseData> offsetDelete(
            GroupCoordinator coordinator) {
        return new GroupApiHandler<>(ApiKey.OFFSET_DELETE, 0, 0, coordinator, OffsetDeleteRequestData::groupId,
            GroupHandlers::deleteOffsets,
            (ctx, request, error) -> new OffsetDeleteResponseData().setThrottleTimeMs(0).setErrorCode(error.code()));
    }

    /**
     * Kafka's deleteOffsets: a group that does not exist is GROUP_ID_NOT_FOUND and a non-empty group of another
     * protocol NON_EMPTY_GROUP, for the whole request; a topic the group subscribes to is GROUP_SUBSCRIBED_TO_TOPIC
     * for its partitions; the others lose their committed offsets.
     */
    private static CompletableFuture<OffsetDeleteResponseData> deleteOffsets(GroupShard shard, RequestContext ctx,
                                                                           OffsetDeleteRequestData request) {
        // Kafka's handleOffsetDeleteRequest: topics the caller may not READ answer TOPIC_AUTHORIZATION_FAILED.
        List<OffsetDeleteRequestData.OffsetDeleteRequestTopic> readable = new ArrayList<>();
        List<OffsetDeleteResponseData.OffsetDeleteResponseTopic> refused = new ArrayList<>();
        for (OffsetDeleteRequestData.OffsetDeleteRequestTopic topic : request.topics()) {
            if (ctx.authorize(AclOperation.READ, AclResourceType.TOPIC, topic.name())) {
                readable.add(topic);
            } else {
                OffsetDeleteResponseData.OffsetDeleteResponseTopic result =
                    new OffsetDeleteResponseData.OffsetDeleteResponseTopic().setName(topic.name());
                topic.partitions().forEach(p -> result.partitions().add(
                    new OffsetDeleteResponseData.OffsetDeleteResponsePartition().setPartitionIndex(p.partitionIndex())
                        .setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())));
                refused.add(result);
            }
        }
        if (refused.isEmpty()) {
            return deleteReadableOffsets(shard, request);
        }
        return deleteReadableOffsets(shard, new OffsetDeleteRequestData().setGroupId(request.groupId())
            .setTopics(readable)).thenApply(response -> {
                if (response.errorCode() == Errors.NONE.code()) {
                    List<OffsetDeleteResponseData.OffsetDeleteResponseTopic> all = new ArrayList<>(response.topics());
                    all.addAll(refused);
                    response.setTopics(all);
                }
                return response;
            });
    }

    private static CompletableFuture<OffsetDeleteResponseData> deleteReadableOffsets(GroupShard shard,
                                                                                   OffsetDeleteRequestData request) {
        String groupId = request.groupId();
        Errors groupError = shard.hasGroup(groupId) ? Errors.NONE : Errors.GROUP_ID_NOT_FOUND;
        for (OffsetDeleteRequestData.OffsetDeleteRequestTopic topic : request.topics()) {
            if (groupError != Errors.NONE) {
                break;
            }
            Errors error = shard.validateOffsetDelete(groupId, topic.name());
            if (error == Errors.GROUP_ID_NOT_FOUND || error == Errors.NON_EMPTY_GROUP) {
                groupError = error;
            }
        }
        if (groupError != Errors.NONE) {
            return CompletableFuture.completedFuture(new OffsetDeleteResponseData().setThrottleTimeMs(0)
                .setErrorCode(groupError.code()));
        }
        return shard.offsets().delete(request, shard::validateOffsetDelete);
    }

    /** The client id and host DescribeGroups reports for a member (Kafka prints the host as "/address"). */
    static ClientInfo clientInfo(RequestContext ctx) {
        String clientId = ctx.clientId() == null ? "" : ctx.clientId();
        SocketAddress remote = ctx.connection().remoteAddress();
        String host = remote instanceof InetSocketAddress
            ? "/" + ((InetSocketAddress) remote).getAddress().getHostAddress()
            : String.valueOf(remote);
        return new ClientInfo(clientId, host);
    }
}
