package io.cairn.codegen.schema;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class VersionsTest {

    @Test
    void parseShouldReadOpenEndedRangesAndSingleVersionsAndNone() {
        // Given / When / Then
        assertThat(Versions.parse("3+")).isEqualTo(new Versions((short) 3, Short.MAX_VALUE));
        assertThat(Versions.parse("0-2")).isEqualTo(new Versions((short) 0, (short) 2));
        assertThat(Versions.parse("5")).isEqualTo(new Versions((short) 5, (short) 5));
        assertThat(Versions.parse("none").isEmpty()).isTrue();
    }

    @Test
    void parseShouldRejectGarbageAndInvertedRanges() {
        // Given / When / Then
        assertThatThrownBy(() -> Versions.parse("x+")).isInstanceOf(SchemaException.class);
        assertThatThrownBy(() -> Versions.parse("3-1")).isInstanceOf(SchemaException.class);
    }

    @Test
    void intersectAndContainShouldFollowRangeArithmetic() {
        // Given
        Versions all = Versions.parse("0+");
        Versions some = Versions.parse("2-4");

        // When
        Versions both = all.intersect(some);

        // Then
        assertThat(both).isEqualTo(some);
        assertThat(all.contains(some)).isTrue();
        assertThat(some.contains(all)).isFalse();
        assertThat(some.intersect(Versions.parse("5+")).isEmpty()).isTrue();
        assertThat(some.toString()).isEqualTo("2-4");
    }
}
