package io.cairn.broker.quota;

import io.cairn.wire.protocol.ApiMessage;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Sets the {@code throttle_time_ms} of any response that has one (every client-facing Kafka response does; the
 * generated classes share no interface for it, so the setter is looked up once per class). Used only for a throttled
 * response. Stateless apart from the per-class cache, thread-safe.
 */
final class ThrottleTimes {

    private static final ClassValue<MethodHandle> SETTERS = new ClassValue<>() {
        @Override
        protected MethodHandle computeValue(Class<?> type) {
            try {
                return MethodHandles.publicLookup().findVirtual(type, "setThrottleTimeMs",
                        MethodType.methodType(type, int.class));
            } catch (NoSuchMethodException | IllegalAccessException e) {
                return null;
            }
        }
    };

    private ThrottleTimes() {
    }

    /** Sets {@code throttleTimeMs} on {@code response}; false when its type has no throttle time. */
    static boolean set(ApiMessage response, int throttleTimeMs) {
        MethodHandle setter = SETTERS.get(response.getClass());
        if (setter == null) {
            return false;
        }
        try {
            setter.invoke(response, throttleTimeMs);
            return true;
        } catch (Throwable e) {
            throw new IllegalStateException("Cannot set the throttle time of " + response.getClass().getName(), e);
        }
    }
}
