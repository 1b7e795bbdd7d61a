package io.cairn.broker.handler;

import static java.util.concurrent.CompletableFuture.completedFuture;

import io.cairn.broker.group.ShareOffsetsCoordinator;
import io.cairn.broker.share.ShareGroupsGate;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeShareGroupOffsetsRequestData;
import io.cairn.wire.message.DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestGroup;
import io.cairn.wire.message.DescribeShareGroupOffsetsRequestData.DescribeShareGroupOffsetsRequestTopic;
import io.cairn.wire.message.DescribeShareGroupOffsetsResponseData;
import io.cairn.wire.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseGroup;
import io.cairn.wire.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponsePartition;
import io.cairn.wire.message.DescribeShareGroupOffsetsResponseData.DescribeShareGroupOffsetsResponseTopic;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * DescribeShareGroupOffsets v0 (KIP-932), as Kafka 4.1's KafkaApis: per group, UNSUPPORTED_VERSION while share groups
 * are disabled ({@link ShareGroupsGate}), GROUP_AUTHORIZATION_FAILED without DESCRIBE on the group; null topics
 * describe the group's initialized share-partitions (those of topics the caller may not describe left out), an empty
 * list nothing, and named topics their partitions (TOPIC_AUTHORIZATION_FAILED, start offset -1, for a topic the caller
 * may not describe). The start offsets come from the share coordinator ({@link ShareOffsetsCoordinator}); there is no
 * error for an unknown group, whose partitions have start offset -1. Immutable, thread-safe, never blocks.
 */
public final class DescribeShareGroupOffsetsHandler
        implements ApiHandler<DescribeShareGroupOffsetsRequestData, DescribeShareGroupOffsetsResponseData> {

    private final ShareOffsetsCoordinator offsets;
    private final ShareGroupsGate gate;

    public DescribeShareGroupOffsetsHandler(ShareOffsetsCoordinator offsets, ShareGroupsGate gate) {
        this.offsets = offsets;
        this.gate = gate;
    }

    @Override
    public ApiKey apiKey() {
        return ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS;
    }

    @Override
    public short minVersion() {
        return 0;
    }

    @Override
    public short maxVersion() {
        return 0;
    }

    @Override
    public CompletionStage<DescribeShareGroupOffsetsResponseData> handle(RequestContext ctx,
            DescribeShareGroupOffsetsRequestData request) {
        boolean enabled = gate.enabled();
        List<CompletableFuture<DescribeShareGroupOffsetsResponseGroup>> groups = new ArrayList<>();
        for (DescribeShareGroupOffsetsRequestGroup group : request.groups()) {
            groups.add(describe(ctx, group, enabled));
        }
        return CompletableFuture.allOf(groups.toArray(CompletableFuture[]::new)).thenApply(ignored -> {
            DescribeShareGroupOffsetsResponseData response = new DescribeShareGroupOffsetsResponseData()
                .setThrottleTimeMs(0);
            groups.forEach(g -> response.groups().add(g.join()));
            return response;
        });
    }

    private CompletableFuture<DescribeShareGroupOffsetsResponseGroup> describe(RequestContext ctx,
            DescribeShareGroupOffsetsRequestGroup group, boolean enabled) {
        String groupId = group.groupId();
        if (!enabled) {
            return completedFuture(new DescribeShareGroupOffsetsResponseGroup().setGroupId(groupId)
                .setErrorCode(Errors.UNSUPPORTED_VERSION.code()));
        }
        if (!ctx.authorize(AclOperation.DESCRIBE, AclResourceType.GROUP, groupId == null ? "" : groupId)) {
            return completedFuture(new DescribeShareGroupOffsetsResponseGroup().setGroupId(groupId)
                .setErrorCode(Errors.GROUP_AUTHORIZATION_FAILED.code()));
        }
        if (group.topics() == null) {
            return offsets.describe(groupId, null).thenApply(described -> {
                described.topics().removeIf(t ->
                    !ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, t.topicName()));
                return described;
            });
        }
        if (group.topics().isEmpty()) {
            return completedFuture(new DescribeShareGroupOffsetsResponseGroup().setGroupId(groupId));
        }
        List<DescribeShareGroupOffsetsRequestTopic> authorized = new ArrayList<>();
        List<DescribeShareGroupOffsetsResponseTopic> refused = new ArrayList<>();
        for (DescribeShareGroupOffsetsRequestTopic topic : group.topics()) {
            if (ctx.authorize(AclOperation.DESCRIBE, AclResourceType.TOPIC, topic.topicName())) {
                authorized.add(topic);
                continue;
            }
            DescribeShareGroupOffsetsResponseTopic answer = new DescribeShareGroupOffsetsResponseTopic()
                .setTopicName(topic.topicName()).setTopicId(Uuid.ZERO);
            topic.partitions().forEach(p -> answer.partitions().add(new DescribeShareGroupOffsetsResponsePartition()
                .setPartitionIndex(p).setStartOffset(-1L).setErrorCode(Errors.TOPIC_AUTHORIZATION_FAILED.code())
                .setErrorMessage(Errors.TOPIC_AUTHORIZATION_FAILED.message())));
            refused.add(answer);
        }
        return offsets.describe(groupId, authorized).thenApply(described -> {
            if (described.errorCode() == Errors.NONE.code()) {
                described.topics().addAll(refused);
            }
            return described;
        });
    }

    /** Kafka's DescribeShareGroupOffsetsResponse for an exception: every group with the error. */
    @Override
    public DescribeShareGroupOffsetsResponseData errorResponse(RequestContext ctx,
            DescribeShareGroupOffsetsRequestData request, Errors error) {
        DescribeShareGroupOffsetsResponseData response = new DescribeShareGroupOffsetsResponseData()
            .setThrottleTimeMs(0);
        request.groups().forEach(g -> response.groups().add(new DescribeShareGroupOffsetsResponseGroup()
            .setGroupId(g.groupId()).setErrorCode(error.code()).setErrorMessage(error.message())));
        return response;
    }
}
