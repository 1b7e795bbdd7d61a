package io.cairn.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.MockTime;
import io.cairn.log.Time;
import io.cairn.metadata.image.ClientQuotaEntity;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.MetadataRequestData;
import io.cairn.wire.message.MetadataResponseData;
import io.cairn.wire.message.ProduceRequestData;
import io.cairn.wire.message.ProduceResponseData;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import io.netty.buffer.Unpooled;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Which requests count against which quota, and what a throttled response looks like, on a fixed clock. */
class ClientQuotasTest {

    private static final Time CLOCK = new MockTime(0);

    private static ClientQuotas quotas(ClientQuotaEntity entity, Map<String, Double> values) {
        ClientQuotas quotas = new ClientQuotas(11, 1, CLOCK);
        quotas.load(new MetadataImage(0L, "c", 1, 1L, Map.of(), Map.of(), Map.of(), Map.of(), 0L, 0L, Map.of(),
                Map.of(), Map.of(), Map.of(entity, values)));
        return quotas;
    }

    private static FetchResponseData fetchResponse() {
        FetchResponseData response = new FetchResponseData().setSessionId(7);
        response.responses().add(new FetchResponseData.FetchableTopicResponse().setTopic("t").setPartitions(List.of(
                new FetchResponseData.PartitionData().setPartitionIndex(0).setRecords(Unpooled.wrappedBuffer(
                        new byte[20_000])))));
        return response;
    }

    @Test
    void requestHandlerTimeOverRequestPercentageThrottlesAnyResponseForAtMostOneWindow() {
        // Given: 1 % of a thread for alice
        ClientQuotas quotas = quotas(ClientQuotaEntity.of("user", "alice"), Map.of("request_percentage", 1.0));

        // When: a Metadata request that took a whole second of handler time
        RequestQuotas.Throttled throttled = quotas.apply(ApiKey.METADATA, (short) 12, "alice", "c",
                new MetadataRequestData(), new MetadataResponseData(), 100, TimeUnit.SECONDS.toNanos(1));

        // Then: 10 % over 10 s against 1 % is 90 s of throttle, bounded by the 1 s window
        assertThat(throttled.throttleTimeMs()).isEqualTo(1000);
        assertThat(((MetadataResponseData) throttled.response()).throttleTimeMs()).isEqualTo(1000);
    }

    @Test
    void followerFetchesAndMarkersAreExemptFromTheRequestQuota() {
        // Given
        ClientQuotas quotas = quotas(ClientQuotaEntity.of("user", "alice"), Map.of("request_percentage", 1.0,
                "consumer_byte_rate", 1.0));
        FetchRequestData follower = new FetchRequestData().setReplicaState(
                new FetchRequestData.ReplicaState().setReplicaId(2));

        // When
        RequestQuotas.Throttled fetch = quotas.apply(ApiKey.FETCH, (short) 17, "alice", "c", follower,
                fetchResponse(), 100, TimeUnit.SECONDS.toNanos(1));
        RequestQuotas.Throttled markers = quotas.apply(ApiKey.WRITE_TXN_MARKERS, (short) 1, "alice", "c",
                new WriteTxnMarkersRequestData(), new WriteTxnMarkersResponseData(), 100,
                TimeUnit.SECONDS.toNanos(1));

        // Then
        assertThat(fetch.throttleTimeMs()).isZero();
        assertThat(markers.throttleTimeMs()).isZero();
        ((FetchResponseData) fetch.response()).responses().get(0).partitions().get(0).records().release();
    }

    @Test
    void aConsumerFetchOverItsByteRateGetsAnEmptyResponseWithTheThrottleTimeAndItsSessionWhenIncremental() {
        // Given: 1,000 bytes/s for client app; a fetch of 20,000 bytes in an incremental session
        ClientQuotas quotas = quotas(ClientQuotaEntity.of("client-id", "app"), Map.of("consumer_byte_rate", 1000.0));
        FetchRequestData request = new FetchRequestData().setSessionId(7).setSessionEpoch(3)
                .setReplicaState(new FetchRequestData.ReplicaState().setReplicaId(-1));
        FetchResponseData response = fetchResponse();

        // When
        RequestQuotas.Throttled throttled = quotas.apply(ApiKey.FETCH, (short) 17, "alice", "app", request,
                response, 100, 0);

        // Then
        assertThat(throttled.throttleTimeMs()).isPositive();
        FetchResponseData sent = (FetchResponseData) throttled.response();
        assertThat(sent).isNotSameAs(response);
        assertThat(sent.responses()).isEmpty();
        assertThat(sent.sessionId()).isEqualTo(7);
        assertThat(sent.throttleTimeMs()).isEqualTo(throttled.throttleTimeMs());
        assertThat(quotas.fetchMaxBytes("alice", "app")).isEqualTo(10_000);
        assertThat(quotas.fetchMaxBytes("alice", "other")).isEqualTo(Integer.MAX_VALUE);
        response.responses().get(0).partitions().get(0).records().release();
    }

    @Test
    void aProduceOverItsByteRateKeepsItsResultsAndCarriesTheThrottleTime() {
        // Given
        ClientQuotas quotas = quotas(ClientQuotaEntity.of("client-id", "app"), Map.of("producer_byte_rate", 100.0));
        ProduceResponseData response = new ProduceResponseData();

        // When: 2,000 bytes against 100 bytes/s over the 10 s window
        RequestQuotas.Throttled throttled = quotas.apply(ApiKey.PRODUCE, (short) 11, "alice", "app",
                new ProduceRequestData(), response, 2000, 0);

        // Then: (200 - 100) / 100 x 10 s
        assertThat(throttled.response()).isSameAs(response);
        assertThat(throttled.throttleTimeMs()).isEqualTo(10_000);
        assertThat(response.throttleTimeMs()).isEqualTo(10_000);
    }
}
