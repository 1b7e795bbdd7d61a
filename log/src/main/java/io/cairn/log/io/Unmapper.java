package io.cairn.log.io;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Releases a memory mapping at once instead of waiting for the garbage collector, so the number of live mappings
 * (bounded by {@code vm.max_map_count}, 65,530 by default) follows the number of open indexes. Uses
 * {@code sun.misc.Unsafe.invokeCleaner} (module {@code jdk.unsupported}), as Kafka's {@code ByteBufferUnmapper}
 * does; falls back to leaving the mapping to the GC. Thread-safe; the caller must never touch the buffer again.
 */
public final class Unmapper {

    private static final Logger LOGGER = LogManager.getLogger(Unmapper.class);
    private static final Object UNSAFE;
    private static final Method INVOKE_CLEANER;

    static {
        Object unsafe = null;
        Method cleaner = null;
        try {
            Class<?> type = Class.forName("sun.misc.Unsafe");
            Field field = type.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            unsafe = field.get(null);
            cleaner = type.getMethod("invokeCleaner", ByteBuffer.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOGGER.warn("Cannot unmap index files eagerly, mappings will be released by the GC: {}", e.toString());
        }
        UNSAFE = unsafe;
        INVOKE_CLEANER = cleaner;
    }

    private Unmapper() {
    }

    /** Unmaps {@code buffer}; a no-op when unmapping is unavailable. */
    public static void unmap(MappedByteBuffer buffer) {
        if (buffer == null || INVOKE_CLEANER == null) {
            return;
        }
        try {
            INVOKE_CLEANER.invoke(UNSAFE, buffer);
        } catch (ReflectiveOperationException e) {
            LOGGER.warn("Unmapping failed: {}", e.toString());
        }
    }
}
