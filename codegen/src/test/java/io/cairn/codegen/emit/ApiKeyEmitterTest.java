package io.cairn.codegen.emit;

import io.cairn.codegen.schema.SchemaException;
import io.cairn.codegen.schema.SchemaParser;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ApiKeyEmitterTest {

    private static String schema(String type, String name, int key) {
        return """
                { "apiKey": %d, "type": "%s", "name": "%s", "validVersions": "0-4", "flexibleVersions": "3+",
                  "listeners": ["broker"], "fields": [] }
                """.formatted(key, type, name);
    }

    @Test
    void constantNamesShouldFollowKafkasApiKeysStyle() {
        // Given / When / Then
        assertThat(ApiKeyEmitter.constantName("ApiVersions")).isEqualTo("API_VERSIONS");
        assertThat(ApiKeyEmitter.constantName("OffsetForLeaderEpoch")).isEqualTo("OFFSET_FOR_LEADER_EPOCH");
        assertThat(ApiKeyEmitter.constantName("Produce")).isEqualTo("PRODUCE");
    }

    @Test
    void emitShouldPairRequestsAndResponsesByKey() {
        // Given
        SchemaParser parser = new SchemaParser();

        // When
        String source = new ApiKeyEmitter("io.cairn.wire.message").emit(List.of(
                parser.parse(schema("request", "ApiVersionsRequest", 18)),
                parser.parse(schema("response", "ApiVersionsResponse", 18))));

        // Then
        assertThat(source).contains("API_VERSIONS((short) 18, \"ApiVersions\", (short) 0, (short) 4, false, true,"
                + " false, (short) 3, (short) 3,")
                .contains("ApiVersionsRequestData::new, ApiVersionsResponseData::new);")
                .contains("KIP-511");
    }

    @Test
    void emitShouldRejectARequestWithoutResponse() {
        // Given
        SchemaParser parser = new SchemaParser();

        // When / Then
        assertThatThrownBy(() -> new ApiKeyEmitter("p").emit(List.of(parser.parse(schema("request", "FooRequest", 5)))))
                .isInstanceOf(SchemaException.class).hasMessageContaining("do not pair up");
    }
}
