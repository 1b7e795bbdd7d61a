package io.cairn.codegen.schema;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SchemaParserTest {

    private final SchemaParser parser = new SchemaParser();

    private static String message(String fields) {
        return """
                // A comment, as Kafka's schemas have.
                {
                  "apiKey": 1000, "type": "request", "name": "TestRequest",
                  "validVersions": "0-4", "flexibleVersions": "3+",
                  "fields": [ %s ]
                }
                """.formatted(fields);
    }

    @Test
    void parseShouldAcceptCommentsStructsTagsAndDefaults() {
        // Given
        String json = message("""
                { "name": "TimeoutMs", "type": "int32", "versions": "0+", "default": "0x7fffffff" },
                { "name": "Topics", "type": "[]Topic", "versions": "1+", "nullableVersions": "2+", "fields": [
                  { "name": "Name", "type": "string", "versions": "1+", "mapKey": true, "entityType": "topicName" }
                ]},
                { "name": "Leader", "type": "Leader", "versions": "3+", "tag": 0, "taggedVersions": "3+" }
                """).replace("\"fields\": [ ", "\"commonStructs\": [ { \"name\": \"Leader\", \"versions\": \"0+\","
                + " \"fields\": [ { \"name\": \"Id\", \"type\": \"int32\", \"versions\": \"0+\","
                + " \"default\": \"-1\" } ] } ],"
                + " \"fields\": [ ");

        // When
        MessageSpec spec = parser.parse(json);

        // Then
        assertThat(spec.className()).isEqualTo("TestRequestData");
        assertThat(spec.apiKey()).isEqualTo((short) 1000);
        assertThat(spec.fields()).extracting(FieldSpec::camelName).containsExactly("timeoutMs", "topics", "leader");
        assertThat(spec.structs()).containsOnlyKeys("Topic", "Leader");
        assertThat(spec.structs().get("Topic").versions()).isEqualTo(Versions.parse("1-4"));
        assertThat(spec.structs().get("Leader").versions()).isEqualTo(Versions.parse("3-4"));
        assertThat(spec.fields().get(2).tag()).isEqualTo(0);
    }

    @Test
    void parseShouldRejectATaggedFieldInNonFlexibleVersions() {
        // Given
        String json = message("{ \"name\": \"X\", \"type\": \"int32\", \"versions\": \"1+\", \"tag\": 0,"
                + " \"taggedVersions\": \"1+\" }");

        // When / Then
        assertThatThrownBy(() -> parser.parse(json)).isInstanceOf(SchemaException.class)
                .hasMessageContaining("TestRequest.X").hasMessageContaining("flexible");
    }

    @Test
    void parseShouldRejectNullableIntegers() {
        // Given
        String json = message("{ \"name\": \"X\", \"type\": \"int32\", \"versions\": \"0+\","
                + " \"nullableVersions\": \"0+\" }");

        // When / Then
        assertThatThrownBy(() -> parser.parse(json)).isInstanceOf(SchemaException.class)
                .hasMessageContaining("cannot be nullable");
    }

    @Test
    void parseShouldRejectOutOfRangeAndNullDefaults() {
        // Given
        String outOfRange = message("{ \"name\": \"X\", \"type\": \"int8\", \"versions\": \"0+\","
                + " \"default\": \"300\" }");
        String nullNotNullable = message("{ \"name\": \"X\", \"type\": \"string\", \"versions\": \"0+\","
                + " \"nullableVersions\": \"2+\", \"default\": \"null\" }");

        // When / Then
        assertThatThrownBy(() -> parser.parse(outOfRange)).hasMessageContaining("out of range");
        assertThatThrownBy(() -> parser.parse(nullNotNullable)).hasMessageContaining("default null");
    }

    @Test
    void parseShouldRejectUnknownTypesPropertiesAndStructs() {
        // Given
        String unknownType = message("{ \"name\": \"X\", \"type\": \"int128\", \"versions\": \"0+\" }");
        String unknownKey = message("{ \"name\": \"X\", \"type\": \"int8\", \"versions\": \"0+\", \"colour\": 1 }");
        String undefinedStruct = message("{ \"name\": \"X\", \"type\": \"[]Missing\", \"versions\": \"0+\" }");

        // When / Then
        assertThatThrownBy(() -> parser.parse(unknownType)).hasMessageContaining("Unknown field type 'int128'");
        assertThatThrownBy(() -> parser.parse(unknownKey)).hasMessageContaining("unknown property 'colour'");
        assertThatThrownBy(() -> parser.parse(undefinedStruct)).hasMessageContaining("struct 'Missing'");
    }

    @Test
    void parseShouldRejectDuplicateTagsAndNonOpenEndedTaggedVersions() {
        // Given
        String duplicate = message("""
                { "name": "A", "type": "int32", "versions": "3+", "tag": 1, "taggedVersions": "3+" },
                { "name": "B", "type": "int32", "versions": "3+", "tag": 1, "taggedVersions": "3+" }
                """);
        String closed = message("{ \"name\": \"A\", \"type\": \"int32\", \"versions\": \"3-4\", \"tag\": 1,"
                + " \"taggedVersions\": \"3-4\" }");

        // When / Then
        assertThatThrownBy(() -> parser.parse(duplicate)).hasMessageContaining("duplicate tag 1");
        assertThatThrownBy(() -> parser.parse(closed)).hasMessageContaining("open-ended");
    }

    @Test
    void parseShouldGiveHeadersVersionConditionsFromVersionZero() {
        // Given
        String header = """
                { "type": "header", "name": "RequestHeader", "validVersions": "1-2", "flexibleVersions": "2+",
                  "fields": [ { "name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+",
                                "flexibleVersions": "none" } ] }
                """;

        // When
        MessageSpec spec = parser.parse(header);

        // Then
        assertThat(spec.topLevelVersions()).isEqualTo(Versions.parse("0-2"));
        assertThat(spec.fields().get(0).compactVersions(spec.flexibleVersions()).isEmpty()).isTrue();
    }
}
