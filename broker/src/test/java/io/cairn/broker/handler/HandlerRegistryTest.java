package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.produce.ProduceService;
import io.cairn.broker.handler.ApiHandler.RunsOn;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsResponseData.ApiVersion;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

class HandlerRegistryTest {

    @Test
    void shouldAdvertiseOnlyApiVersionsWhenNothingElseIsRegistered() {
        // When
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(), false);

        // Then
        assertThat(registry.apiVersions()).singleElement().satisfies(v -> {
            assertThat(v.apiKey()).isEqualTo(ApiKey.API_VERSIONS.id());
            assertThat(v.minVersion()).isZero();
            assertThat(v.maxVersion()).isEqualTo((short) 4);
        });
        assertThat(registry.handler(ApiKey.API_VERSIONS.id())).isInstanceOf(ApiVersionsHandler.class);
        assertThat(registry.handler(ApiKey.HEARTBEAT.id())).isNull();
        assertThat(registry.handler(-1)).isNull();
        assertThat(registry.handler(10_000)).isNull();
    }

    @Test
    void shouldDeriveTheTableFromTheRegisteredHandlersSortedByKey() {
        // When
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(new Heartbeat((short) 0, (short) 4)), false);

        // Then
        assertThat(registry.apiVersions()).extracting(ApiVersion::apiKey)
                .containsExactly(ApiKey.HEARTBEAT.id(), ApiKey.API_VERSIONS.id());
        assertThat(registry.handler(ApiKey.HEARTBEAT.id())).isInstanceOf(Heartbeat.class);
    }

    @Test
    void shouldLeaveBrokerApisOffAControllerListener() {
        // When
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(new Heartbeat((short) 0, (short) 4)), true);

        // Then
        assertThat(registry.handler(ApiKey.HEARTBEAT.id())).isNull();
        assertThat(registry.apiVersions()).extracting(ApiVersion::apiKey).containsExactly(ApiKey.API_VERSIONS.id());
    }

    @Test
    void shouldRefuseAHandlerClaimingVersionsTheCodecDoesNotHave() {
        assertThatThrownBy(() -> HandlerRegistry.forListener(List.of(new Heartbeat((short) 0, (short) 99)), false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("serves HEARTBEAT v0-99");
    }

    @Test
    void shouldRefuseTwoHandlersForOneApi() {
        assertThatThrownBy(() -> HandlerRegistry.forListener(List.of(new Heartbeat((short) 0, (short) 4),
                new Heartbeat((short) 0, (short) 4)), false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Two handlers serve HEARTBEAT");
    }

    @Test
    void shouldAdvertiseProduceFromV0WhileServingItFromV3AsKafkaDoes() {
        // Given
        ProduceHandler produce = new ProduceHandler(new ProduceService(null, null, null, null, null, Runnable::run));

        // When
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(produce), false);

        // Then
        assertThat(registry.apiVersions()).filteredOn(v -> v.apiKey() == ApiKey.PRODUCE.id()).singleElement()
                .satisfies(v -> {
                    assertThat(v.minVersion()).isZero();
                    assertThat(v.maxVersion()).isEqualTo((short) 13);
                });
        assertThat(registry.handler(ApiKey.PRODUCE.id()).minVersion()).isEqualTo((short) 3);
    }

    @Test
    void shouldServeOnlyTheInMemoryApisOnTheNetworkThread() {
        // When
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(new MetadataHandler(null, null),
                new ProduceHandler(new ProduceService(null, null, null, null, null, Runnable::run)),
                new FetchHandler(null), new ListOffsetsHandler(null),
                new Heartbeat((short) 0, (short) 4)), false);

        // Then
        assertThat(registry.handler(ApiKey.API_VERSIONS.id()).runsOn()).isEqualTo(RunsOn.NETWORK_THREAD);
        assertThat(registry.handler(ApiKey.METADATA.id()).runsOn()).isEqualTo(RunsOn.NETWORK_THREAD);
        for (ApiKey key : List.of(ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.LIST_OFFSETS, ApiKey.HEARTBEAT)) {
            assertThat(registry.handler(key.id()).runsOn()).as("%s", key).isEqualTo(RunsOn.REQUEST_HANDLER_THREAD);
        }
    }

    @Test
    void shouldRefuseAnAdvertisedMinimumAboveTheServedOne() {
        assertThatThrownBy(() -> HandlerRegistry.forListener(List.of(new AdvertisingHeartbeat()), false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("advertises HEARTBEAT from v2 but serves it from v1");
    }

    private static final class AdvertisingHeartbeat
            implements ApiHandler<HeartbeatRequestData, HeartbeatResponseData> {

        @Override
        public ApiKey apiKey() {
            return ApiKey.HEARTBEAT;
        }

        @Override
        public short minVersion() {
            return 1;
        }

        @Override
        public short maxVersion() {
            return 4;
        }

        @Override
        public short advertisedMinVersion() {
            return 2;
        }

        @Override
        public CompletionStage<HeartbeatResponseData> handle(RequestContext ctx, HeartbeatRequestData request) {
            return CompletableFuture.completedFuture(new HeartbeatResponseData());
        }

        @Override
        public HeartbeatResponseData errorResponse(RequestContext ctx, HeartbeatRequestData request, Errors error) {
            return new HeartbeatResponseData().setErrorCode(error.code());
        }
    }

    private record Heartbeat(short minVersion, short maxVersion)
            implements ApiHandler<HeartbeatRequestData, HeartbeatResponseData> {

        @Override
        public ApiKey apiKey() {
            return ApiKey.HEARTBEAT;
        }

        @Override
        public CompletionStage<HeartbeatResponseData> handle(RequestContext ctx, HeartbeatRequestData request) {
            return CompletableFuture.completedFuture(new HeartbeatResponseData());
        }

        @Override
        public HeartbeatResponseData errorResponse(RequestContext ctx, HeartbeatRequestData request, Errors error) {
            return new HeartbeatResponseData().setErrorCode(error.code());
        }
    }
}
