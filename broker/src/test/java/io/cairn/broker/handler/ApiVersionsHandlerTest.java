package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.FeatureLevelRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.RequestHeaderData;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ApiVersionsHandlerTest {

    private final HandlerRegistry registry = HandlerRegistry.forListener(List.of(), false);
    private final ApiVersionsHandler handler = (ApiVersionsHandler) registry.handler(ApiKey.API_VERSIONS.id());
    private final ClientConnection connection = new ClientConnection("c", "PLAINTEXT", null);

    @Test
    void shouldRecordTheClientSoftwareOfAValidV3Request() {
        // When
        ApiVersionsResponseData response = handle((short) 3, "apache-kafka-java", "4.1.1");

        // Then
        assertThat(response.errorCode()).isZero();
        assertThat(response.finalizedFeaturesEpoch()).isEqualTo(-1L);
        assertThat(connection.clientSoftware()).isEqualTo(new ClientConnection.ClientSoftware("apache-kafka-java",
                "4.1.1"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "-starts-with-dash", "ends.", "has space", "ünïcode", "a_b"})
    void shouldAnswerInvalidRequestWithAnEmptyTableForAnInvalidSoftwareName(String name) {
        // When
        ApiVersionsResponseData response = handle((short) 3, name, "1.0");

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(response.apiKeys()).isEmpty();
        assertThat(connection.clientSoftware().name()).isEqualTo(ClientConnection.UNKNOWN);
    }

    @ParameterizedTest
    @ValueSource(strings = {"a", "librdkafka", "kafka-python", "1.2.3-SNAPSHOT", "x.y-z"})
    void shouldAcceptKip511SoftwareNames(String name) {
        assertThat(handle((short) 4, name, name).errorCode()).isZero();
    }

    @Test
    void shouldNotValidateTheSoftwareNameBeforeV3() {
        assertThat(handle((short) 2, "not valid!", "").errorCode()).isZero();
    }

    @Test
    void shouldReturnOnlyItsOwnRangeWithUnsupportedVersion() {
        // When
        ApiVersionsResponseData response = registry.unsupportedApiVersionsResponse();

        // Then
        assertThat(response.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(response.apiKeys()).singleElement().satisfies(v -> {
            assertThat(v.apiKey()).isEqualTo((short) 18);
            assertThat(v.maxVersion()).isEqualTo((short) 4);
        });
    }

    @Test
    void shouldGiveEveryResponseItsOwnTableObjects() {
        // When
        ApiVersionsResponseData first = handle((short) 3, "a", "b");
        first.apiKeys().get(0).setMaxVersion((short) 1);

        // Then
        assertThat(handle((short) 3, "a", "b").apiKeys().get(0).maxVersion()).isEqualTo((short) 4);
    }

    @Test
    void shouldPublishSupportedAndFinalizedFeaturesAsKafkasBroker() {
        // Given: an image at offset 41 with Cairn's bootstrap levels finalized
        MetadataImage image = new MetadataDelta(MetadataImage.EMPTY).replayAll(List.of(
                new FeatureLevelRecord().setName(Features.METADATA_VERSION).setFeatureLevel((short) 27),
                new FeatureLevelRecord().setName(Features.ELIGIBLE_LEADER_REPLICAS_VERSION)
                        .setFeatureLevel((short) 1))).apply(41L);
        ApiVersionsHandler withFeatures = (ApiVersionsHandler) HandlerRegistry.forListener(List.of(), false,
                () -> image).handler(ApiKey.API_VERSIONS.id());

        // When
        ApiVersionsResponseData v4 = handle(withFeatures, (short) 4, "a", "b");
        ApiVersionsResponseData v3 = handle(withFeatures, (short) 3, "a", "b");
        ApiVersionsResponseData v2 = handle(withFeatures, (short) 2, "a", "b");

        // Then: level-0 features are never finalized; a v3 client is not sent ranges starting at 0 (KAFKA-17011)
        assertThat(v4.supportedFeatures()).extracting(f -> f.name() + ":" + f.minVersion() + "-" + f.maxVersion())
                .containsExactly("metadata.version:27-27", "eligible.leader.replicas.version:0-1",
                        "transaction.version:0-2", "group.version:0-1", "share.version:0-1",
                        "kraft.version:0-1");
        assertThat(v4.finalizedFeatures()).extracting(f -> f.name() + ":" + f.minVersionLevel() + "-"
                + f.maxVersionLevel())
                .containsExactly("eligible.leader.replicas.version:1-1", "metadata.version:27-27");
        assertThat(v4.finalizedFeaturesEpoch()).isEqualTo(41L);
        assertThat(v3.supportedFeatures()).extracting(ApiVersionsResponseData.SupportedFeatureKey::name)
                .containsExactly("metadata.version");
        assertThat(v3.finalizedFeatures()).hasSize(2);
        assertThat(v2.supportedFeatures()).isEmpty();
        assertThat(v2.finalizedFeaturesEpoch()).isEqualTo(-1L);
    }

    private ApiVersionsResponseData handle(short version, String name, String softwareVersion) {
        return handle(handler, version, name, softwareVersion);
    }

    private ApiVersionsResponseData handle(ApiVersionsHandler target, short version, String name,
                                           String softwareVersion) {
        RequestContext ctx = new RequestContext(new RequestHeaderData().setRequestApiKey((short) 18)
                .setRequestApiVersion(version), ApiKey.API_VERSIONS, connection);
        return target.handle(ctx, new ApiVersionsRequestData().setClientSoftwareName(name)
                .setClientSoftwareVersion(softwareVersion)).toCompletableFuture().join();
    }
}
