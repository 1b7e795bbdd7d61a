package io.cairn.isr.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.Time;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.SocketFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BlockingChannel#sendReusingFrame}, the follower's fetch path: responses are read into one buffer reused from
 * send to send (grown for a larger response, dropped once a large one is long past), every response still reads
 * back whole and right, and a plain {@link BlockingChannel#send} leaves that buffer alone. A leader thread answers
 * each request with an ApiVersions v0 response of as many API entries as the test queued for it, each entry
 * carrying its index, so a response read over a stale or short buffer shows.
 */
class BlockingChannelFrameReuseTest {

    private static final int MAX_RESPONSE_BYTES = 4 << 20;

    private final BlockingQueue<Integer> entries = new LinkedBlockingQueue<>();
    private ServerSocket leader;
    private Thread answering;

    @BeforeEach
    void startLeader() throws IOException {
        leader = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        answering = new Thread(this::answerEveryRequest, "answering-leader");
        answering.setDaemon(true);
        answering.start();
    }

    @AfterEach
    void stopLeader() throws Exception {
        leader.close();
        answering.join(5_000);
    }

    /** Answers each request with ApiVersions v0 of the next queued number of entries (key i, min i, max i + 1). */
    private void answerEveryRequest() {
        try (Socket socket = leader.accept()) {
            DataInputStream in = new DataInputStream(socket.getInputStream());
            DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream()));
            while (true) {
                byte[] frame = new byte[in.readInt()];
                in.readFully(frame);
                int correlationId = ByteBuffer.wrap(frame).getInt(4);
                int count = entries.poll(10, TimeUnit.SECONDS);
                out.writeInt(4 + 2 + 4 + 6 * count);
                out.writeInt(correlationId);
                out.writeShort(0);
                out.writeInt(count);
                for (int i = 0; i < count; i++) {
                    out.writeShort(i);
                    out.writeShort(i);
                    out.writeShort(i + 1);
                }
                out.flush();
            }
        } catch (IOException | InterruptedException | NullPointerException e) {
            // the client or the test closed the connection
        }
    }

    private BlockingChannel channel() {
        return new BlockingChannel("127.0.0.1", leader.getLocalPort(), "test", 10_000, -1, MAX_RESPONSE_BYTES,
            ClientTls.PLAINTEXT, SocketFactory.getDefault(), Time.SYSTEM);
    }

    /** Sends one request answered with {@code count} entries and checks every entry of the response. */
    private static void sendAndCheck(BlockingChannel channel, int count, boolean reuse, BlockingQueue<Integer> queue)
            throws IOException {
        queue.add(count);
        ApiVersionsRequestData request = new ApiVersionsRequestData();
        ApiVersionsResponseData response = reuse ? channel.sendReusingFrame(request, (short) 0)
            : channel.send(request, (short) 0);
        assertThat(response.errorCode()).isZero();
        assertThat(response.apiKeys()).hasSize(count);
        int i = 0;
        for (ApiVersionsResponseData.ApiVersion v : response.apiKeys()) {
            assertThat(v.apiKey()).isEqualTo((short) i);
            assertThat(v.minVersion()).isEqualTo((short) i);
            assertThat(v.maxVersion()).isEqualTo((short) (i + 1));
            i++;
        }
    }

    @Test
    void responsesOfTheSameSizeReuseOneBufferAndReadBackWhole() throws Exception {
        try (BlockingChannel channel = channel()) {
            channel.connect();
            sendAndCheck(channel, 100, true, entries);
            int capacity = channel.reusedFrameCapacity();
            assertThat(capacity).isGreaterThanOrEqualTo(4 + 2 + 4 + 600);
            for (int n = 0; n < 50; n++) {
                sendAndCheck(channel, 100 - n, true, entries);
                assertThat(channel.reusedFrameCapacity()).isEqualTo(capacity);
            }
        }
    }

    @Test
    void aLargerResponseGrowsTheBufferAndASmallerOneAfterItReadsOnlyItsOwnBytes() throws Exception {
        try (BlockingChannel channel = channel()) {
            channel.connect();
            sendAndCheck(channel, 10, true, entries);
            int small = channel.reusedFrameCapacity();
            sendAndCheck(channel, 20_000, true, entries);
            assertThat(channel.reusedFrameCapacity()).isGreaterThan(small).isGreaterThanOrEqualTo(10 + 6 * 20_000);
            // The large response's bytes are still in the buffer behind the small one: the decoder must not see them.
            sendAndCheck(channel, 3, true, entries);
            sendAndCheck(channel, 0, true, entries);
        }
    }

    @Test
    void aLargeBufferIsDroppedOnceNoRecentResponseUsedAQuarterOfIt() throws Exception {
        try (BlockingChannel channel = channel()) {
            channel.connect();
            int large = (BlockingChannel.KEPT_FRAME_BYTES * 2) / 6;
            sendAndCheck(channel, large, true, entries);
            int capacity = channel.reusedFrameCapacity();
            assertThat(capacity).isGreaterThan(BlockingChannel.KEPT_FRAME_BYTES);
            for (int n = 0; n < 2 * BlockingChannel.SHRINK_CHECK_INTERVAL + 1; n++) {
                sendAndCheck(channel, 10, true, entries);
            }
            assertThat(channel.reusedFrameCapacity()).isLessThan(capacity / 4);
        }
    }

    @Test
    void aLargeBufferStaysWhileLargeResponsesKeepComing() throws Exception {
        try (BlockingChannel channel = channel()) {
            channel.connect();
            int large = (BlockingChannel.KEPT_FRAME_BYTES * 2) / 6;
            sendAndCheck(channel, large, true, entries);
            int capacity = channel.reusedFrameCapacity();
            for (int n = 0; n < 2 * BlockingChannel.SHRINK_CHECK_INTERVAL + 1; n++) {
                sendAndCheck(channel, n % 100 == 0 ? large : 10, true, entries);
            }
            assertThat(channel.reusedFrameCapacity()).isEqualTo(capacity);
        }
    }

    @Test
    void aPlainSendLeavesTheReusedBufferAlone() throws Exception {
        try (BlockingChannel channel = channel()) {
            channel.connect();
            sendAndCheck(channel, 50, false, entries);
            assertThat(channel.reusedFrameCapacity()).isZero();
            sendAndCheck(channel, 50, true, entries);
            int capacity = channel.reusedFrameCapacity();
            ApiVersionsRequestData request = new ApiVersionsRequestData();
            entries.add(7);
            ApiVersionsResponseData kept = channel.send(request, (short) 0);
            sendAndCheck(channel, 40, true, entries);
            // The plain response has its own array: the reused send after it did not overwrite it.
            assertThat(kept.apiKeys()).hasSize(7);
            assertThat(channel.reusedFrameCapacity()).isEqualTo(capacity);
        }
    }
}
