package io.cairn.wire.message;

import io.cairn.wire.protocol.Message;
import io.netty.buffer.ByteBuf;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;

/** Releases every {@code records} buffer a generated message holds (decoded ones are retained slices). Stateless. */
final class MessageBuffers {

    private MessageBuffers() {
    }

    static void releaseAll(Object message) {
        if (message == null) {
            return;
        }
        for (Field field : message.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers())) {
                continue;
            }
            field.setAccessible(true);
            Object value;
            try {
                value = field.get(message);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            release(value);
        }
    }

    private static void release(Object value) {
        if (value instanceof ByteBuf buf) {
            if (buf.refCnt() > 0) {
                buf.release();
            }
        } else if (value instanceof Message nested) {
            releaseAll(nested);
        } else if (value instanceof List<?> list) {
            for (Object element : list) {
                release(element);
            }
        }
    }
}
