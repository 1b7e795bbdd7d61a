package io.cairn.broker.handler;

import static io.cairn.broker.handler.MetadataFixture.context;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterClientQuotasRequestData;
import io.cairn.wire.message.AlterClientQuotasResponseData;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.DescribeClientQuotasRequestData;
import io.cairn.wire.message.DescribeClientQuotasResponseData;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** AlterClientQuotas forwarded to a real controller, DescribeClientQuotas from the image, both versions. */
class ClientQuotasHandlersTest {

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

    private static AlterClientQuotasRequestData.EntryData entry(String type, String name, String key, double value) {
        return new AlterClientQuotasRequestData.EntryData()
                .setEntity(new ArrayList<>(List.of(new AlterClientQuotasRequestData.EntityData().setEntityType(type)
                        .setEntityName(name))))
                .setOps(new ArrayList<>(List.of(new AlterClientQuotasRequestData.OpData().setKey(key)
                        .setValue(value))));
    }

    private static AlterClientQuotasResponseData alter(int version, AlterClientQuotasRequestData request)
            throws Exception {
        AlterClientQuotasResponseData response = new AlterClientQuotasHandler(fixture.node())
                .handle(context(ApiKey.ALTER_CLIENT_QUOTAS, version), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        return (AlterClientQuotasResponseData) MetadataFixture.roundTrip(response, ApiKey.ALTER_CLIENT_QUOTAS,
                version, true);
    }

    private static DescribeClientQuotasResponseData describe(int version, String type, String name)
            throws Exception {
        DescribeClientQuotasRequestData request = new DescribeClientQuotasRequestData().setStrict(true);
        request.components().add(new DescribeClientQuotasRequestData.ComponentData().setEntityType(type)
                .setMatchType((byte) 0).setMatch(name));
        DescribeClientQuotasResponseData response = new DescribeClientQuotasHandler(fixture.node())
                .handle(context(ApiKey.DESCRIBE_CLIENT_QUOTAS, version), request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        return (DescribeClientQuotasResponseData) MetadataFixture.roundTrip(response,
                ApiKey.DESCRIBE_CLIENT_QUOTAS, version, true);
    }

    @Test
    void aQuotaCommittedByTheControllerIsDescribedFromTheImageAtBothVersions() throws Exception {
        // Given
        AlterClientQuotasRequestData request = new AlterClientQuotasRequestData();
        request.entries().add(entry("user", "alice", "producer_byte_rate", 1024));
        request.entries().add(entry("user", "bob", "bogus", 1));

        // When
        AlterClientQuotasResponseData altered = alter(1, request);

        // Then
        assertThat(altered.entries()).extracting(e -> e.entity().get(0).entityName() + ":"
                + Errors.forCode(e.errorCode()) + ":" + e.errorMessage())
                .containsExactly("alice:NONE:null", "bob:INVALID_REQUEST:Invalid configuration key bogus");
        for (int version = 0; version <= 1; version++) {
            int v = version;
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(describe(v, "user", "alice")
                    .entries()).singleElement().satisfies(e -> assertThat(e.values()).singleElement()
                    .satisfies(value -> assertThat(value.key() + "=" + value.value())
                            .isEqualTo("producer_byte_rate=1024.0"))));
        }
        assertThat(describe(0, "user", "bob").entries()).isEmpty();
    }

    @Test
    void anEmptyAlterationAnswersWithoutTheController() throws Exception {
        // When
        AlterClientQuotasResponseData response = alter(0, new AlterClientQuotasRequestData());

        // Then
        assertThat(response.entries()).isEmpty();
    }

    @Test
    void moreEntitiesThanTheBoundAreRefusedWholeWithoutTheController() throws Exception {
        // Given
        AlterClientQuotasRequestData request = new AlterClientQuotasRequestData();
        for (int i = 0; i <= AlterClientQuotasHandler.MAX_ENTRIES; i++) {
            request.entries().add(entry("user", "u" + i, "producer_byte_rate", 1));
        }

        // When
        AlterClientQuotasResponseData response = alter(1, request);

        // Then
        assertThat(response.entries()).hasSize(AlterClientQuotasHandler.MAX_ENTRIES + 1)
                .allSatisfy(e -> assertThat(e.errorCode()).isEqualTo(Errors.POLICY_VIOLATION.code()));
        assertThat(describe(1, "user", "u0").entries()).isEmpty();
    }

    @Test
    void errorResponsesAreKafkas() {
        // Given
        AlterClientQuotasRequestData request = new AlterClientQuotasRequestData();
        request.entries().add(entry("client-id", null, "producer_byte_rate", 1));

        // When
        AlterClientQuotasResponseData altered = new AlterClientQuotasHandler(fixture.node()).errorResponse(
                context(ApiKey.ALTER_CLIENT_QUOTAS, 1), request, Errors.REQUEST_TIMED_OUT);
        DescribeClientQuotasResponseData described = new DescribeClientQuotasHandler(fixture.node()).errorResponse(
                context(ApiKey.DESCRIBE_CLIENT_QUOTAS, 1), new DescribeClientQuotasRequestData(),
                Errors.CLUSTER_AUTHORIZATION_FAILED);

        // Then
        assertThat(altered.entries()).singleElement().satisfies(e -> {
            assertThat(e.errorCode()).isEqualTo(Errors.REQUEST_TIMED_OUT.code());
            assertThat(e.entity()).singleElement().satisfies(d -> {
                assertThat(d.entityType()).isEqualTo("client-id");
                assertThat(d.entityName()).isNull();
            });
        });
        assertThat(described.errorCode()).isEqualTo(Errors.CLUSTER_AUTHORIZATION_FAILED.code());
        assertThat(described.errorMessage()).isEqualTo(Errors.CLUSTER_AUTHORIZATION_FAILED.message());
        assertThat(described.entries()).isNull();
    }

    @Test
    void withAnAuthorizerDescribeNeedsDescribeConfigsAndAlterNeedsAlterConfigsOnTheCluster() throws Exception {
        // Given: alice may describe configs on the cluster, not alter them
        RequestContext alice = MetadataFixture.securedContext(ApiKey.ALTER_CLIENT_QUOTAS, 1, "alice",
                MetadataFixture.allow(AclResourceType.CLUSTER, "kafka-cluster", AclPatternType.LITERAL, "User:alice",
                        AclOperation.DESCRIBE_CONFIGS));
        AlterClientQuotasRequestData request = new AlterClientQuotasRequestData();
        request.entries().add(entry("user", "carol", "producer_byte_rate", 1));

        // When
        AlterClientQuotasResponseData altered = ClusterAuthorizedHandler.requiring(AclOperation.ALTER_CONFIGS,
                new AlterClientQuotasHandler(fixture.node())).handle(alice, request).toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        DescribeClientQuotasResponseData described = ClusterAuthorizedHandler.requiring(
                AclOperation.DESCRIBE_CONFIGS, new DescribeClientQuotasHandler(fixture.node()))
                .handle(alice, new DescribeClientQuotasRequestData()).toCompletableFuture().get(10, TimeUnit.SECONDS);

        // Then
        assertThat(altered.entries()).singleElement().satisfies(e -> assertThat(e.errorCode())
                .isEqualTo(Errors.CLUSTER_AUTHORIZATION_FAILED.code()));
        assertThat(described.errorCode()).isEqualTo(Errors.NONE.code());
    }
}
