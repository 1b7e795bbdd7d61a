package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;

/**
 * Makes Netty's leak detector report what it can and fails when it did: leaked buffers are found when they are
 * garbage collected and reported on a later tracked allocation (every allocation is tracked at PARANOID). Stateless.
 */
public final class LeakCheck {

    private LeakCheck() {
    }

    public static void assertNoLeaks(LogCapture logs) {
        for (int round = 0; round < 3; round++) {
            System.gc();
            System.runFinalization();
            for (int i = 0; i < 100; i++) {
                ByteBuf pooled = PooledByteBufAllocator.DEFAULT.directBuffer(16);
                pooled.release();
                ByteBuf heap = UnpooledByteBufAllocator.DEFAULT.heapBuffer(16);
                heap.release();
            }
        }
        assertThat(logs.leakReports()).as("Netty leak reports").isEmpty();
    }
}
