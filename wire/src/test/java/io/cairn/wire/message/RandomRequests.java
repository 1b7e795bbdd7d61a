package io.cairn.wire.message;

import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Message;

import java.util.Random;

/**
 * Random, well-formed request bodies of any API at any version, as kafka-clients objects, for tests that fuzz a live
 * broker with input that decodes (wire's own fuzz tests cover input that does not). The values are
 * {@link TwinMessageBuilder}'s: every field the version has, null only where nullable, boundary numbers, short
 * strings from a small vocabulary (so that names such as {@code topic-1} recur), up to three array elements, records
 * as a few random bytes. Thread-safe; the schemas are read once.
 */
public final class RandomRequests {

    private static volatile SchemaCatalog catalog;

    private RandomRequests() {
    }

    /** A random request body of {@code apiKey} at {@code version}, drawn from {@code random}. */
    public static Message body(ApiKeys apiKey, short version, Random random) {
        String className = apiKey.messageType.newRequest().getClass().getSimpleName();
        TwinMessageBuilder.Twin twin;
        try {
            twin = new TwinMessageBuilder(catalog().byClassName(className), version, random).build();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Cannot build a random " + className + " v" + version, e);
        }
        MessageBuffers.releaseAll(twin.cairn());
        return twin.kafka();
    }

    private static SchemaCatalog catalog() {
        SchemaCatalog loaded = catalog;
        if (loaded == null) {
            synchronized (RandomRequests.class) {
                loaded = catalog;
                if (loaded == null) {
                    loaded = SchemaCatalog.load();
                    catalog = loaded;
                }
            }
        }
        return loaded;
    }
}
