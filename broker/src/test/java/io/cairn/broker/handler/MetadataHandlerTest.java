package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.quota.ClientQuotas;
import io.cairn.broker.quota.ControllerMutationQuotaManager;
import io.cairn.log.Time;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.ClientQuotaEntity;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.MetadataRequestData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.message.MetadataRequestData.MetadataRequestTopic;
import io.cairn.wire.message.MetadataResponseData;
import io.cairn.wire.message.MetadataResponseData.MetadataResponsePartition;
import io.cairn.wire.message.MetadataResponseData.MetadataResponseTopic;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetadataHandlerTest {

    @TempDir
    static Path dir;
    private static MetadataFixture fixture;
    private static Uuid ordersId;

    @BeforeAll
    static void startMetadata() throws Exception {
        fixture = MetadataFixture.start(dir);
        ordersId = fixture.createTopic("orders", 3);
    }

    @AfterAll
    static void stopMetadata() {
        fixture.close();
    }

    private static MetadataHandler handler(boolean autoCreate) {
        return new MetadataHandler(fixture.node(), new AutoTopicCreation(autoCreate, 2, (short) 1, 2, (short) 1));
    }

    private static MetadataResponseData handle(MetadataHandler handler, int version, MetadataRequestData request)
            throws Exception {
        return handler.handle(context(ApiKey.METADATA, version), request).toCompletableFuture().get(10,
                TimeUnit.SECONDS);
    }

    private static MetadataRequestData byName(String... names) {
        List<MetadataRequestTopic> topics = new ArrayList<>();
        for (String name : names) {
            topics.add(new MetadataRequestTopic().setName(name));
        }
        return new MetadataRequestData().setTopics(topics).setAllowAutoTopicCreation(true);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
    void everyVersionDescribesTheBrokerClusterAndAKnownTopicAndSurvivesTheWire(int version) throws Exception {
        // Given
        MetadataRequestData request = byName("orders");

        // When
        MetadataResponseData response = (MetadataResponseData) MetadataFixture.roundTrip(
                handle(handler(false), version, request), ApiKey.METADATA, version, true);

        // Then
        assertThat(response.brokers()).hasSize(1);
        assertThat(response.brokers().get(0).nodeId()).isEqualTo(1);
        assertThat(response.brokers().get(0).host()).isEqualTo("localhost");
        assertThat(response.brokers().get(0).port()).isEqualTo(9092);
        assertThat(response.brokers().get(0).rack()).isEqualTo(version >= 1 ? "rack-a" : null);
        assertThat(response.clusterId()).isEqualTo(version >= 2 ? fixture.node().clusterId() : null);
        assertThat(response.controllerId()).isEqualTo(version >= 1 ? 1 : -1);
        MetadataResponseTopic topic = response.topics().get(0);
        assertThat(topic.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(topic.name()).isEqualTo("orders");
        assertThat(topic.topicId()).isEqualTo(version >= 10 ? ordersId : Uuid.ZERO);
        assertThat(topic.topicAuthorizedOperations()).isEqualTo(Integer.MIN_VALUE);
        assertThat(topic.partitions()).extracting(MetadataResponsePartition::partitionIndex).containsExactly(0, 1, 2);
        for (MetadataResponsePartition partition : topic.partitions()) {
            assertThat(partition.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(partition.leaderId()).isEqualTo(1);
            assertThat(partition.leaderEpoch()).isEqualTo(version >= 7 ? 0 : -1);
            assertThat(partition.replicaNodes()).containsExactly(1);
            assertThat(partition.isrNodes()).containsExactly(1);
            assertThat(partition.offlineReplicas()).isEmpty();
        }
    }

    @Test
    void nullTopicsMeanAllTopicsAndAnEmptyListMeansAllOnlyInV0() throws Exception {
        // When
        MetadataResponseData all = handle(handler(false), 12, new MetadataRequestData().setTopics(null));
        MetadataResponseData none = handle(handler(false), 12, new MetadataRequestData());
        MetadataResponseData allV0 = handle(handler(false), 0, new MetadataRequestData());

        // Then
        assertThat(all.topics()).extracting(MetadataResponseTopic::name).contains("orders");
        assertThat(none.topics()).isEmpty();
        assertThat(allV0.topics()).extracting(MetadataResponseTopic::name).contains("orders");
    }

    @Test
    void unknownTopicsAreUnknownWhenAutoCreationIsOffAndIllegalNamesAreInvalid() throws Exception {
        // When
        MetadataResponseData response = handle(handler(false), 12, byName("missing", "bad name!"));

        // Then
        assertThat(response.topics()).extracting(MetadataResponseTopic::name, MetadataResponseTopic::errorCode)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("missing",
                                Errors.UNKNOWN_TOPIC_OR_PARTITION.code()),
                        org.assertj.core.groups.Tuple.tuple("bad name!", Errors.INVALID_TOPIC_EXCEPTION.code()));
        assertThat(fixture.node().currentImage().topic("missing")).isEmpty();
    }

    @Test
    void unknownTopicsAreAutoCreatedWithLeaderNotAvailableFirst() throws Exception {
        // When
        MetadataResponseData first = handle(handler(true), 9, byName("auto-created"));

        // Then
        assertThat(first.topics().get(0).errorCode()).isEqualTo(Errors.LEADER_NOT_AVAILABLE.code());
        assertThat(first.topics().get(0).partitions()).isEmpty();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            MetadataResponseData later = handle(handler(true), 9, byName("auto-created"));
            assertThat(later.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(later.topics().get(0).partitions()).hasSize(1);
        });
    }

    @Test
    void autoCreatedPartitionsCountAgainstTheClientsControllerMutationQuota() throws Exception {
        // Given: client id "auto-mutator" may mutate 1 partition per second (a burst of 11: 11 samples of 1 s)
        ClientQuotas quotas = new ClientQuotas(2, 1, 11, 1, Time.SYSTEM);
        quotas.load(new MetadataImage(1L, "c", 1, 1L, Map.of(), Map.of(), Map.of(), Map.of(), 0L, 0L, Map.of(),
                Map.of(), Map.of(), Map.of(ClientQuotaEntity.of(ClientQuotaEntity.CLIENT_ID, "auto-mutator"),
                        Map.of(ControllerMutationQuotaManager.KEY, 1.0))));
        fixture.node().useControllerMutationQuotas(quotas.controllerMutation());
        String[] names = new String[20];
        for (int i = 0; i < names.length; i++) {
            names[i] = "auto-quota-" + i;
        }
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(ApiKey.METADATA.id())
                .setRequestApiVersion((short) 12).setCorrelationId(1).setClientId("auto-mutator");

        // When: one Metadata request of that client auto-creates 20 topics of 1 partition
        handler(true).handle(new RequestContext(header, ApiKey.METADATA, new ClientConnection("c", "PLAINTEXT",
                null)), byName(names)).toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then: strict, as the controller counts a CreateTopics v7 in an envelope naming the client: topics are taken
        // while credits remain (11 → -1 after the 12th), the other 8 are refused and not created (one command: its
        // topics appear together)
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(fixture.node().currentImage()
                .topic(names[11])).isPresent());
        for (int i = 0; i < names.length; i++) {
            assertThat(fixture.node().currentImage().topic(names[i]).isPresent()).as(names[i]).isEqualTo(i < 12);
        }
    }

    @Test
    void theRequestCanForbidAutoCreation() throws Exception {
        // When
        MetadataResponseData response = handle(handler(true), 9, byName("not-auto").setAllowAutoTopicCreation(false));

        // Then
        assertThat(response.topics().get(0).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
    }

    @Test
    void internalTopicsAreAutoCreatedWithTheCoordinatorSettingsAndFlaggedInternal() throws Exception {
        // When
        handle(handler(true), 9, byName("__consumer_offsets"));

        // Then
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            MetadataResponseTopic topic = handle(handler(true), 9, byName("__consumer_offsets")).topics().get(0);
            assertThat(topic.errorCode()).isEqualTo(Errors.NONE.code());
            assertThat(topic.isInternal()).isTrue();
            assertThat(topic.partitions()).hasSize(2);
        });
        assertThat(fixture.node().currentImage().configs(io.cairn.metadata.image.ConfigResource
                .topic("__consumer_offsets"))).containsEntry("cleanup.policy", "compact");
    }

    @Test
    void topicsAreFoundByIdFromV12AndUnknownIdsAreReported() throws Exception {
        // Given
        Uuid unknown = new Uuid(12345, 678);
        MetadataRequestData request = new MetadataRequestData();
        request.topics().add(new MetadataRequestTopic().setTopicId(ordersId).setName(null));
        request.topics().add(new MetadataRequestTopic().setTopicId(unknown).setName(null));

        // When
        MetadataResponseData response = (MetadataResponseData) MetadataFixture.roundTrip(
                handle(handler(true), 12, request), ApiKey.METADATA, 12, true);

        // Then
        assertThat(response.topics()).hasSize(2);
        assertThat(response.topics().get(0).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_ID.code());
        assertThat(response.topics().get(0).name()).isNull();
        assertThat(response.topics().get(0).topicId()).isEqualTo(unknown);
        assertThat(response.topics().get(1).name()).isEqualTo("orders");
    }

    @Test
    void topicIdsBeforeV12AreAnInvalidRequest() throws Exception {
        // Given
        MetadataRequestData request = new MetadataRequestData();
        request.topics().add(new MetadataRequestTopic().setTopicId(ordersId).setName("orders"));

        // When
        MetadataResponseData response = handle(handler(false), 10, request);

        // Then
        assertThat(response.topics()).extracting(MetadataResponseTopic::errorCode)
                .containsExactly(Errors.INVALID_REQUEST.code());
        assertThat(response.brokers()).isEmpty();
    }

    @Test
    void aTopicWithNeitherNameNorIdIsAnInvalidRequestFromV12On() throws Exception {
        // Given (the NPE it once met logged an unexpected error and answered UNKNOWN_SERVER_ERROR)
        MetadataRequestData request = new MetadataRequestData();
        request.topics().add(new MetadataRequestTopic().setName("orders"));
        request.topics().add(new MetadataRequestTopic().setName(null));

        // When
        MetadataResponseData response = handle(handler(false), 13, request);

        // Then
        assertThat(response.topics()).extracting(MetadataResponseTopic::errorCode)
                .containsOnly(Errors.INVALID_REQUEST.code());
    }

    @Test
    void authorizedOperationsAreFilledOnlyWhenAsked() throws Exception {
        // When
        MetadataResponseData response = handle(handler(false), 10, byName("orders")
                .setIncludeTopicAuthorizedOperations(true).setIncludeClusterAuthorizedOperations(true));

        // Then
        assertThat(response.topics().get(0).topicAuthorizedOperations()).isEqualTo(3576);
        assertThat(response.clusterAuthorizedOperations()).isEqualTo(8096);
    }

    @Test
    void aListenerTheBrokerDoesNotAdvertiseShowsNoBrokerAndNoLeader() throws Exception {
        // When
        MetadataResponseData v9 = handler(false).handle(context(ApiKey.METADATA, 9, "OTHER"), byName("orders"))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        MetadataResponseData v5 = handler(false).handle(context(ApiKey.METADATA, 5, "OTHER"), byName("orders"))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then
        assertThat(v9.brokers()).isEmpty();
        assertThat(v9.controllerId()).isEqualTo(-1);
        MetadataResponsePartition partition = v9.topics().get(0).partitions().get(0);
        assertThat(partition.errorCode()).isEqualTo(Errors.LISTENER_NOT_FOUND.code());
        assertThat(partition.leaderId()).isEqualTo(-1);
        assertThat(partition.offlineReplicas()).containsExactly(1);
        assertThat(v5.topics().get(0).partitions().get(0).errorCode()).isEqualTo(Errors.LEADER_NOT_AVAILABLE.code());
    }

    @Test
    void theErrorResponseNamesEveryRequestedTopicAndFromV13CarriesTheTopLevelCode() {
        // When
        MetadataResponseData response = handler(false).errorResponse(context(ApiKey.METADATA, 13),
                byName("orders", "other"), Errors.UNKNOWN_SERVER_ERROR);

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.UNKNOWN_SERVER_ERROR.code());
        assertThat(response.topics()).extracting(MetadataResponseTopic::errorCode)
                .containsOnly(Errors.UNKNOWN_SERVER_ERROR.code());
    }

    @Test
    void withAnAuthorizerMetadataShowsOnlyDescribableTopicsWithTheCallersOperations() throws Exception {
        // Given: alice may read orders (which implies DESCRIBE) and nothing else
        fixture.createTopic("hidden", 1);
        RequestContext alice = MetadataFixture.securedContext(ApiKey.METADATA, 10, "alice",
                MetadataFixture.allow(AclResourceType.TOPIC, "orders", AclPatternType.LITERAL, "User:alice",
                        AclOperation.READ));

        // When
        MetadataResponseData all = handler(false).handle(alice, new MetadataRequestData().setTopics(null)
                .setIncludeTopicAuthorizedOperations(true).setIncludeClusterAuthorizedOperations(true))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);
        MetadataResponseData named = handler(true).handle(alice, byName("hidden", "not-yet"))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then
        assertThat(all.topics()).extracting(t -> t.name()).containsExactly("orders");
        assertThat(all.topics().get(0).topicAuthorizedOperations()).isEqualTo((1 << 3) | (1 << 8));
        assertThat(all.clusterAuthorizedOperations()).isZero();
        assertThat(named.topics()).extracting(t -> t.name() + ":" + Errors.forCode(t.errorCode()))
                .containsExactlyInAnyOrder("hidden:TOPIC_AUTHORIZATION_FAILED", "not-yet:TOPIC_AUTHORIZATION_FAILED");
        assertThat(fixture.node().currentImage().topic("not-yet")).isEmpty();
    }
}
