package io.cairn.testkit;

import io.netty.buffer.AbstractByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Fails a test when Netty's leak detector reports a {@link ByteBuf} that was garbage-collected without being
 * released. The poms run tests with {@code -Dio.netty.leakDetection.level=paranoid}, so every buffer is tracked;
 * after each test this extension runs the garbage collector, makes the detector drain its queue, and throws an
 * {@link AssertionError} with Netty's access records if anything leaked.
 *
 * <p>Register it on a class with {@code @ExtendWith(LeakDetection.class)}, or for every test of a module by JUnit's
 * extension auto-detection ({@code junit.jupiter.extensions.autodetection.enabled=true}; testkit lists it in
 * {@code META-INF/services}). It listens on the detector that {@code AbstractByteBuf} created, so it works however
 * late it is installed. Thread-safe: reports arrive on any thread into a concurrent queue.
 */
public final class LeakDetection implements AfterEachCallback, AfterAllCallback {

    private static final Queue<String> LEAKS = new ConcurrentLinkedQueue<>();
    private static final int GC_ROUNDS = 3;
    private static final long GC_PAUSE_MILLIS = 20;

    static {
        listen();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        drainAndAssert(context.getDisplayName());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        assertNoLeaks(context.getDisplayName());
    }

    /**
     * Collects garbage, lets the detector report what it found, and throws an {@link AssertionError} listing every
     * leak reported since the last call; {@code context} names the test in the message.
     */
    public static void assertNoLeaks(String context) {
        for (int i = 0; i < GC_ROUNDS; i++) {
            System.gc();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(GC_PAUSE_MILLIS));
            pollDetector();
        }
        drainAndAssert(context);
    }

    /** Tracking a new buffer (direct: unpooled heap buffers are not tracked) makes the detector poll its queue. */
    private static void pollDetector() {
        ByteBuf probe = UnpooledByteBufAllocator.DEFAULT.directBuffer(1);
        probe.release();
    }

    private static void drainAndAssert(String context) {
        pollDetector();
        List<String> leaks = new ArrayList<>();
        for (String leak = LEAKS.poll(); leak != null; leak = LEAKS.poll()) {
            leaks.add(leak);
        }
        if (!leaks.isEmpty()) {
            throw new AssertionError("Netty reported " + leaks.size() + " leaked ByteBuf(s) after " + context
                    + " (a buffer was garbage-collected without release()):\n" + String.join("\n\n", leaks));
        }
    }

    private static void listen() {
        if (ResourceLeakDetector.getLevel() == ResourceLeakDetector.Level.DISABLED) {
            ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        }
        try {
            Field field = AbstractByteBuf.class.getDeclaredField("leakDetector");
            field.setAccessible(true);
            ResourceLeakDetector<?> detector = (ResourceLeakDetector<?>) field.get(null);
            detector.setLeakListener((resourceType, records) -> LEAKS.add("LEAK: " + resourceType + records));
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("Cannot listen to Netty's ByteBuf leak detector "
                    + "(AbstractByteBuf.leakDetector); has Netty changed?", e);
        }
    }
}
