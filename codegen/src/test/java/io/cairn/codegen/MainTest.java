package io.cairn.codegen;

import io.cairn.codegen.schema.SchemaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MainTest {

    private static final String REQUEST = """
            { "apiKey": 0, "type": "request", "name": "PingRequest", "validVersions": "0-1",
              "flexibleVersions": "1+", "fields": [ { "name": "Id", "type": "int32", "versions": "0+" } ] }
            """;
    private static final String RESPONSE = """
            { "apiKey": 0, "type": "response", "name": "PingResponse", "validVersions": "0-1",
              "flexibleVersions": "1+", "fields": [ { "name": "ErrorCode", "type": "int16", "versions": "0+" } ] }
            """;

    @Test
    void generateShouldWriteOneClassPerSchemaPlusApiKeyAndDeleteStaleFiles(@TempDir Path dir) throws Exception {
        // Given
        Path schemas = Files.createDirectories(dir.resolve("schemas"));
        Files.writeString(schemas.resolve("PingRequest.json"), REQUEST);
        Files.writeString(schemas.resolve("PingResponse.json"), RESPONSE);
        Path packageDir = Files.createDirectories(dir.resolve("out/p/q"));
        Files.writeString(packageDir.resolve("GoneRequestData.java"), "stale");

        // When
        Main.Result result = Main.generate(schemas, dir.resolve("out"), "p.q");

        // Then
        assertThat(result.messages()).isEqualTo(2);
        assertThat(result.apis()).isEqualTo(1);
        assertThat(result.deleted()).isEqualTo(1);
        try (var files = Files.list(packageDir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder(
                    "PingRequestData.java", "PingResponseData.java", "ApiKey.java", "package-info.java");
        }
    }

    @Test
    void generateShouldNameTheSchemaFileOfAnInvalidSchema(@TempDir Path dir) throws Exception {
        // Given
        Path schemas = Files.createDirectories(dir.resolve("schemas"));
        Files.writeString(schemas.resolve("PingRequest.json"), REQUEST.replace("int32", "int33"));
        Files.writeString(schemas.resolve("PingResponse.json"), RESPONSE);

        // When / Then
        assertThatThrownBy(() -> Main.generate(schemas, dir.resolve("out"), "p.q"))
                .isInstanceOf(SchemaException.class).hasMessageContaining("PingRequest.json")
                .hasMessageContaining("int33");
    }
}
