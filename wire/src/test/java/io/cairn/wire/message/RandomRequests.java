package io.cairn.wire.message;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ResponseHeader;
import org.apache.kafka.common.utils.Crc32C;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Random;

/**
 * Random, well-formed request bodies of any API at any version, as kafka-clients objects, for tests that fuzz a live
 * broker with input that decodes (wire's own fuzz tests cover input that does not). The values are
 * {@link TwinMessageBuilder}'s: every field the version has, null only where nullable, boundary numbers, short
 * strings from a small vocabulary, up to three array elements, records as a few random bytes. {@link #steered} then
 * points some names, ids and partitions at a real topic and gives Produce real batches, so that a request gets past
 * the broker's first lookup. Thread-safe; the schemas are read once.
 */
public final class RandomRequests {

    /** Where a v2 batch's attributes start: its CRC covers the bytes from here on. */
    private static final int ATTRIBUTES_OFFSET = DefaultRecordBatch.CRC_OFFSET + 4;
    private static volatile SchemaCatalog catalog;

    /** The topic a steered request names: its name, its id and how many partitions it has. */
    public record Target(String topic, Uuid topicId, int partitions) {
    }

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

    /**
     * A random body as {@link #body} makes it, with half of its topic names, topic ids and partition indexes set to
     * {@code target}'s (where the version has the field), Produce's acks mostly -1, 0 or 1 and half of its partitions
     * given a real batch ({@link #batch}), and Fetch's long poll kept under 200 ms.
     */
    public static Message steered(ApiKeys apiKey, short version, Random random, Target target) {
        Message body = body(apiKey, version, random);
        try {
            steer(body, body, version, random, target);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        return body;
    }

    private static void steer(Message root, Object message, short version, Random random, Target target)
            throws ReflectiveOperationException {
        for (Object nested : children(message)) {
            steer(root, nested, version, random, target);
        }
        Steering steering = new Steering(root, message, version, random);
        steering.sometimes("Name", String.class, target.topic());
        steering.sometimes("Topic", String.class, target.topic());
        steering.sometimes("TopicName", String.class, target.topic());
        steering.sometimes("TopicId", Uuid.class, target.topicId());
        steering.sometimes("PartitionIndex", int.class, random.nextInt(target.partitions() + 1) - 1);
        steering.sometimes("Partition", int.class, random.nextInt(target.partitions() + 1) - 1);
        steering.sometimes("MaxWaitMs", int.class, random.nextInt(200));
        if (message instanceof ProduceRequestData produce) {
            produce.setAcks((short) new int[] {-1, 0, 1, produce.acks()}[random.nextInt(4)]);
        }
        if (message instanceof ProduceRequestData.PartitionProduceData partition && random.nextBoolean()) {
            partition.setRecords(batch(random));
        }
    }

    /**
     * A v2 batch of one to three records, compressed or not, plain, idempotent or transactional with small producer
     * ids, epochs and sequences (so the broker accepts some and refuses others for their producer state); a third of
     * them have one to three bytes changed past the CRC's start and the CRC fixed up, so that the change reaches the
     * broker's validator.
     */
    public static MemoryRecords batch(Random random) {
        Compression compression = switch (random.nextInt(4)) {
            case 0 -> Compression.gzip().build();
            case 1 -> Compression.lz4().build();
            case 2 -> Compression.zstd().build();
            default -> Compression.NONE;
        };
        SimpleRecord[] records = new SimpleRecord[1 + random.nextInt(3)];
        for (int i = 0; i < records.length; i++) {
            records[i] = new SimpleRecord(System.currentTimeMillis(), ("k" + i).getBytes(StandardCharsets.UTF_8),
                    ("value-" + random.nextInt()).getBytes(StandardCharsets.UTF_8));
        }
        long producerId = random.nextInt(3) == 0 ? RecordBatch.NO_PRODUCER_ID : random.nextInt(5);
        short epoch = (short) (producerId < 0 ? RecordBatch.NO_PRODUCER_EPOCH : random.nextInt(3));
        int sequence = producerId < 0 ? RecordBatch.NO_SEQUENCE : random.nextInt(4);
        boolean transactional = producerId >= 0 && random.nextBoolean();
        MemoryRecords batch = MemoryRecords.withRecords(RecordBatch.CURRENT_MAGIC_VALUE, 0L, compression,
                TimestampType.CREATE_TIME, producerId, epoch, sequence, RecordBatch.NO_PARTITION_LEADER_EPOCH,
                transactional, records);
        if (random.nextInt(3) == 0) {
            ByteBuffer bytes = batch.buffer();
            for (int i = 1 + random.nextInt(3); i > 0; i--) {
                int at = ATTRIBUTES_OFFSET + random.nextInt(bytes.limit() - ATTRIBUTES_OFFSET);
                bytes.put(at, (byte) random.nextInt(256));
            }
            bytes.putInt(DefaultRecordBatch.CRC_OFFSET,
                    (int) Crc32C.compute(bytes, ATTRIBUTES_OFFSET, bytes.limit() - ATTRIBUTES_OFFSET));
        }
        return batch;
    }

    /** Every error code in {@code message} and its structs (the {@code errorCode} and {@code ...ErrorCode} fields). */
    public static List<Short> errorCodes(Object message) {
        List<Short> codes = new ArrayList<>();
        try {
            collectErrors(message, codes);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        return codes;
    }

    /**
     * Whether Kafka itself answers {@code body} with UNKNOWN_SERVER_ERROR: an isolation level other than 0 and 1
     * fails Fetch and ListOffsets as a whole in Kafka's request parser ({@code IsolationLevel.forId}).
     */
    public static boolean kafkaAnswersUnknownServerError(Message body) {
        byte isolation = body instanceof FetchRequestData fetch ? fetch.isolationLevel()
                : body instanceof ListOffsetsRequestData list ? list.isolationLevel() : 0;
        return isolation != 0 && isolation != 1;
    }

    /**
     * Checks one response frame (its payload) to {@code body}: the correlation id is {@code correlationId},
     * kafka-clients parses the body with nothing left over, and no error code in it is UNKNOWN_SERVER_ERROR unless
     * Kafka answers the same ({@link #kafkaAnswersUnknownServerError}). Adds what breaks those rules to
     * {@code failures}, each naming {@code what}; returns the parsed body, or null when it could not be parsed.
     */
    public static ApiMessage checkAnswer(ApiKeys key, short version, int correlationId, ByteBuffer frame,
            Message body, String what, List<String> failures) {
        ResponseHeader header = ResponseHeader.parse(frame, key.responseHeaderVersion(version));
        if (header.correlationId() != correlationId) {
            failures.add(what + ": correlation id " + header.correlationId() + " instead of " + correlationId);
            return null;
        }
        ApiMessage response;
        try {
            response = AbstractResponse.parseResponse(key, new ByteBufferAccessor(frame), version).data();
        } catch (RuntimeException e) {
            failures.add(what + ": kafka-clients cannot parse the response: " + e);
            return null;
        }
        if (frame.hasRemaining()) {
            failures.add(what + ": " + frame.remaining() + " bytes after the response body");
        }
        if (errorCodes(response).contains(Errors.UNKNOWN_SERVER_ERROR.code())
                && !kafkaAnswersUnknownServerError(body)) {
            failures.add(what + ": UNKNOWN_SERVER_ERROR for " + brief(body) + " -> " + brief(response));
        }
        return response;
    }

    /** {@code message} as text, cut at 600 characters (for assertion messages). */
    public static String brief(Object message) {
        String text = String.valueOf(message);
        return text.length() <= 600 ? text : text.substring(0, 600) + "...";
    }

    private static void collectErrors(Object message, List<Short> codes) throws ReflectiveOperationException {
        for (Method getter : getters(message)) {
            if ((getter.getName().equals("errorCode") || getter.getName().endsWith("ErrorCode"))
                    && getter.invoke(message) instanceof Short code) {
                codes.add(code);
            }
        }
        for (Object nested : children(message)) {
            collectErrors(nested, codes);
        }
    }

    /** The structs directly inside a generated message: its struct fields and the elements of its arrays. */
    private static List<Object> children(Object message) throws ReflectiveOperationException {
        List<Object> children = new ArrayList<>();
        for (Method getter : getters(message)) {
            Object value = getter.invoke(message);
            if (value instanceof Message && value != message) {
                children.add(value);
            } else if (value instanceof Collection<?> elements) {
                for (Object element : elements) {
                    if (element instanceof Message) {
                        children.add(element);
                    }
                }
            }
        }
        return children;
    }

    /** The public no-argument instance methods of a generated message that read a field. */
    private static List<Method> getters(Object message) {
        List<Method> getters = new ArrayList<>();
        for (Method method : message.getClass().getMethods()) {
            if (method.getParameterCount() == 0 && !Modifier.isStatic(method.getModifiers())
                    && method.getDeclaringClass() != Object.class && !method.getName().equals("duplicate")
                    && !method.getName().equals("toString") && !method.getName().equals("hashCode")) {
                getters.add(method);
            }
        }
        return getters;
    }

    /** Sets a field of one struct half the time, and only where the version has the field. */
    private record Steering(Message root, Object message, short version, Random random) {

        void sometimes(String field, Class<?> type, Object value) throws ReflectiveOperationException {
            if (!random.nextBoolean()) {
                return;
            }
            Method setter;
            Method getter;
            try {
                setter = message.getClass().getMethod("set" + field, type);
                getter = message.getClass().getMethod(Character.toLowerCase(field.charAt(0)) + field.substring(1));
            } catch (NoSuchMethodException e) {
                return;
            }
            Object before = getter.invoke(message);
            setter.invoke(message, value);
            try {
                root.size(new ObjectSerializationCache(), version);
            } catch (UnsupportedVersionException e) {
                setter.invoke(message, before); // not a field of this version
            }
        }
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
