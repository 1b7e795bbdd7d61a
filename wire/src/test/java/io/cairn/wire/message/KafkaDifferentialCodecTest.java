package io.cairn.wire.message;

import com.fasterxml.jackson.databind.JsonNode;
import io.cairn.wire.message.SchemaCatalog.MessageSchema;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.Message;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Differential test of every generated codec against kafka-clients' generated classes: for every API (request
 * and response), the headers and the data schemas, at every version, seeded random messages are built twice
 * (Kafka object and Cairn object with the same content) and must (1) encode to identical bytes, (2) decode with
 * kafka-clients from Cairn's bytes to a message whose Kafka JSON equals the original's, and (3) decode with Cairn
 * from Kafka's bytes to an equal object that re-encodes byte-identically. Reproduce a failure with
 * {@code -Dcairn.seed=<seed>}.
 */
class KafkaDifferentialCodecTest {

    /** Random instances per (message, version); raise with {@code -Dcairn.differential.instances=N}. */
    private static final int INSTANCES_PER_VERSION = Integer.getInteger("cairn.differential.instances", 20);
    private static final long BASE_SEED = Long.getLong("cairn.seed", new Random().nextLong());

    private static SchemaCatalog catalog;

    @BeforeAll
    static void loadSchemas() {
        catalog = SchemaCatalog.load();
    }

    @Test
    void everyMessageVersionShouldBeByteCompatibleWithKafkaClients() throws Exception {
        // Given
        Map<String, MessageSchema> schemas = messagesToCheck();
        List<String> failures = new ArrayList<>();
        int pairs = 0;
        int instances = 0;

        // When
        for (MessageSchema schema : schemas.values()) {
            for (int v = schema.validVersions().lowest(); v <= schema.validVersions().highest(); v++) {
                pairs++;
                for (int i = 0; i < INSTANCES_PER_VERSION; i++) {
                    long seed = BASE_SEED ^ ((long) schema.className().hashCode() << 20) ^ ((long) v << 8) ^ i;
                    instances++;
                    try {
                        checkOne(schema, (short) v, seed);
                    } catch (AssertionError | Exception e) {
                        Throwable cause = e instanceof InvocationTargetException ite ? ite.getCause() : e;
                        failures.add(schema.className() + " v" + v + " instance " + i + " (cairn.seed=" + BASE_SEED
                                + ", instance seed " + seed + "): " + cause);
                    }
                }
            }
        }
        System.out.println("Differential codec check: " + pairs + " (message, version) pairs, " + instances
                + " instances (cairn.seed=" + BASE_SEED + ")");

        // Then
        assertThat(failures).as("failures with cairn.seed=" + BASE_SEED).isEmpty();
        assertThat(pairs).isEqualTo(expectedPairs());
    }

    /** Every API's request and response (from ApiKey), the two headers and the data schemas. */
    private static Map<String, MessageSchema> messagesToCheck() {
        Map<String, MessageSchema> result = new LinkedHashMap<>();
        for (ApiKey key : ApiKey.values()) {
            result.put(key.messageName() + "RequestData", catalog.byClassName(key.messageName() + "RequestData"));
            result.put(key.messageName() + "ResponseData", catalog.byClassName(key.messageName() + "ResponseData"));
        }
        for (MessageSchema schema : catalog.all().values()) {
            if (!schema.type().equals("request") && !schema.type().equals("response")) {
                result.put(schema.className(), schema);
            }
        }
        return result;
    }

    private static int expectedPairs() {
        int pairs = 0;
        for (ApiKey key : ApiKey.values()) {
            pairs += 2 * (key.highestSupportedVersion() - key.lowestSupportedVersion() + 1);
        }
        for (MessageSchema schema : catalog.all().values()) {
            if (!schema.type().equals("request") && !schema.type().equals("response")) {
                pairs += schema.validVersions().highest() - schema.validVersions().lowest() + 1;
            }
        }
        return pairs;
    }

    private static void checkOne(MessageSchema schema, short version, long seed) throws Exception {
        TwinMessageBuilder.Twin twin = new TwinMessageBuilder(schema, version, new Random(seed)).build();
        try {
            byte[] kafkaBytes = kafkaEncode(twin.kafka(), version);
            byte[] cairnBytes = cairnEncode(twin.cairn(), version);
            assertThat(HexFormat.of().formatHex(cairnBytes)).as("Cairn encoding equals Kafka's")
                    .isEqualTo(HexFormat.of().formatHex(kafkaBytes));

            ByteBuffer kafkaInput = ByteBuffer.wrap(cairnBytes);
            Object kafkaDecoded = twin.kafka().getClass().getConstructor(Readable.class, short.class)
                    .newInstance(new ByteBufferAccessor(kafkaInput), version);
            assertThat(kafkaInput.remaining()).as("Kafka consumed all of Cairn's bytes").isZero();
            if (isTopLevelKafkaData(twin.kafka())) {
                assertThat(json(kafkaDecoded, version)).as("Kafka JSON of Cairn's encoding")
                        .isEqualTo(json(twin.kafka(), version));
            }

            checkCairnDecode(twin.cairn(), kafkaBytes, version);
        } finally {
            MessageBuffers.releaseAll(twin.cairn());
        }
    }

    private static void checkCairnDecode(Message original, byte[] kafkaBytes, short version) throws Exception {
        ByteBuf input = PooledByteBufAllocator.DEFAULT.buffer(kafkaBytes.length);
        Message decoded = null;
        try {
            input.writeBytes(kafkaBytes);
            decoded = original.getClass().getConstructor(io.cairn.wire.protocol.WireReader.class, short.class)
                    .newInstance(new ByteBufAccessor(input), version);
            assertThat(input.readableBytes()).as("Cairn consumed all of Kafka's bytes").isZero();
            assertThat(decoded).as("Cairn decoding of Kafka's bytes").isEqualTo(original);
            assertThat(decoded.hashCode()).isEqualTo(original.hashCode());
            assertThat(HexFormat.of().formatHex(cairnEncode(decoded, version))).as("Cairn re-encoding")
                    .isEqualTo(HexFormat.of().formatHex(kafkaBytes));
        } finally {
            MessageBuffers.releaseAll(decoded);
            input.release();
        }
    }

    static byte[] kafkaEncode(org.apache.kafka.common.protocol.Message message, short version) {
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = message.size(cache, version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        message.write(new ByteBufferAccessor(buffer), cache, version);
        assertThat(buffer.remaining()).as("Kafka wrote its computed size").isZero();
        return buffer.array();
    }

    static byte[] cairnEncode(Message message, short version) {
        SerializationCache cache = new SerializationCache();
        int size = message.size(cache, version);
        ByteBuf buffer = PooledByteBufAllocator.DEFAULT.buffer(size);
        try {
            message.write(new ByteBufAccessor(buffer), cache, version);
            assertThat(buffer.readableBytes()).as("Cairn wrote its computed size").isEqualTo(size);
            return ByteBufUtil.getBytes(buffer);
        } finally {
            buffer.release();
        }
    }

    private static boolean isTopLevelKafkaData(Object message) {
        return message.getClass().getEnclosingClass() == null;
    }

    private static JsonNode json(Object kafkaMessage, short version) throws Exception {
        Class<?> converter = Class.forName(kafkaMessage.getClass().getName() + "JsonConverter");
        Method write = converter.getMethod("write", kafkaMessage.getClass(), short.class);
        return (JsonNode) write.invoke(null, kafkaMessage, version);
    }
}
