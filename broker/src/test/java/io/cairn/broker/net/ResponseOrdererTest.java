package io.cairn.broker.net;

import io.cairn.testkit.LeakDetection;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.message.ApiVersionsResponseData;
import io.netty.channel.ChannelFuture;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(LeakDetection.class)
class ResponseOrdererTest {

    private final ResponseOrderer orderer = new ResponseOrderer();
    private final EmbeddedChannel channel = new EmbeddedChannel(orderer);

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
    }

    @Test
    void shouldWriteResponsesInRequestOrderWhenHandlersFinishOutOfOrder() {
        // Given
        channel.writeOutbound(frame(2, 102));
        channel.writeOutbound(frame(1, 101));
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat(orderer.parkedCount()).isEqualTo(2);

        // When
        channel.writeOutbound(frame(0, 100));

        // Then
        assertThat(correlationIds()).containsExactly(100, 101, 102);
        assertThat(orderer.parkedCount()).isZero();
    }

    @Test
    void shouldSkipRequestsThatExpectNoResponseWithoutStallingLaterOnes() {
        // Given
        channel.writeOutbound(frame(0, 100));
        channel.writeOutbound(frame(2, 102));

        // When
        ChannelFuture none = channel.writeAndFlush(ResponseFrame.none(1));
        channel.runPendingTasks();

        // Then
        assertThat(none.isSuccess()).isTrue();
        assertThat(correlationIds()).containsExactly(100, 102);
    }

    @Test
    void shouldFailParkedWritesWhenTheChannelCloses() {
        // Given
        ChannelFuture parked = channel.writeAndFlush(frame(1, 101));

        // When
        channel.close();

        // Then
        assertThat(parked.isDone()).isTrue();
        assertThat(parked.isSuccess()).isFalse();
    }

    private static ResponseFrame frame(long sequence, int correlationId) {
        return new ResponseFrame(sequence, correlationId, (short) 0, (short) 0, new ApiVersionsResponseData());
    }

    private List<Integer> correlationIds() {
        List<Integer> ids = new ArrayList<>();
        ResponseFrame frame;
        while ((frame = channel.readOutbound()) != null) {
            ids.add(frame.correlationId());
        }
        return ids;
    }
}
