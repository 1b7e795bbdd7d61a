package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.group.GroupConfig;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.share.ShareCoordinator;
import io.cairn.broker.share.ShareCoordinatorConfig;
import io.cairn.broker.txn.TransactionConfig;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.log.Time;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FindCoordinatorRequestData;
import io.cairn.wire.message.FindCoordinatorResponseData;
import io.cairn.wire.message.ReadShareGroupStateRequestData;
import io.cairn.wire.message.ReadShareGroupStateResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * FindCoordinator share keys and the share state RPCs behind their handlers, on a real metadata node and real logs:
 * Kafka's version and key checks, CLUSTER_ACTION, the __share_group_state topic created on first use, and the
 * empty answer to a request without a group id.
 */
@Timeout(120)
class ShareCoordinatorHandlersTest {

    @TempDir
    Path dir;

    private PartitionsFixture fixture;
    private PartitionPurgatory purgatory;
    private GroupCoordinator groups;
    private TransactionCoordinator transactions;
    private ShareCoordinator shares;
    private FindCoordinatorHandler findCoordinator;

    @BeforeEach
    void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        purgatory = new PartitionPurgatory(fixture.replicaManager());
        groups = new GroupCoordinator(fixture.replicaManager(), fixture.metadata().node(),
            new GroupConfig(6_000, 300_000, 0, 10, 7L * 24 * 3_600_000, 600_000, 64),
            new CoordinatorRuntimeSettings(1, 0, 5_000L), 1, Time.SYSTEM, purgatory);
        transactions = new TransactionCoordinator(fixture.replicaManager(), fixture.metadata().node(), purgatory,
            TransactionConfig.defaults(), Time.SYSTEM, (id, producerId, epoch, commit, coordinatorEpoch,
                partitions) -> CompletableFuture.completedFuture(null),
            () -> CompletableFuture.failedFuture(new IllegalStateException("no producer ids here")));
        ShareCoordinatorConfig config = new ShareCoordinatorConfig(2, (short) 1, 1, 104_857_600, 500, 1 << 20,
            new CoordinatorRuntimeSettings(1, 0, 5_000L));
        shares = new ShareCoordinator(fixture.replicaManager(), fixture.metadata().node(), purgatory, config,
            Time.SYSTEM);
        shares.start();
        findCoordinator = new FindCoordinatorHandler(fixture.metadata().node(), groups, transactions, shares,
            new AutoTopicCreation(true, 1, (short) 1, 1, (short) 1, 1, 104_857_600, config));
    }

    @AfterEach
    void stop() {
        shares.close();
        transactions.close();
        groups.close();
        purgatory.close();
        fixture.close();
    }

    private static <S> S call(ApiHandler<?, ?> handler, ApiMessage request, RequestContext ctx) throws Exception {
        @SuppressWarnings("unchecked")
        ApiHandler<ApiMessage, ApiMessage> h = (ApiHandler<ApiMessage, ApiMessage>) handler;
        @SuppressWarnings("unchecked")
        S response = (S) h.handle(ctx, request).toCompletableFuture().get(30, TimeUnit.SECONDS);
        return response;
    }

    @Test
    void findCoordinatorChecksShareKeysAndCreatesTheStateTopic() throws Exception {
        String key = "g:" + new Uuid(1L, 2L) + ":0";
        FindCoordinatorRequestData request = new FindCoordinatorRequestData().setKeyType((byte) 2)
            .setCoordinatorKeys(List.of(key, "not-a-key"));

        FindCoordinatorResponseData v5 = call(findCoordinator, request,
            MetadataFixture.context(ApiKey.FIND_COORDINATOR, 5));
        assertThat(v5.coordinators()).as("share keys need v6").allMatch(c ->
            c.errorCode() == Errors.INVALID_REQUEST.code());

        FindCoordinatorResponseData denied = call(findCoordinator, request,
            MetadataFixture.securedContext(ApiKey.FIND_COORDINATOR, 6, "alice"));
        assertThat(denied.coordinators()).hasSize(2).allMatch(c ->
            c.errorCode() == Errors.CLUSTER_AUTHORIZATION_FAILED.code());

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            FindCoordinatorResponseData found = call(findCoordinator, request,
                MetadataFixture.securedContext(ApiKey.FIND_COORDINATOR, 6, "broker", MetadataFixture.allow(
                    AclResourceType.CLUSTER, AclResourceType.CLUSTER_NAME, AclPatternType.LITERAL, "User:broker",
                    AclOperation.CLUSTER_ACTION)));
            assertThat(found.coordinators().get(0).key()).isEqualTo(key);
            assertThat(found.coordinators().get(0).errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(found.coordinators().get(1).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        });
        assertThat(fixture.metadata().node().currentImage().topic(ShareCoordinator.TOPIC)).hasValueSatisfying(t ->
            assertThat(t.partitions()).hasSize(2));
    }

    @Test
    void theStateRpcsNeedClusterActionAndAnswerNothingWithoutAGroupId() throws Exception {
        ApiHandler<ReadShareGroupStateRequestData, ReadShareGroupStateResponseData> read =
            ClusterAuthorizedHandler.requiring(AclOperation.CLUSTER_ACTION, new ReadShareGroupStateHandler(shares));
        ReadShareGroupStateRequestData request = new ReadShareGroupStateRequestData().setGroupId("g")
            .setTopics(List.of(new ReadShareGroupStateRequestData.ReadStateData().setTopicId(new Uuid(1L, 2L))
                .setPartitions(List.of(new ReadShareGroupStateRequestData.PartitionData().setPartition(0),
                    new ReadShareGroupStateRequestData.PartitionData().setPartition(1)))));

        ReadShareGroupStateResponseData denied = call(read, request,
            MetadataFixture.securedContext(ApiKey.READ_SHARE_GROUP_STATE, 0, "alice"));
        assertThat(denied.results()).singleElement().satisfies(t -> assertThat(t.partitions()).hasSize(2)
            .allMatch(p -> p.errorCode() == Errors.CLUSTER_AUTHORIZATION_FAILED.code()
                && Errors.CLUSTER_AUTHORIZATION_FAILED.message().equals(p.errorMessage())));

        ReadShareGroupStateResponseData noGroup = call(read, request.setGroupId(""),
            MetadataFixture.context(ApiKey.READ_SHARE_GROUP_STATE, 0));
        assertThat(noGroup.results()).as("Kafka answers an empty group id with no results").isEmpty();

        ReadShareGroupStateResponseData noTopic = call(read, new ReadShareGroupStateRequestData().setGroupId("g"),
            MetadataFixture.context(ApiKey.READ_SHARE_GROUP_STATE, 0));
        assertThat(noTopic.results()).isEmpty();
    }
}
