package io.cairn.testkit;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LeakDetectionTest {

    @Test
    void assertNoLeaksShouldFailWhenABufferIsCollectedUnreleased() {
        // Given
        leakOneBuffer();

        // When / Then
        assertThatThrownBy(() -> LeakDetection.assertNoLeaks("leaking test"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("leaked ByteBuf(s) after leaking test")
                .hasMessageContaining("LEAK: ");
    }

    @Test
    void assertNoLeaksShouldPassWhenEveryBufferIsReleased() {
        // Given
        ByteBuf buffer = UnpooledByteBufAllocator.DEFAULT.directBuffer(16).writeLong(42L);
        buffer.release();

        // When / Then
        assertThatCode(() -> LeakDetection.assertNoLeaks("clean test")).doesNotThrowAnyException();
    }

    private static void leakOneBuffer() {
        UnpooledByteBufAllocator.DEFAULT.directBuffer(16).writeLong(42L);
    }
}
