package io.cairn.testkit;

import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.message.ResponseHeaderData;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RawKafkaClientTest {

    @Test
    void encodeShouldWriteTheHeaderThenTheBody() {
        // Given
        RequestHeaderData header = new RequestHeaderData()
                .setRequestApiKey(ApiKey.API_VERSIONS.id())
                .setRequestApiVersion((short) 0)
                .setCorrelationId(0x01020304)
                .setClientId("ab");

        // When
        byte[] payload = RawKafkaClient.encode(header, (short) 1, new ApiVersionsRequestData(), (short) 0);

        // Then: header v1 is key, version, correlation id, int16-length client id; ApiVersions v0 has no body
        assertThat(payload).containsExactly(0, 18, 0, 0, 1, 2, 3, 4, 0, 2, 'a', 'b');
    }

    @Test
    void decodeShouldReadTheApiVersionsResponseHeaderAtVersion0EvenForVersion3() {
        // Given: KIP-511, the ApiVersions response header is v0 (no tagged fields) at every version
        ApiVersionsResponseData body = new ApiVersionsResponseData().setApiKeys(List.of(
                new ApiVersionsResponseData.ApiVersion()
                        .setApiKey(ApiKey.API_VERSIONS.id())
                        .setMinVersion((short) 0)
                        .setMaxVersion((short) 4)));
        byte[] payload = RawKafkaClient.encode(new ResponseHeaderData().setCorrelationId(77), (short) 0, body,
                (short) 3);
        RawKafkaClient.ResponseFrame frame = new RawKafkaClient.ResponseFrame(payload);

        // When
        RawKafkaClient.Response response = frame.decode(ApiKey.API_VERSIONS, (short) 3);

        // Then
        assertThat(frame.correlationId()).isEqualTo(77);
        assertThat(response.header().correlationId()).isEqualTo(77);
        assertThat(response.body()).isEqualTo(body);
    }

    @Test
    void decodeShouldRejectTrailingBytes() {
        // Given
        byte[] valid = RawKafkaClient.encode(new ResponseHeaderData().setCorrelationId(1), (short) 0,
                new ApiVersionsResponseData(), (short) 0);
        byte[] extra = "extra".getBytes(StandardCharsets.UTF_8);
        byte[] withTrailingBytes = Arrays.copyOf(valid, valid.length + extra.length);
        System.arraycopy(extra, 0, withTrailingBytes, valid.length, extra.length);

        // When / Then
        assertThatThrownBy(() -> new RawKafkaClient.ResponseFrame(withTrailingBytes)
                .decode(ApiKey.API_VERSIONS, (short) 0))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("5 bytes left");
    }
}
