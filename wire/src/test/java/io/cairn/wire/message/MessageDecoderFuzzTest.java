package io.cairn.wire.message;

import io.cairn.wire.message.DecoderCatalog.Decoder;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fuzzes every generated decoder (each API request and response at each version, the headers, the data schemas)
 * with random bytes and with mutated valid encodings (bit flips, truncation, overwritten length prefixes, inserted
 * and deleted bytes): a decoder may only return or throw {@code MessageDecodeException} or
 * {@code UnsupportedVersionException} — never an IndexOutOfBounds, NegativeArraySize or OutOfMemory error — and
 * must leak no buffer. Bounded: a few seconds in {@code mvn verify}. jqwik prints the seed of a failure.
 */
class MessageDecoderFuzzTest {

    /** The sweep over every decoder: truncations and mutations of one valid encoding each. */
    private static final int TRUNCATIONS_PER_DECODER = 6;
    private static final int MUTATIONS_PER_DECODER = 3;

    private static List<Decoder> decoders;
    private static SchemaCatalog catalog;

    @BeforeContainer
    static void loadDecoders() {
        catalog = SchemaCatalog.load();
        decoders = DecoderCatalog.all(catalog);
    }

    @Provide
    Arbitrary<Decoder> anyDecoder() {
        return Arbitraries.of(decoders);
    }

    @Property(tries = 1000)
    void randomBytesShouldOnlyFailWithDecodeErrors(@ForAll("anyDecoder") Decoder decoder,
            @ForAll @Size(max = 96) byte[] bytes) throws Throwable {
        // Given random bytes

        // When
        decoder.decodeAndReencode(bytes);

        // Then no other exception escaped
    }

    @Property(tries = 400)
    void mutatedValidEncodingsShouldOnlyFailWithDecodeErrors(@ForAll("anyDecoder") Decoder decoder,
            @ForAll long seed) throws Throwable {
        // Given
        Random random = new Random(seed);
        byte[] mutated = mutate(validEncoding(decoder, random), random);

        // When
        decoder.decodeAndReencode(mutated);

        // Then no other exception escaped
    }

    @Property(tries = 1)
    void everyDecoderShouldRejectTruncationsAndMutationsOfAValidEncodingCleanly(@ForAll long seed) throws Throwable {
        // Given
        Random random = new Random(seed);
        int decodes = 0;

        // When
        for (Decoder decoder : decoders) {
            byte[] valid = validEncoding(decoder, random);
            for (int i = 0; i < TRUNCATIONS_PER_DECODER && valid.length > 0; i++) {
                int length = i == 0 ? valid.length - 1 : random.nextInt(valid.length);
                decoder.decodeAndReencode(Arrays.copyOf(valid, length));
                decodes++;
            }
            for (int i = 0; i < MUTATIONS_PER_DECODER; i++) {
                decoder.decodeAndReencode(mutate(valid, random));
                decodes++;
            }
        }

        // Then
        int apiPairs = 0;
        for (ApiKey key : ApiKey.values()) {
            apiPairs += 2 * (key.highestSupportedVersion() - key.lowestSupportedVersion() + 1);
        }
        long apiDecoders = decoders.stream().filter(d -> d.type().getSimpleName().endsWith("RequestData")
                || d.type().getSimpleName().endsWith("ResponseData")).count();
        System.out.println("Decoder fuzz sweep: " + decoders.size() + " (message, version) decoders, " + decodes
                + " decodes");
        assertThat(apiDecoders).isEqualTo(apiPairs);
        assertThat(decodes).isGreaterThanOrEqualTo(decoders.size() * MUTATIONS_PER_DECODER);
    }

    private static byte[] validEncoding(Decoder decoder, Random random) throws ReflectiveOperationException {
        SchemaCatalog.MessageSchema schema = catalog.byClassName(decoder.type().getSimpleName());
        short version = decoder.version();
        if (!schema.validVersions().contains(version)) {
            // Request header v0: the v1 fields minus the client id.
            byte[] v1 = validEncoding(new Decoder(decoder.type(), (short) 1, decoder.constructor()), random);
            return Arrays.copyOf(v1, 8);
        }
        TwinMessageBuilder.Twin twin = new TwinMessageBuilder(schema, version, random).build();
        try {
            return KafkaDifferentialCodecTest.cairnEncode(twin.cairn(), version);
        } finally {
            MessageBuffers.releaseAll(twin.cairn());
        }
    }

    private static byte[] mutate(byte[] valid, Random random) {
        byte[] bytes = valid.clone();
        int mutations = 1 + random.nextInt(3);
        for (int m = 0; m < mutations; m++) {
            if (bytes.length == 0) {
                bytes = new byte[] {(byte) random.nextInt()};
                continue;
            }
            int at = random.nextInt(bytes.length);
            switch (random.nextInt(6)) {
                case 0 -> bytes[at] ^= (byte) (1 << random.nextInt(8));
                case 1 -> bytes = Arrays.copyOf(bytes, at);
                case 2 -> overwrite(bytes, at, random);
                case 3 -> bytes = insert(bytes, at, random);
                case 4 -> bytes = delete(bytes, at, random);
                default -> bytes[at] = (byte) random.nextInt();
            }
        }
        return bytes;
    }

    /** Overwrites what may be a length prefix with a hostile value: -1, 0, huge, or a long varint. */
    private static void overwrite(byte[] bytes, int at, Random random) {
        byte[][] hostile = {
            {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff},
            {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff},
            {(byte) 0x80, 0, 0, 0},
            {0, 0, 0, 0},
            {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x0f},
            {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x01},
            {0x7f, (byte) 0xff},
            {(byte) 0xff, (byte) 0xff},
        };
        byte[] value = hostile[random.nextInt(hostile.length)];
        for (int i = 0; i < value.length && at + i < bytes.length; i++) {
            bytes[at + i] = value[i];
        }
    }

    private static byte[] insert(byte[] bytes, int at, Random random) {
        byte[] extra = new byte[1 + random.nextInt(4)];
        random.nextBytes(extra);
        byte[] result = new byte[bytes.length + extra.length];
        System.arraycopy(bytes, 0, result, 0, at);
        System.arraycopy(extra, 0, result, at, extra.length);
        System.arraycopy(bytes, at, result, at + extra.length, bytes.length - at);
        return result;
    }

    private static byte[] delete(byte[] bytes, int at, Random random) {
        int count = Math.min(1 + random.nextInt(4), bytes.length - at);
        byte[] result = new byte[bytes.length - count];
        System.arraycopy(bytes, 0, result, 0, at);
        System.arraycopy(bytes, at + count, result, at, bytes.length - at - count);
        return result;
    }
}
