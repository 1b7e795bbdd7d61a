package io.cairn.wire.message;

import com.fasterxml.jackson.databind.JsonNode;
import io.cairn.wire.message.SchemaCatalog.MessageSchema;
import io.cairn.wire.message.SchemaCatalog.Range;
import io.cairn.wire.protocol.Message;
import io.cairn.wire.protocol.RawTaggedField;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.Unpooled;
import org.apache.kafka.common.record.MemoryRecords;

import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Builds the same random message twice, as a kafka-clients object and as a Cairn object, setting only the fields
 * the schema has at the version (null only where nullable, tagged fields sometimes at their default, sometimes
 * unknown tagged fields), in the manner of Kroxylicious's {@code ApiMessageSampleGenerator} but driven by the JSON
 * schemas. Records are small arbitrary byte payloads. Not thread-safe; one builder per instance.
 */
final class TwinMessageBuilder {

    private static final String KAFKA_PACKAGE = "org.apache.kafka.common.message.";
    private static final String CAIRN_PACKAGE = "io.cairn.wire.message.";
    private static final Map<Class<?>, Map<String, Method>> SETTERS = new ConcurrentHashMap<>();
    private static final Map<String, Class<?>> CLASSES = new ConcurrentHashMap<>();
    private static final String[] WORDS = {
        "", "a", "topic-1", "é", "日本語", "\uD83D\uDE00", "consumer group", "x.y_z",
    };

    /** The two objects of one random message. */
    record Twin(org.apache.kafka.common.protocol.Message kafka, Message cairn) {
    }

    private final MessageSchema schema;
    private final short version;
    private final Random random;

    TwinMessageBuilder(MessageSchema schema, short version, Random random) {
        this.schema = schema;
        this.version = version;
        this.random = random;
    }

    Twin build() throws ReflectiveOperationException {
        Object kafka = classNamed(KAFKA_PACKAGE + schema.className()).getConstructor().newInstance();
        Message cairn = (Message) classNamed(CAIRN_PACKAGE + schema.className()).getConstructor().newInstance();
        populate(kafka, cairn, schema.fields());
        return new Twin((org.apache.kafka.common.protocol.Message) kafka, cairn);
    }

    private void populate(Object kafka, Object cairn, JsonNode fields) throws ReflectiveOperationException {
        TreeSet<Integer> knownTags = new TreeSet<>();
        for (JsonNode field : fields) {
            if (field.has("tag")) {
                knownTags.add(field.get("tag").asInt());
            }
            if (!Range.parse(field.get("versions").asText()).contains(version)) {
                continue;
            }
            boolean nullable = field.has("nullableVersions")
                    && Range.parse(field.get("nullableVersions").asText()).contains(version);
            // Leave some fields at their default; not records ones that must not be null (their default is null).
            boolean mustSet = field.get("type").asText().equals("records") && !nullable;
            if (!mustSet && random.nextInt(5) == 0) {
                continue;
            }
            String name = field.get("name").asText();
            Method kafkaSetter = setter(kafka.getClass(), name);
            Method cairnSetter = setter(cairn.getClass(), name);
            Object[] values = randomValue(field, field.get("type").asText(), nullable, kafkaSetter, kafka.getClass());
            kafkaSetter.invoke(kafka, values[0]);
            cairnSetter.invoke(cairn, values[1]);
        }
        if (schema.flexibleVersions().contains(version) && random.nextInt(4) == 0) {
            addUnknownTaggedFields((org.apache.kafka.common.protocol.Message) kafka, (Message) cairn, knownTags);
        }
    }

    private void addUnknownTaggedFields(org.apache.kafka.common.protocol.Message kafka, Message cairn,
            TreeSet<Integer> knownTags) {
        TreeSet<Integer> tags = new TreeSet<>();
        int count = 1 + random.nextInt(3);
        while (tags.size() < count) {
            int tag = random.nextInt(12) == 0 ? 200 + random.nextInt(100) : random.nextInt(8);
            if (!knownTags.contains(tag)) {
                tags.add(tag);
            }
        }
        for (int tag : tags) {
            byte[] data = randomBytes(6);
            kafka.unknownTaggedFields().add(new org.apache.kafka.common.protocol.types.RawTaggedField(tag, data));
            cairn.unknownTaggedFields().add(new RawTaggedField(tag, data.clone()));
        }
    }

    private static Method setter(Class<?> type, String fieldName) {
        String setterName = "set" + Character.toUpperCase(fieldName.charAt(0)) + fieldName.substring(1);
        Method setter = SETTERS.computeIfAbsent(type, TwinMessageBuilder::settersOf).get(setterName);
        if (setter == null) {
            throw new IllegalStateException(type.getName() + " has no " + setterName);
        }
        return setter;
    }

    private static Map<String, Method> settersOf(Class<?> type) {
        Map<String, Method> setters = new HashMap<>();
        for (Method method : type.getMethods()) {
            if (method.getName().startsWith("set") && method.getParameterCount() == 1) {
                setters.put(method.getName(), method);
            }
        }
        return setters;
    }

    private static Class<?> classNamed(String name) {
        return CLASSES.computeIfAbsent(name, n -> {
            try {
                return Class.forName(n);
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** A pair {kafka value, cairn value} for a field of schema type {@code type}. */
    private Object[] randomValue(JsonNode field, String type, boolean nullable, Method kafkaSetter,
            Class<?> kafkaOwner) throws ReflectiveOperationException {
        if (type.startsWith("[]")) {
            return randomArray(field, type.substring(2), nullable, kafkaSetter, kafkaOwner);
        }
        switch (type) {
            case "bool": {
                boolean v = random.nextBoolean();
                return new Object[] {v, v};
            }
            case "int8": {
                byte v = (byte) pick(random.nextInt(), -1, 0, Byte.MAX_VALUE, Byte.MIN_VALUE);
                return new Object[] {v, v};
            }
            case "int16": {
                short v = (short) pick(random.nextInt(), -1, 0, Short.MAX_VALUE, Short.MIN_VALUE);
                return new Object[] {v, v};
            }
            case "uint16": {
                int v = pick(random.nextInt(65536), 0, 65535, 1, 32768);
                return new Object[] {v, v};
            }
            case "int32": {
                int v = pick(random.nextInt(), -1, 0, Integer.MAX_VALUE, Integer.MIN_VALUE);
                return new Object[] {v, v};
            }
            case "uint32": {
                long v = random.nextInt(8) == 0 ? 4294967295L : random.nextLong() & 0xffffffffL;
                return new Object[] {v, v};
            }
            case "int64": {
                long v = random.nextInt(8) == 0 ? -1L : random.nextInt(8) == 0 ? Long.MAX_VALUE : random.nextLong();
                return new Object[] {v, v};
            }
            case "float64": {
                double v = random.nextInt(8) == 0 ? 0.0 : (random.nextDouble() - 0.5) * 1e6;
                return new Object[] {v, v};
            }
            case "uuid":
                return randomUuid();
            case "string": {
                if (nullable && random.nextInt(5) == 0) {
                    return new Object[] {null, null};
                }
                String v = randomString();
                return new Object[] {v, v};
            }
            case "bytes": {
                if (nullable && random.nextInt(5) == 0) {
                    return new Object[] {null, null};
                }
                byte[] v = randomBytes(8);
                Object kafkaValue = kafkaSetter.getParameterTypes()[0] == ByteBuffer.class ? ByteBuffer.wrap(v) : v;
                return new Object[] {kafkaValue, v.clone()};
            }
            case "records": {
                if (nullable && random.nextInt(5) == 0) {
                    return new Object[] {null, null};
                }
                byte[] v = randomBytes(24);
                return new Object[] {
                    MemoryRecords.readableRecords(ByteBuffer.wrap(v)), Unpooled.wrappedBuffer(v.clone()),
                };
            }
            default:
                if (nullable && random.nextInt(4) == 0) {
                    return new Object[] {null, null};
                }
                return randomStruct(type, field, kafkaOwner);
        }
    }

    private Object[] randomStruct(String structName, JsonNode field, Class<?> kafkaOwner)
            throws ReflectiveOperationException {
        Class<?> kafkaTop = kafkaOwner.getEnclosingClass() != null ? kafkaOwner.getEnclosingClass() : kafkaOwner;
        Object kafka = classNamed(kafkaTop.getName() + "$" + structName).getConstructor().newInstance();
        Object cairn = classNamed(CAIRN_PACKAGE + schema.className() + "$" + structName).getConstructor()
                .newInstance();
        populate(kafka, cairn, field.has("fields") ? field.get("fields") : schema.structFields(structName));
        return new Object[] {kafka, cairn};
    }

    @SuppressWarnings("unchecked")
    private Object[] randomArray(JsonNode field, String elementType, boolean nullable, Method kafkaSetter,
            Class<?> kafkaOwner) throws ReflectiveOperationException {
        if (nullable && random.nextInt(5) == 0) {
            return new Object[] {null, null};
        }
        Class<?> kafkaListType = kafkaSetter.getParameterTypes()[0];
        Collection<Object> kafkaList = kafkaListType.isInterface() ? new ArrayList<>()
                : (Collection<Object>) kafkaListType.getConstructor().newInstance();
        List<Object> cairnList = new ArrayList<>();
        int size = random.nextInt(4);
        for (int i = 0; i < size; i++) {
            Object[] element = randomValue(field, elementType, false, kafkaSetter, kafkaOwner);
            kafkaList.add(element[0]);
            cairnList.add(element[1]);
        }
        return new Object[] {kafkaList, cairnList};
    }

    private Object[] randomUuid() {
        long msb = random.nextInt(8) == 0 ? 0L : random.nextLong();
        long lsb = msb == 0L ? 0L : random.nextLong();
        return new Object[] {new org.apache.kafka.common.Uuid(msb, lsb), new Uuid(msb, lsb)};
    }

    private int pick(int randomValue, int... interesting) {
        return random.nextInt(4) == 0 ? interesting[random.nextInt(interesting.length)] : randomValue;
    }

    private String randomString() {
        StringBuilder text = new StringBuilder();
        int parts = random.nextInt(3);
        for (int i = 0; i < parts; i++) {
            text.append(WORDS[random.nextInt(WORDS.length)]);
        }
        if (random.nextInt(10) == 0) {
            text.append(new String(randomBytes(4), StandardCharsets.ISO_8859_1));
        }
        return text.toString();
    }

    private byte[] randomBytes(int maxLength) {
        byte[] bytes = new byte[random.nextInt(maxLength + 1)];
        random.nextBytes(bytes);
        return bytes;
    }
}
