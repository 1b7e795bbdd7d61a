package io.cairn.codegen.emit;

import io.cairn.codegen.schema.MessageSpec;
import io.cairn.codegen.schema.SchemaParser;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Checks the shape of generated code; byte compatibility is proven by wire's differential test. */
class MessageClassEmitterTest {

    private static final String SCHEMA = """
            {
              "apiKey": 1000, "type": "response", "name": "SampleResponse",
              "validVersions": "0-3", "flexibleVersions": "2+",
              "fields": [
                { "name": "ThrottleTimeMs", "type": "int32", "versions": "1+", "ignorable": true },
                { "name": "Timeout", "type": "int32", "versions": "0+", "default": "0x7fffffff" },
                { "name": "ValidateOnly", "type": "bool", "versions": "1+", "default": "true" },
                { "name": "Cursor", "type": "Cursor", "versions": "0+", "nullableVersions": "0+", "default": "null",
                  "fields": [ { "name": "Name", "type": "string", "versions": "0+" } ] },
                { "name": "Epoch", "type": "int64", "versions": "2+", "tag": 1, "taggedVersions": "2+",
                  "default": "-1" },
                { "name": "Nodes", "type": "[]uuid", "versions": "2+", "tag": 0, "taggedVersions": "2+" }
              ]
            }
            """;

    private final String source = new MessageClassEmitter("io.cairn.wire.message")
            .emit(new SchemaParser().parse(SCHEMA));

    @Test
    void emitShouldDeclareTheContractOfAGeneratedApiMessage() {
        // Given the sample schema

        // When / Then
        assertThat(source).contains("public final class SampleResponseData implements ApiMessage")
                .contains("public SampleResponseData(WireReader _readable, short _version)")
                .contains("public short apiKey()")
                .contains("public static final class Cursor implements Message")
                .contains("public SampleResponseData setTimeout(int v)")
                .contains("public List<Uuid> nodes()");
    }

    @Test
    void emitShouldApplyHexAndBooleanDefaults() {
        // Given the sample schema

        // When / Then
        assertThat(source).contains("this.timeout = 2147483647;").contains("this.validateOnly = true;")
                .contains("this.cursor = null;").contains("this.epoch = -1L;");
    }

    @Test
    void emitShouldThrowOnlyForNonIgnorableNonDefaultFieldsMissingFromTheVersion() {
        // Given the sample schema

        // When / Then
        assertThat(source).contains("Attempted to write a non-default validateOnly at version")
                .doesNotContain("Attempted to write a non-default throttleTimeMs");
    }

    @Test
    void emitShouldWriteKnownTagsInTagOrderInterleavedWithUnknownOnes() {
        // Given the sample schema

        // When
        int tag0 = source.indexOf("_rawWriter.writeRawTags(_writable, 0);");
        int tag1 = source.indexOf("_rawWriter.writeRawTags(_writable, 1);");
        int rest = source.indexOf("_rawWriter.writeRawTags(_writable, Integer.MAX_VALUE);");

        // Then
        assertThat(tag0).isPositive().isLessThan(tag1);
        assertThat(tag1).isLessThan(rest);
        assertThat(source).contains("if (this.epoch != -1L) {").contains("if (!this.nodes.isEmpty()) {");
    }

    @Test
    void emitShouldPrefixNullableStructsWithAMarkerByte() {
        // Given the sample schema

        // When / Then
        assertThat(source).contains("if (_readable.readByte() < 0) {").contains("_writable.writeByte((byte) -1);");
    }

    @Test
    void emitShouldUseCompactEncodingsOnlyInFlexibleVersions() {
        // Given
        MessageSpec spec = new SchemaParser().parse(SCHEMA);

        // When
        String nested = source.substring(source.indexOf("public static final class Cursor"));

        // Then
        assertThat(spec.flexibleVersions().lowest()).isEqualTo((short) 2);
        assertThat(nested).contains("if (_version >= 2) {\n")
                .contains("_length = _readable.readUnsignedVarint() - 1;")
                .contains("_length = _readable.readShort();");
    }
}
