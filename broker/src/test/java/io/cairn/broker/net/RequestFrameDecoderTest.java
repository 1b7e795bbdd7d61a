package io.cairn.broker.net;

import io.cairn.testkit.LeakDetection;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.LogCapture;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(LeakDetection.class)
class RequestFrameDecoderTest {

    private static final int MAX = 64;

    private LogCapture logs;
    private EmbeddedChannel channel;

    @BeforeEach
    void setUp() {
        logs = LogCapture.start();
        channel = new EmbeddedChannel(new RequestFrameDecoder(MAX, "TEST", new RequestMemoryPool(-1)));
    }

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
        logs.close();
    }

    @Test
    void shouldEmitOneFramePerSizePrefixedBody() {
        // When
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {0, 0, 0, 3, 1, 2, 3, 0, 0, 0, 1, 9}));

        // Then
        assertFrame(channel.readInbound(), new byte[] {1, 2, 3});
        assertFrame(channel.readInbound(), new byte[] {9});
        assertThat((Object) channel.readInbound()).isNull();
    }

    @Test
    void shouldWaitForTheRestOfAFrameSplitAcrossReads() {
        // Given
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {0, 0}));
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {0, 4, 1, 2}));
        assertThat((Object) channel.readInbound()).isNull();

        // When
        channel.writeInbound(Unpooled.wrappedBuffer(new byte[] {3, 4}));

        // Then
        assertFrame(channel.readInbound(), new byte[] {1, 2, 3, 4});
    }

    @Test
    void shouldAcceptAFrameOfExactlyTheMaximumSize() {
        // Given
        ByteBuf frame = Unpooled.buffer().writeInt(MAX).writeZero(MAX);

        // When
        channel.writeInbound(frame);

        // Then
        ByteBuf body = channel.readInbound();
        assertThat(body.readableBytes()).isEqualTo(MAX);
        body.release();
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void shouldCloseWithOneWarningBeforeTheBodyArrivesWhenTheSizeIsOverTheMaximum() {
        // When
        channel.writeInbound(Unpooled.buffer().writeInt(MAX + 1));

        // Then
        assertThat(channel.isOpen()).isFalse();
        assertThat((Object) channel.readInbound()).isNull();
        assertThat(logs.warnings("invalid request size " + (MAX + 1))).singleElement().asString()
                .contains("larger than the maximum", "socket.request.max.bytes=64", "TLS ClientHello");
    }

    @Test
    void shouldCloseWithOneWarningWhenTheSizeIsNegative() {
        // When
        channel.writeInbound(Unpooled.buffer().writeInt(-1));

        // Then
        assertThat(channel.isOpen()).isFalse();
        assertThat(logs.warnings("invalid request size -1 (negative")).hasSize(1);
    }

    @Test
    void shouldShowTheBytesAsTextWhenAnHttpRequestArrives() {
        // When
        channel.writeInbound(Unpooled.copiedBuffer("POST /x HTTP/1.1\r\n", StandardCharsets.US_ASCII));

        // Then
        assertThat(logs.warnings("'POST'")).hasSize(1);
    }

    @Test
    void shouldStopReadingWhenTheRequestMemoryBudgetIsSpentAndResumeWhenReleased() {
        // Given
        RequestMemoryPool pool = new RequestMemoryPool(10);
        EmbeddedChannel bounded = new EmbeddedChannel(new RequestFrameDecoder(MAX, "TEST", pool));
        bounded.writeInbound(Unpooled.buffer().writeInt(8).writeZero(8).writeInt(8).writeZero(8));
        assertThat(pool.available()).isEqualTo(-6);

        // When
        bounded.writeInbound(Unpooled.buffer().writeInt(4).writeZero(4));

        // Then
        assertThat(bounded.config().isAutoRead()).isFalse();
        assertThat(bounded.inboundMessages()).hasSize(2);
        pool.release(16);
        bounded.runPendingTasks();
        assertThat(bounded.inboundMessages()).hasSize(3);
        assertThat(bounded.config().isAutoRead()).isTrue();
        assertThat(pool.available()).isEqualTo(6);
        bounded.finishAndReleaseAll();
    }

    @Test
    void shouldReturnTheReservationOfAnUnfinishedFrameWhenTheConnectionCloses() {
        // Given
        RequestMemoryPool pool = new RequestMemoryPool(100);
        EmbeddedChannel bounded = new EmbeddedChannel(new RequestFrameDecoder(MAX, "TEST", pool));
        bounded.writeInbound(Unpooled.buffer().writeInt(30).writeZero(5));
        assertThat(pool.available()).isEqualTo(70);

        // When
        bounded.finishAndReleaseAll();

        // Then
        assertThat(pool.available()).isEqualTo(100);
    }

    private static void assertFrame(ByteBuf frame, byte[] expected) {
        try {
            byte[] actual = new byte[frame.readableBytes()];
            frame.readBytes(actual);
            assertThat(actual).containsExactly(expected);
        } finally {
            frame.release();
        }
    }
}
