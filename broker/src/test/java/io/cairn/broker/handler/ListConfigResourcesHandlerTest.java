package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ListConfigResourcesRequestData;
import io.cairn.wire.message.ListConfigResourcesResponseData;
import io.cairn.wire.message.ListConfigResourcesResponseData.ConfigResource;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** ListConfigResources on a real metadata image: broker 1 registered, two topics. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ListConfigResourcesHandlerTest {

    @TempDir
    static Path dir;
    private static MetadataFixture fixture;
    private static ListConfigResourcesHandler handler;

    @BeforeAll
    static void start() throws Exception {
        fixture = MetadataFixture.start(dir);
        handler = new ListConfigResourcesHandler(fixture.node());
        fixture.createTopic("beta", 1);
        fixture.createTopic("alpha", 2);
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static ListConfigResourcesResponseData list(int version, Byte... types) throws Exception {
        ListConfigResourcesRequestData request = new ListConfigResourcesRequestData()
                .setResourceTypes(new ArrayList<>(List.of(types)));
        ListConfigResourcesResponseData response = handler.handle(MetadataFixture.context(
                ApiKey.LIST_CONFIG_RESOURCES, version), request).toCompletableFuture().get(10, TimeUnit.SECONDS);
        MetadataFixture.roundTrip(response, ApiKey.LIST_CONFIG_RESOURCES, version, true);
        return response;
    }

    @Test
    void noTypesListsEveryTypeInKafkasOrder() throws Exception {
        // When
        ListConfigResourcesResponseData response = list(1);

        // Then: no group or client-metrics configs exist.
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(response.configResources()).extracting(ConfigResource::resourceName, ConfigResource::resourceType)
                .containsExactly(tuple("1", ListConfigResourcesHandler.BROKER_LOGGER),
                        tuple("1", ListConfigResourcesHandler.BROKER),
                        tuple("alpha", ListConfigResourcesHandler.TOPIC),
                        tuple("beta", ListConfigResourcesHandler.TOPIC));
    }

    @Test
    void namedTypesOnlyAndAnUnsupportedTypeIsUnsupportedVersion() throws Exception {
        // When
        ListConfigResourcesResponseData topics = list(1, ListConfigResourcesHandler.TOPIC);
        ListConfigResourcesResponseData unknown = list(1, ListConfigResourcesHandler.TOPIC, (byte) 1);
        ListConfigResourcesResponseData v0 = list(0);

        // Then
        assertThat(topics.configResources()).extracting(ConfigResource::resourceName)
                .containsExactly("alpha", "beta");
        assertThat(unknown.errorCode()).isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(unknown.configResources()).isEmpty();
        assertThat(v0.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(v0.configResources()).isEmpty();
    }
}
