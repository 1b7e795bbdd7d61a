package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.fetch.FetchResponses;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.StandardAclAuthorizer;
import io.cairn.isr.ReplicationQuota;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterPartitionReassignmentsRequestData;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.Uuid;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fetches from a follower (broker 2, in the ISR of a partition broker 1 leads): it reads to the log end, its fetch
 * offset moves the high watermark, a diverged last fetched epoch gets the diverging epoch, a broker that is no
 * replica is refused, and a throttled follower outside the ISR gets no records while the leader's quota is exceeded.
 */
@ExtendWith(LeakDetection.class)
@Timeout(120)
class FetchFollowerTest {

    @TempDir
    Path dir;

    private FetchFixture fixture;
    private Uuid topicId;

    @BeforeEach
    void setUp() throws Exception {
        fixture = FetchFixture.start(dir);
        fixture.registerSecondBroker();
        topicId = fixture.createTopicOn("replicated", List.of(1, 2));
        fixture.append("replicated", 0, "a", 3);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private FetchRequestData followerRequest(int version, int replicaId, Uuid id, long offset) {
        FetchRequestData request = FetchFixture.request(version, "replicated", id, 0, offset, 0);
        if (version >= 15) {
            long epoch = fixture.metadata().node().currentImage().broker(replicaId).orElseThrow().epoch();
            request.replicaState().setReplicaId(replicaId).setReplicaEpoch(epoch);
        } else {
            request.setReplicaId(replicaId);
        }
        return request;
    }

    private FetchResponseData fetch(int version, FetchRequestData request) throws Exception {
        return fixture.fetch(version, request).get(30, TimeUnit.SECONDS);
    }

    private static PartitionData only(FetchResponseData response) {
        return response.responses().get(0).partitions().get(0);
    }

    /** A request context of principal {@code User:<user>} on a broker with the standard authorizer and no ACLs. */
    private static RequestContext securedContext(int version, String user, Set<String> superUsers) {
        StandardAclAuthorizer authorizer = new StandardAclAuthorizer(superUsers, false);
        authorizer.load(MetadataImage.EMPTY);
        ClientConnection connection = new ClientConnection("c", "PLAINTEXT",
                new InetSocketAddress("127.0.0.1", 40000));
        connection.authenticated(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user));
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(ApiKey.FETCH.id())
                .setRequestApiVersion((short) version).setCorrelationId(1).setClientId("test");
        return new RequestContext(header, ApiKey.FETCH, connection, authorizer);
    }

    @Test
    void aClientPosingAsAFollowerWithoutClusterActionGetsTopicAuthorizationFailedAndMovesNothing() throws Exception {
        // Given: an authorizer with no ACLs; mallory is no super user, the broker's own principal is
        RequestContext mallory = securedContext(14, "mallory", Set.of("User:broker"));
        RequestContext broker = securedContext(14, "broker", Set.of("User:broker"));

        // When
        FetchResponseData posing = fixture.handler().handle(mallory, followerRequest(14, 2, topicId, 3))
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
        long highWatermarkAfterPosing = fixture.partition("replicated", 0).highWatermark();
        FetchResponseData real = fixture.handler().handle(broker, followerRequest(14, 2, topicId, 0))
                .toCompletableFuture().get(30, TimeUnit.SECONDS);

        // Then: Kafka's answer to a follower fetch without CLUSTER_ACTION, on every partition
        try {
            assertThat(only(posing).errorCode()).isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED.code());
            assertThat(highWatermarkAfterPosing).isZero();
            assertThat(only(real).errorCode()).isEqualTo(Errors.NONE.code());
        } finally {
            fixture.handler().releaseResponse(posing);
            fixture.handler().releaseResponse(real);
        }
    }

    @Test
    void aConsumerWithoutReadOnTheTopicGetsTopicAuthorizationFailed() throws Exception {
        // Given
        RequestContext alice = securedContext(12, "alice", Set.of());

        // When
        FetchResponseData response = fixture.handler().handle(alice, FetchFixture.request(12, "replicated", topicId,
                0, 0, 0)).toCompletableFuture().get(30, TimeUnit.SECONDS);

        // Then
        try {
            assertThat(only(response).errorCode()).isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED.code());
        } finally {
            fixture.handler().releaseResponse(response);
        }
    }

    @Test
    void aFollowerReadsBeyondTheHighWatermarkAndItsNextFetchOffsetAdvancesIt() throws Exception {
        // Given
        PartitionData consumerBefore = only(fetch(12, FetchFixture.request(12, "replicated", topicId, 0, 0, 0)));
        FetchResponseData followerRead = fetch(14, followerRequest(14, 2, topicId, 0));

        // When
        FetchResponseData caughtUp = fetch(15, followerRequest(15, 2, topicId, 3));

        // Then
        try {
            assertThat(consumerBefore.highWatermark()).isZero();
            assertThat(consumerBefore.records().readableBytes()).isZero();
            assertThat(FetchFixture.values(only(followerRead))).containsExactly("a-0", "a-1", "a-2");
            assertThat(only(caughtUp).errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(fixture.partition("replicated", 0).highWatermark()).isEqualTo(3);
            FetchResponseData consumerAfter = fetch(12, FetchFixture.request(12, "replicated", topicId, 0, 0, 0));
            assertThat(FetchFixture.values(only(consumerAfter))).containsExactly("a-0", "a-1", "a-2");
            FetchResponses.release(consumerAfter);
        } finally {
            FetchResponses.release(followerRead);
            FetchResponses.release(caughtUp);
        }
    }

    @Test
    void aThrottledFollowerOutsideTheIsrGetsNoRecordsWhileTheLeadersQuotaIsExceeded() throws Exception {
        // Given: broker 2 is being added to a partition of broker 1 (a replica, not in the ISR); the partition is
        // throttled on the leader and the leader's quota already exceeded
        Uuid id = fixture.createTopicOn("throttled", List.of(1));
        fixture.append("throttled", 0, "t", 3);
        AlterPartitionReassignmentsRequestData reassign = new AlterPartitionReassignmentsRequestData()
                .setTimeoutMs(30_000);
        reassign.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName("throttled")
                .setPartitions(new ArrayList<>(List.of(new AlterPartitionReassignmentsRequestData
                        .ReassignablePartition().setPartitionIndex(0).setReplicas(List.of(1, 2))))));
        fixture.metadata().node().submit(reassign).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.partition("throttled", 0).registration()
                .replicas().contains(2));
        ReplicationQuota quota = fixture.replicas().leaderQuota();
        quota.updateThrottled("throttled", "0:1", 1);
        quota.updateBound(1);
        quota.record(1_000);
        FetchRequestData request = FetchFixture.request(15, "throttled", id, 0, 0, 0);
        request.replicaState().setReplicaId(2).setReplicaEpoch(fixture.metadata().node().currentImage().broker(2)
                .orElseThrow().epoch());

        // When
        FetchResponseData held = fetch(15, request);
        quota.updateBound(Long.MAX_VALUE);
        double rateBefore = quota.rate();
        FetchResponseData released = fetch(15, request);

        // Then
        try {
            assertThat(fixture.partition("throttled", 0).inSyncReplicaIds()).containsExactly(1);
            assertThat(only(held).errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(only(held).records().readableBytes()).isZero();
            assertThat(FetchFixture.values(only(released))).containsExactly("t-0", "t-1", "t-2");
            // the leader counts the bytes it sent (a rate over the quota's window, so compared, not a fixed figure)
            assertThat(quota.rate()).isGreaterThan(rateBefore);
        } finally {
            FetchResponses.release(held);
            FetchResponses.release(released);
        }
    }

    @Test
    void aFollowersWaitingFetchIsAnsweredWhenTheLeaderAppendsThoughTheHighWatermarkStays() throws Exception {
        // Given: the follower has everything (HW 3) and long-polls for more.
        FetchRequestData poll = followerRequest(15, 2, topicId, 3).setMaxWaitMs(60_000);
        CompletableFuture<FetchResponseData> waiting = fixture.fetch(15, poll);
        assertThat(waiting).isNotDone();
        assertThat(fixture.purgatory().pendingCount()).isEqualTo(1);

        // When: the leader's log end offset moves; the high watermark cannot until the follower fetches again.
        fixture.append("replicated", 0, "b", 2);

        // Then
        FetchResponseData response = waiting.get(10, TimeUnit.SECONDS);
        try {
            assertThat(FetchFixture.values(only(response))).containsExactly("b-0", "b-1");
            assertThat(only(response).highWatermark()).isEqualTo(3);
            assertThat(fixture.partition("replicated", 0).highWatermark()).isEqualTo(3);
            assertThat(fixture.purgatory().pendingCount()).isZero();
        } finally {
            FetchResponses.release(response);
        }
    }

    @Test
    void aFollowerWithRecordsBeyondTheLeadersEndOfItsLastEpochGetsTheDivergingEpoch() throws Exception {
        // Given
        int epoch = fixture.partition("replicated", 0).leaderEpoch();
        FetchRequestData request = followerRequest(13, 2, topicId, 5);
        request.topics().get(0).partitions().get(0).setLastFetchedEpoch(epoch);

        // When
        FetchResponseData response = fetch(13, request);

        // Then
        PartitionData partition = only(response);
        assertThat(partition.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(partition.divergingEpoch().epoch()).isEqualTo(epoch);
        assertThat(partition.divergingEpoch().endOffset()).isEqualTo(3);
        assertThat(partition.records().readableBytes()).isZero();
        assertThat(fixture.partition("replicated", 0).highWatermark()).isZero();
    }

    @Test
    void aLastFetchedEpochNewerThanTheLeadersHistoryIsOutOfRange() throws Exception {
        // Given
        int epoch = fixture.partition("replicated", 0).leaderEpoch();
        FetchRequestData request = followerRequest(13, 2, topicId, 3);
        request.topics().get(0).partitions().get(0).setLastFetchedEpoch(epoch + 5);

        // When
        FetchResponseData response = fetch(13, request);

        // Then
        assertThat(only(response).errorCode()).isEqualTo(Errors.OFFSET_OUT_OF_RANGE.code());
    }

    @Test
    void aFetchFromABrokerThatIsNoReplicaIsRefused() throws Exception {
        // When
        FetchResponseData response = fetch(12, followerRequest(12, 3, topicId, 0));

        // Then
        assertThat(only(response).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
    }

    @Test
    void aFollowerFetchOfAnEarlierBrokerEpochIsRefused() throws Exception {
        // Given a v15 fetch carrying an older epoch than broker 2's registration (KIP-903)
        FetchRequestData request = followerRequest(15, 2, topicId, 0);
        request.replicaState().setReplicaEpoch(request.replicaState().replicaEpoch() - 1);

        // When
        FetchResponseData response = fetch(15, request);

        // Then
        assertThat(only(response).errorCode()).isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER.code());
        assertThat(fixture.partition("replicated", 0).followerState(2).orElseThrow().brokerEpoch()).isEmpty();
    }
}
