package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableReplicaAssignment;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopic;
import io.cairn.wire.message.CreateTopicsRequestData.CreatableTopicConfig;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.CreateTopicsResponseData.CreatableTopicConfigs;
import io.cairn.wire.message.CreateTopicsResponseData.CreatableTopicResult;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.DeleteTopicsRequestData.DeleteTopicState;
import io.cairn.wire.message.DeleteTopicsResponseData;
import io.cairn.wire.message.DeleteTopicsResponseData.DeletableTopicResult;
import io.cairn.wire.message.DescribeConfigsRequestData;
import io.cairn.wire.message.DescribeConfigsResponseData;
import io.cairn.wire.message.DescribeTopicPartitionsRequestData;
import io.cairn.wire.message.DescribeTopicPartitionsResponseData;
import io.cairn.wire.message.DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponsePartition;
import io.cairn.wire.message.DescribeTopicPartitionsResponseData.DescribeTopicPartitionsResponseTopic;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Path;
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

/** CreateTopics, DeleteTopics, DescribeTopicPartitions and DescribeConfigs against a real metadata node. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TopicAdminHandlersTest {

    @TempDir
    static Path dir;
    private static MetadataFixture fixture;

    @BeforeAll
    static void startMetadata() throws Exception {
        fixture = MetadataFixture.start(dir);
    }

    @AfterAll
    static void stopMetadata() {
        fixture.close();
    }

    private static CreateTopicsResponseData create(int version, CreateTopicsRequestData request) throws Exception {
        CreateTopicsResponseData response = new CreateTopicsHandler(fixture.node())
                .handle(context(ApiKey.CREATE_TOPICS, version), request).toCompletableFuture().get(10,
                        TimeUnit.SECONDS);
        return (CreateTopicsResponseData) MetadataFixture.roundTrip(response, ApiKey.CREATE_TOPICS, version, true);
    }

    private static DeleteTopicsResponseData delete(int version, DeleteTopicsRequestData request) throws Exception {
        DeleteTopicsResponseData response = new DeleteTopicsHandler(fixture.node())
                .handle(context(ApiKey.DELETE_TOPICS, version), request).toCompletableFuture().get(10,
                        TimeUnit.SECONDS);
        return (DeleteTopicsResponseData) MetadataFixture.roundTrip(response, ApiKey.DELETE_TOPICS, version, true);
    }

    private static DescribeTopicPartitionsResponseData describe(DescribeTopicPartitionsRequestData request)
            throws Exception {
        DescribeTopicPartitionsResponseData response = new DescribeTopicPartitionsHandler(fixture.node())
                .handle(context(ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        return (DescribeTopicPartitionsResponseData) MetadataFixture.roundTrip(response,
                ApiKey.DESCRIBE_TOPIC_PARTITIONS, 0, true);
    }

    private static CreateTopicsRequestData createRequest(CreatableTopic... topics) {
        return new CreateTopicsRequestData().setTopics(new ArrayList<>(List.of(topics))).setTimeoutMs(10_000);
    }

    private static CreatableTopic topic(String name, int partitions, int replication) {
        return new CreatableTopic().setName(name).setNumPartitions(partitions)
                .setReplicationFactor((short) replication);
    }

    @ParameterizedTest
    @ValueSource(ints = {2, 3, 4, 5, 6, 7})
    void everyCreateTopicsVersionCreatesATopicAndAnswersInItsShape(int version) throws Exception {
        // Given
        String name = "created-v" + version;
        CreatableTopic topic = topic(name, 2, -1);
        topic.configs().add(new CreatableTopicConfig().setName("retention.ms").setValue("1000"));

        // When
        CreatableTopicResult result = create(version, createRequest(topic)).topics().get(0);

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result.errorMessage()).isNull();
        Uuid id = fixture.node().currentImage().topic(name).orElseThrow().id();
        assertThat(result.topicId()).isEqualTo(version >= 7 ? id : Uuid.ZERO);
        assertThat(result.numPartitions()).isEqualTo(version >= 5 ? 2 : -1);
        assertThat(result.replicationFactor()).isEqualTo((short) (version >= 5 ? 1 : -1));
        if (version >= 5) {
            assertThat(result.configs()).filteredOn(c -> c.name().equals("retention.ms")).singleElement()
                    .satisfies(c -> {
                        assertThat(c.value()).isEqualTo("1000");
                        assertThat(c.configSource()).isEqualTo(TopicConfigDefaults.DYNAMIC_TOPIC_CONFIG);
                    });
            assertThat(result.configs()).extracting(CreatableTopicConfigs::name).contains("cleanup.policy");
        }
    }

    @Test
    void createTopicsReportsKafkasErrorsPerTopic() throws Exception {
        // Given
        fixture.createTopic("existing", 1);
        CreatableTopic badConfig = topic("bad-config", 1, 1);
        badConfig.configs().add(new CreatableTopicConfig().setName("no.such").setValue("1"));
        CreatableTopic badAssignment = new CreatableTopic().setName("bad-assignment").setNumPartitions(-1)
                .setReplicationFactor((short) -1);
        badAssignment.assignments().add(new CreatableReplicaAssignment().setPartitionIndex(0)
                .setBrokerIds(new ArrayList<>(List.of(1, 9))));

        // When
        CreateTopicsResponseData response = create(7, createRequest(topic("existing", 1, 1),
                topic("zero-partitions", 0, 1), topic("three-replicas", 1, 3), topic("bad name", 1, 1), badConfig,
                badAssignment));

        // Then
        assertThat(response.topics()).extracting(CreatableTopicResult::errorCode).containsExactly(
                Errors.TOPIC_ALREADY_EXISTS.code(), Errors.INVALID_PARTITIONS.code(),
                Errors.INVALID_REPLICATION_FACTOR.code(), Errors.INVALID_TOPIC_EXCEPTION.code(),
                Errors.INVALID_CONFIG.code(), Errors.INVALID_REPLICA_ASSIGNMENT.code());
        assertThat(response.topics().get(0).errorMessage()).isEqualTo("Topic 'existing' already exists.");
        assertThat(response.topics().get(4).errorMessage()).isEqualTo("Unknown topic config name: no.such");
        assertThat(response.topics()).allSatisfy(t -> {
            assertThat(t.topicId()).isEqualTo(Uuid.ZERO);
            assertThat(t.numPartitions()).isEqualTo(-1);
        });
    }

    @Test
    void validateOnlyAnswersLikeACreationButCreatesNothing() throws Exception {
        // When
        CreateTopicsResponseData response = create(7, createRequest(topic("only-validated", 4, 1))
                .setValidateOnly(true));

        // Then
        assertThat(response.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.topics().get(0).numPartitions()).isEqualTo(4);
        assertThat(fixture.node().currentImage().topic("only-validated")).isEmpty();
    }

    @Test
    void minusOneTakesTheBrokerDefaults() throws Exception {
        // When
        CreatableTopicResult result = create(7, createRequest(topic("defaults", -1, -1))).topics().get(0);

        // Then
        assertThat(result.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(result.numPartitions()).isEqualTo(1);
        assertThat(result.replicationFactor()).isEqualTo((short) 1);
    }

    @Test
    void deleteTopicsByNameBeforeV6AndUnknownNames() throws Exception {
        // Given
        fixture.createTopic("to-delete", 1);

        // When
        DeleteTopicsResponseData response = delete(5, new DeleteTopicsRequestData()
                .setTopicNames(new ArrayList<>(List.of("to-delete", "never-was"))).setTimeoutMs(10_000));

        // Then
        assertThat(response.responses()).extracting(DeletableTopicResult::name, DeletableTopicResult::errorCode)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("to-delete", Errors.NONE.code()),
                        org.assertj.core.groups.Tuple.tuple("never-was", Errors.UNKNOWN_TOPIC_OR_PARTITION.code()));
        assertThat(fixture.node().currentImage().topic("to-delete")).isEmpty();
    }

    @Test
    void deleteTopicsByIdInV6WithUnknownIdsAndMalformedEntries() throws Exception {
        // Given
        Uuid id = fixture.createTopic("delete-by-id", 1);
        Uuid unknown = new Uuid(99, 99);
        DeleteTopicsRequestData request = new DeleteTopicsRequestData().setTimeoutMs(10_000);
        request.topics().add(new DeleteTopicState().setName(null).setTopicId(id));
        request.topics().add(new DeleteTopicState().setName(null).setTopicId(unknown));
        request.topics().add(new DeleteTopicState().setName("x").setTopicId(new Uuid(5, 5)));
        request.topics().add(new DeleteTopicState().setName("dup"));
        request.topics().add(new DeleteTopicState().setName("dup"));

        // When
        DeleteTopicsResponseData response = delete(6, request);

        // Then
        assertThat(response.responses()).extracting(DeletableTopicResult::errorCode).containsExactly(
                Errors.NONE.code(), Errors.UNKNOWN_TOPIC_ID.code(), Errors.INVALID_REQUEST.code(),
                Errors.INVALID_REQUEST.code());
        assertThat(response.responses().get(0).name()).isEqualTo("delete-by-id");
        assertThat(response.responses().get(3).errorMessage()).isEqualTo("Duplicate topic name.");
        assertThat(fixture.node().currentImage().topic(id)).isEmpty();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3})
    void createPartitionsGrowsATopicAndReportsKafkasErrors(int version) throws Exception {
        // Given
        String name = "growing-v" + version;
        fixture.createTopic(name, 1);
        CreatePartitionsRequestData request = new CreatePartitionsRequestData().setTimeoutMs(10_000);
        request.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName(name).setCount(3)
                .setAssignments(null));
        request.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("nope").setCount(3)
                .setAssignments(null));
        request.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("twice").setCount(3)
                .setAssignments(null));
        request.topics().add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("twice").setCount(4)
                .setAssignments(null));

        // When
        CreatePartitionsResponseData response = new CreatePartitionsHandler(fixture.node())
                .handle(context(ApiKey.CREATE_PARTITIONS, version), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        response = (CreatePartitionsResponseData) MetadataFixture.roundTrip(response, ApiKey.CREATE_PARTITIONS,
                version, true);

        // Then
        assertThat(response.results()).extracting(r -> r.name(), r -> r.errorCode()).containsExactly(
                org.assertj.core.groups.Tuple.tuple(name, Errors.NONE.code()),
                org.assertj.core.groups.Tuple.tuple("nope", Errors.UNKNOWN_TOPIC_OR_PARTITION.code()),
                org.assertj.core.groups.Tuple.tuple("twice", Errors.INVALID_REQUEST.code()));
        assertThat(response.results().get(0).errorMessage()).isNull();
        assertThat(fixture.node().currentImage().topic(name).orElseThrow().partitions()).hasSize(3);
    }

    @Test
    void describeTopicPartitionsPagesWithTheLimitAndTheCursor() throws Exception {
        // Given
        fixture.createTopic("paged-a", 3);
        fixture.createTopic("paged-b", 2);
        DescribeTopicPartitionsRequestData request = new DescribeTopicPartitionsRequestData()
                .setResponsePartitionLimit(2);
        request.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName("paged-b"));
        request.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName("paged-a"));

        // When
        DescribeTopicPartitionsResponseData first = describe(request);
        DescribeTopicPartitionsResponseData second = describe(request.setCursor(
                new DescribeTopicPartitionsRequestData.Cursor().setTopicName("paged-a").setPartitionIndex(2)));

        // Then
        assertThat(first.topics()).extracting(DescribeTopicPartitionsResponseTopic::name).containsExactly("paged-a");
        assertThat(first.topics().get(0).partitions())
                .extracting(DescribeTopicPartitionsResponsePartition::partitionIndex).containsExactly(0, 1);
        assertThat(first.nextCursor().topicName()).isEqualTo("paged-a");
        assertThat(first.nextCursor().partitionIndex()).isEqualTo(2);
        assertThat(second.topics()).extracting(DescribeTopicPartitionsResponseTopic::name)
                .containsExactly("paged-a", "paged-b");
        assertThat(second.topics().get(0).partitions()).hasSize(1);
        assertThat(second.topics().get(1).partitions()).hasSize(1);
        assertThat(second.nextCursor().topicName()).isEqualTo("paged-b");
        assertThat(second.nextCursor().partitionIndex()).isEqualTo(1);
        DescribeTopicPartitionsResponsePartition partition = first.topics().get(0).partitions().get(0);
        assertThat(partition.leaderId()).isEqualTo(1);
        assertThat(partition.isrNodes()).containsExactly(1);
        assertThat(partition.eligibleLeaderReplicas()).isEmpty();
        assertThat(first.topics().get(0).topicAuthorizedOperations()).isEqualTo(ClusterView.TOPIC_OPERATIONS);
    }

    @Test
    void describeTopicPartitionsReportsUnknownTopicsAndACursorOutsideTheList() throws Exception {
        // Given
        DescribeTopicPartitionsRequestData request = new DescribeTopicPartitionsRequestData();
        request.topics().add(new DescribeTopicPartitionsRequestData.TopicRequest().setName("nowhere"));

        // When
        DescribeTopicPartitionsResponseData unknown = describe(request);
        DescribeTopicPartitionsResponseData badCursor = describe(request.setCursor(
                new DescribeTopicPartitionsRequestData.Cursor().setTopicName("elsewhere")));

        // Then
        assertThat(unknown.topics().get(0).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        assertThat(badCursor.topics().get(0).errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
    }

    @Test
    void describeConfigsListsDefaultsAndOverridesOfATopic() throws Exception {
        // Given
        CreatableTopic topic = topic("configured", 1, 1);
        topic.configs().add(new CreatableTopicConfig().setName("cleanup.policy").setValue("compact"));
        create(7, createRequest(topic));
        DescribeConfigsRequestData request = new DescribeConfigsRequestData().setIncludeSynonyms(true);
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2)
                .setResourceName("configured").setConfigurationKeys(null));
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2)
                .setResourceName("absent").setConfigurationKeys(null));
        DescribeConfigsHandler handler = new DescribeConfigsHandler(fixture.node(), 1, Map.of("num.io.threads", "8"),
                Map.of());

        // When
        DescribeConfigsResponseData response = handler.handle(context(ApiKey.DESCRIBE_CONFIGS, 4), request)
                .toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then
        DescribeConfigsResponseData.DescribeConfigsResult found = response.results().get(0);
        assertThat(found.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(found.configs()).filteredOn(c -> c.name().equals("cleanup.policy")).singleElement()
                .satisfies(c -> {
                    assertThat(c.value()).isEqualTo("compact");
                    assertThat(c.configSource()).isEqualTo(ConfigEntries.TOPIC_CONFIG);
                    assertThat(c.synonyms()).hasSize(2);
                });
        assertThat(found.configs()).filteredOn(c -> c.name().equals("retention.ms")).singleElement()
                .satisfies(c -> assertThat(c.configSource()).isEqualTo(ConfigEntries.DEFAULT_CONFIG));
        assertThat(response.results().get(1).errorCode()).isEqualTo(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
        MetadataFixture.roundTrip(response, ApiKey.DESCRIBE_CONFIGS, 1, true);
    }

    @Test
    void withAnAuthorizerCreateTopicsCreatesOnlyTheTopicsTheCallerMayCreate() throws Exception {
        // Given: alice may create topics named alice-*
        RequestContext alice = MetadataFixture.securedContext(ApiKey.CREATE_TOPICS, 7, "alice",
                MetadataFixture.allow(AclResourceType.TOPIC, "alice-", AclPatternType.PREFIXED, "User:alice",
                        AclOperation.CREATE));

        // When
        CreateTopicsResponseData response = new CreateTopicsHandler(fixture.node())
                .handle(alice, createRequest(topic("alice-orders", 1, 1), topic("bob-orders", 1, 1)))
                .toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then
        assertThat(response.topics()).extracting(t -> t.name() + ":" + Errors.forCode(t.errorCode()))
                .containsExactly("alice-orders:NONE", "bob-orders:TOPIC_AUTHORIZATION_FAILED");
        // CREATE does not imply DESCRIBE_CONFIGS: Kafka withholds the configs of the created topic
        assertThat(response.topics().get(0).configs()).isEmpty();
        assertThat(response.topics().get(0).topicConfigErrorCode())
                .isEqualTo(Errors.TOPIC_AUTHORIZATION_FAILED.code());
        assertThat(fixture.node().currentImage().topic("bob-orders")).isEmpty();
        MetadataFixture.roundTrip(response, ApiKey.CREATE_TOPICS, 7, true);
    }

    @Test
    void withAnAuthorizerDescribeConfigsRefusesWhatTheCallerMayNotDescribeAfterTheRest() throws Exception {
        // Given: alice may alter (so describe) the configs of topic alice-configs only
        create(7, createRequest(topic("alice-configs", 1, 1), topic("secret-configs", 1, 1)));
        RequestContext alice = MetadataFixture.securedContext(ApiKey.DESCRIBE_CONFIGS, 4, "alice",
                MetadataFixture.allow(AclResourceType.TOPIC, "alice-configs", AclPatternType.LITERAL, "User:alice",
                        AclOperation.ALTER_CONFIGS));
        DescribeConfigsRequestData request = new DescribeConfigsRequestData();
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 4)
                .setResourceName("1").setConfigurationKeys(null));
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2)
                .setResourceName("secret-configs").setConfigurationKeys(null));
        request.resources().add(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType((byte) 2)
                .setResourceName("alice-configs").setConfigurationKeys(null));

        // When
        DescribeConfigsResponseData response = new DescribeConfigsHandler(fixture.node(), 1, Map.of(), Map.of())
                .handle(alice, request).toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then
        assertThat(response.results()).extracting(r -> r.resourceName() + ":" + Errors.forCode(r.errorCode()))
                .containsExactly("alice-configs:NONE", "1:CLUSTER_AUTHORIZATION_FAILED",
                        "secret-configs:TOPIC_AUTHORIZATION_FAILED");
        assertThat(response.results().get(0).configs()).isNotEmpty();
        assertThat(response.results().get(2).configs()).isEmpty();
    }
}
