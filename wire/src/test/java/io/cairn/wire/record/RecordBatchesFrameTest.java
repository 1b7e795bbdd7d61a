package io.cairn.wire.record;

import io.cairn.wire.record.RecordBatches.Frame;
import io.cairn.wire.record.RecordBatches.FrameKind;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link RecordBatches#frameAt}: Kafka's frame checks, alike over a {@link ByteBuf} and a {@link ByteBuffer}. */
class RecordBatchesFrameTest {

    private static byte[] batch() {
        ByteBuf buf = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE)
                .append(1_700_000_000_000L, null, "v".getBytes(StandardCharsets.UTF_8))
                .build();
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        buf.release();
        return bytes;
    }

    /** The frame at 0 of the first {@code length} bytes of {@code bytes}, read both ways; both must agree. */
    private static Frame frame(byte[] bytes, int length) {
        Frame fromBuf = RecordBatches.frameAt(Unpooled.wrappedBuffer(bytes), 0, length);
        Frame fromBuffer = RecordBatches.frameAt(ByteBuffer.wrap(bytes), 0, length);
        assertThat(fromBuffer).isEqualTo(fromBuf);
        return fromBuf;
    }

    @Test
    void aWholeBatchIsABatchFrameOfItsSizeAndMagic() {
        byte[] bytes = batch();
        assertThat(frame(bytes, bytes.length)).isEqualTo(new Frame(FrameKind.BATCH, bytes.length, (byte) 2, null));
    }

    @Test
    void noBytesAreTheEndAndFewerThanABatchArePartial() {
        byte[] bytes = batch();
        assertThat(frame(bytes, 0).kind()).isEqualTo(FrameKind.END);
        assertThat(frame(bytes, 11)).isEqualTo(new Frame(FrameKind.PARTIAL, -1, (byte) -1, null));
        assertThat(frame(bytes, 16)).isEqualTo(new Frame(FrameKind.PARTIAL, bytes.length, (byte) -1, null));
        assertThat(frame(bytes, bytes.length - 1))
                .isEqualTo(new Frame(FrameKind.PARTIAL, bytes.length, (byte) 2, null));
    }

    @Test
    void aSizeFieldBelow14AndAMagicAbove2AreCorruptWithKafkasMessages() {
        byte[] small = batch();
        ByteBuffer.wrap(small).putInt(RecordBatch.LENGTH_OFFSET, 13);
        byte[] magic = batch();
        magic[RecordBatch.MAGIC_OFFSET] = 3;

        assertThat(frame(small, small.length)).isEqualTo(new Frame(FrameKind.CORRUPT, -1, (byte) -1,
                "Record size 13 is less than the minimum record overhead (14)"));
        assertThat(frame(magic, magic.length)).isEqualTo(new Frame(FrameKind.CORRUPT, magic.length, (byte) 3,
                "Invalid magic found in record: 3"));
        assertThat(frame(small, small.length).corruption()).hasMessageContaining("minimum record overhead");
    }

    @Test
    void anOlderMagicIsAFrameForTheCallerToRefuse() {
        byte[] bytes = batch();
        bytes[RecordBatch.MAGIC_OFFSET] = 1;
        assertThat(frame(bytes, bytes.length)).isEqualTo(new Frame(FrameKind.BATCH, bytes.length, (byte) 1, null));
    }
}
