package io.cairn.wire.record;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fails a test class when Netty's leak detector reports a leaked buffer. The build runs tests with
 * {@code -Dio.netty.leakDetection.level=paranoid}, so every buffer is tracked; after each test this forces a GC and a
 * few allocations (the detector reports leaks it finds while tracking new buffers) and fails on any report.
 * Thread-safe: reports are collected under the list's lock.
 */
public final class NettyLeakCheck implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {

    private static final List<String> LEAKS = new ArrayList<>();

    static {
        ByteBufUtil.setLeakListener((resourceType, records) -> {
            synchronized (LEAKS) {
                LEAKS.add(resourceType + ": " + records);
            }
        });
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        if (ResourceLeakDetector.getLevel().ordinal() < ResourceLeakDetector.Level.PARANOID.ordinal()) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        assertNoLeaks();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        assertNoLeaks();
    }

    static void assertNoLeaks() {
        for (int round = 0; round < 3; round++) {
            System.gc();
            for (int i = 0; i < 8; i++) {
                ByteBuf pooled = PooledByteBufAllocator.DEFAULT.buffer(16);
                pooled.release();
                ByteBuf unpooled = UnpooledByteBufAllocator.DEFAULT.heapBuffer(16);
                unpooled.release();
            }
        }
        synchronized (LEAKS) {
            List<String> found = new ArrayList<>(LEAKS);
            LEAKS.clear();
            assertThat(found).as("Netty buffer leaks").isEmpty();
        }
    }
}
