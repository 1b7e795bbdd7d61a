package io.cairn.wire.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.apache.kafka.common.utils.ByteUtils;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.BiConsumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Properties of {@link ByteBufAccessor}'s varints: round trips, sizes agreeing with {@link Varints} and Kafka. */
class ByteBufAccessorVarintTest {

    @Property
    void unsignedVarintShouldRoundTripWithTheSizeVarintsPredicts(@ForAll int value) {
        // Given / When
        byte[] encoded = encode(value, (w, v) -> w.writeUnsignedVarint(v));

        // Then
        assertThat(encoded).hasSize(Varints.sizeOfUnsignedVarint(value));
        assertThat(decode(encoded).readUnsignedVarint()).isEqualTo(value);
        ByteBuffer kafka = ByteBuffer.allocate(5);
        ByteUtils.writeUnsignedVarint(value, kafka);
        assertThat(encoded).isEqualTo(Arrays.copyOf(kafka.array(), kafka.position()));
    }

    @Property
    void varintShouldRoundTripWithTheSizeVarintsPredicts(@ForAll int value) {
        // Given / When
        byte[] encoded = encode(value, (w, v) -> w.writeVarint(v));

        // Then
        assertThat(encoded).hasSize(Varints.sizeOfVarint(value));
        assertThat(decode(encoded).readVarint()).isEqualTo(value);
        assertThat(ByteUtils.sizeOfVarint(value)).isEqualTo(encoded.length);
    }

    @Property
    void varlongShouldRoundTripWithTheSizeVarintsPredicts(@ForAll long value) {
        // Given / When
        byte[] encoded = encodeLong(value);

        // Then
        assertThat(encoded).hasSize(Varints.sizeOfVarlong(value));
        assertThat(decode(encoded).readVarlong()).isEqualTo(value);
        ByteBuffer kafka = ByteBuffer.allocate(10);
        ByteUtils.writeVarlong(value, kafka);
        assertThat(encoded).isEqualTo(Arrays.copyOf(kafka.array(), kafka.position()));
    }

    @Property
    void truncatedVarintsShouldFailWithMessageDecodeException(@ForAll int value) {
        // Given
        byte[] encoded = encode(value, (w, v) -> w.writeUnsignedVarint(v));
        byte[] truncated = Arrays.copyOf(encoded, encoded.length - 1);

        // When / Then
        assertThatThrownBy(() -> decode(truncated).readUnsignedVarint()).isInstanceOf(MessageDecodeException.class);
    }

    @Example
    void anOverlongVarintShouldFailWithMessageDecodeException() {
        // Given six continuation bytes
        byte[] overlong = {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x01};

        // When / Then
        assertThatThrownBy(() -> decode(overlong).readUnsignedVarint()).isInstanceOf(MessageDecodeException.class);
    }

    private static byte[] encode(int value, BiConsumer<WireWriter, Integer> write) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer();
        try {
            write.accept(new ByteBufAccessor(buf), value);
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    private static byte[] encodeLong(long value) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer();
        try {
            new ByteBufAccessor(buf).writeVarlong(value);
            return ByteBufUtil.getBytes(buf);
        } finally {
            buf.release();
        }
    }

    /** A reader over a heap copy (unpooled, nothing to release). */
    private static ByteBufAccessor decode(byte[] bytes) {
        return new ByteBufAccessor(io.netty.buffer.Unpooled.wrappedBuffer(bytes));
    }
}
