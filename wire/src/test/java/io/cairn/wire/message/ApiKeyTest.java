package io.cairn.wire.message;

import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ApiKeys;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The generated {@link ApiKey} against kafka-clients' {@code ApiKeys}, and the header version rules. */
class ApiKeyTest {

    @Test
    void apiKeysShouldMatchKafkaClientsApisWithAVersionRange() {
        // Given
        List<String> kafkaNames = Arrays.stream(ApiKeys.values()).filter(ApiKeys::hasValidVersion)
                .map(Enum::name).toList();

        // When
        List<String> cairnNames = Arrays.stream(ApiKey.values()).map(Enum::name).toList();

        // Then
        assertThat(cairnNames).containsExactlyInAnyOrderElementsOf(kafkaNames);
    }

    @Test
    void everyApiKeyShouldAgreeWithKafkaOnIdsVersionsListenersAndHeaderVersions() {
        for (ApiKey key : ApiKey.values()) {
            // Given
            ApiKeys kafka = ApiKeys.valueOf(key.name());

            // When / Then
            assertThat(key.id()).isEqualTo(kafka.id);
            assertThat(ApiKey.forId(key.id())).isSameAs(key);
            assertThat(key.lowestSupportedVersion()).as(key.name()).isEqualTo(kafka.oldestVersion());
            assertThat(key.highestSupportedVersion()).as(key.name()).isEqualTo(kafka.latestVersion(true));
            assertThat(key.latestVersionUnstable()).isEqualTo(kafka.messageType.latestVersionUnstable());
            assertThat(key.brokerListener()).as(key.name())
                    .isEqualTo(kafka.inScope(ApiMessageType.ListenerType.BROKER));
            assertThat(key.controllerListener()).as(key.name())
                    .isEqualTo(kafka.inScope(ApiMessageType.ListenerType.CONTROLLER));
            assertThat(key.newRequest().apiKey()).isEqualTo(key.id());
            assertThat(key.newResponse().apiKey()).isEqualTo(key.id());
            for (short v = key.lowestSupportedVersion(); v <= key.highestSupportedVersion(); v++) {
                assertThat(key.requestHeaderVersion(v)).as(key + " v" + v).isEqualTo(kafka.requestHeaderVersion(v));
                assertThat(key.responseHeaderVersion(v)).as(key + " v" + v).isEqualTo(kafka.responseHeaderVersion(v));
            }
        }
    }

    @Test
    void forIdShouldReturnNullForUnknownKeys() {
        // Given / When / Then
        assertThat(ApiKey.forId(-1)).isNull();
        assertThat(ApiKey.forId(30_000)).isNull();
    }

    @Test
    void apiVersionsResponseHeaderShouldStayAtVersionZeroInFlexibleVersions() {
        // Given
        ApiKey apiVersions = ApiKey.API_VERSIONS;

        // When
        short header = apiVersions.responseHeaderVersion(apiVersions.highestSupportedVersion());

        // Then
        assertThat(header).isZero();
        assertThat(apiVersions.requestHeaderVersion(apiVersions.highestSupportedVersion())).isEqualTo((short) 2);
    }

    @Test
    void requestHeaderVersionZeroShouldHaveNoClientId() {
        // Given
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey((short) 7).setRequestApiVersion((short) 0)
                .setCorrelationId(42);
        ByteBuf buf = Unpooled.buffer();
        SerializationCache cache = new SerializationCache();
        header.size(cache, (short) 0);

        // When
        header.write(new ByteBufAccessor(buf), cache, (short) 0);

        // Then
        assertThat(buf.readableBytes()).isEqualTo(8);
        RequestHeaderData decoded = new RequestHeaderData(new ByteBufAccessor(buf), (short) 0);
        assertThat(decoded.correlationId()).isEqualTo(42);
        assertThat(decoded.clientId()).isEmpty();
        buf.release();
    }
}
