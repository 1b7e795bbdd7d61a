package io.cairn.compat.raw;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.RequestHeaderData;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The testkit's raw client against both brokers: typed ApiVersions at every version, pipelined requests answered in
 * order, and a connection the broker closes on garbage. Proves the client, and that both brokers agree on these.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class RawKafkaClientIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void apiVersionsShouldBeAnsweredAtEveryVersionFrom0To4(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        List<ApiVersionsResponseData> responses = new ArrayList<>();

        // When
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            for (short version = 0; version <= 4; version++) {
                ApiVersionsRequestData request = new ApiVersionsRequestData()
                        .setClientSoftwareName("cairn-raw-client")
                        .setClientSoftwareVersion("1.0");
                responses.add(client.sendAndReceive(request, version, TIMEOUT));
            }
        }

        // Then
        assertThat(responses).allSatisfy(response -> {
            assertThat(response.errorCode()).isZero();
            assertThat(response.apiKeys()).anySatisfy(api -> {
                assertThat(api.apiKey()).isEqualTo(ApiKey.API_VERSIONS.id());
                assertThat(api.minVersion()).isZero();
                assertThat(api.maxVersion()).isEqualTo((short) 4);
            });
        });
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void pipelinedRequestsShouldBeAnsweredInRequestOrder(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();
        int[] correlationIds = {42, 7, 1_000_000, -5, 0};
        List<Integer> answered = new ArrayList<>();

        // When
        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            for (int correlationId : correlationIds) {
                RequestHeaderData header = new RequestHeaderData()
                        .setRequestApiKey(ApiKey.API_VERSIONS.id())
                        .setRequestApiVersion((short) 3)
                        .setCorrelationId(correlationId)
                        .setClientId("pipelined");
                client.send(header, new ApiVersionsRequestData()
                        .setClientSoftwareName("cairn-raw-client")
                        .setClientSoftwareVersion("1.0"));
            }
            for (int i = 0; i < correlationIds.length; i++) {
                answered.add(client.receive(TIMEOUT).header().correlationId());
            }
        }

        // Then
        assertThat(answered).containsExactly(42, 7, 1_000_000, -5, 0);
    }

    @ParameterizedTest
    @EnumSource(BrokerKind.class)
    void brokerShouldCloseTheConnectionOnAnHttpRequest(BrokerKind kind) {
        // Given
        BrokerProcess broker = kind.shared();

        try (RawKafkaClient client = RawKafkaClient.connect(broker)) {
            // When
            client.sendBytes("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

            // Then
            assertThat(client.awaitClosed(TIMEOUT)).isTrue();
        }
    }
}
