package io.cairn.codegen.emit;

import io.cairn.codegen.schema.Versions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class VersionConditionTest {

    private static String emit(String wanted, String context) {
        CodeBuffer buffer = new CodeBuffer();
        VersionCondition.emit(buffer, Versions.parse(wanted), Versions.parse(context),
                c -> buffer.printf("member(%s);", c), c -> buffer.printf("other(%s);", c));
        return buffer.toString();
    }

    @Test
    void emitShouldOmitTheIfWhenEveryReachableVersionMatches() {
        // Given / When
        String code = emit("0+", "2-5");

        // Then
        assertThat(code).isEqualTo("member(2-5);\n");
    }

    @Test
    void emitShouldUseTheOneBoundThatMatters() {
        // Given / When
        String low = emit("3+", "0-5");
        String high = emit("0-2", "0-5");

        // Then
        assertThat(low).isEqualTo("if (_version >= 3) {\n    member(3-5);\n} else {\n    other(0-2);\n}\n");
        assertThat(high).isEqualTo("if (_version <= 2) {\n    member(0-2);\n} else {\n    other(3-5);\n}\n");
    }

    @Test
    void emitShouldCheckBothBoundsForAnInnerRange() {
        // Given / When
        String code = emit("2-3", "0-5");

        // Then
        assertThat(code).startsWith("if ((_version >= 2) && (_version <= 3)) {");
    }

    @Test
    void emitShouldTakeOnlyTheElseBranchWhenNoReachableVersionMatches() {
        // Given / When
        String code = emit("6+", "0-5");

        // Then
        assertThat(code).isEqualTo("other(0-5);\n");
    }
}
