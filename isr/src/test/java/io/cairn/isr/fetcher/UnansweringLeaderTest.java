package io.cairn.isr.fetcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.isr.Partition;
import io.cairn.isr.TestPartitions;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsResponseData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A follower's real fetcher ({@link ReplicaFetcherThread} over a {@link RemoteLeaderEndpoint}, its blocking channel
 * and a real follower {@link Partition}) against a "leader" on a plain {@link ServerSocket} that accepts the
 * connection, answers ApiVersions (and, for the out-of-range case, the Fetch) and then never answers the call under
 * test. While the fetcher is blocked on that call for up to {@code replica.socket.timeout.ms}, it holds neither its own
 * lock nor the partition's (Kafka's rule: the fetcher lock is never held across a network call): what the metadata
 * applier does meanwhile completes at once, for each of the three network calls a fetcher makes.
 */
@Timeout(120)
class UnansweringLeaderTest {

    private static final int LEADER = 1;
    private static final int FOLLOWER = 2;
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid TOPIC_ID = new Uuid(42L, 7L);
    /** replica.socket.timeout.ms: what a blocked call would wait for if the applier had to wait for it. */
    private static final int SOCKET_TIMEOUT_MS = 30_000;
    /** Well under the socket timeout, and loose enough for a loaded machine. */
    private static final long PROMPT_MS = 5_000;

    /** The network call the leader leaves unanswered. */
    enum Call {
        /** Fetch of a fetching partition. */
        FETCH(ApiKey.FETCH),
        /** OffsetForLeaderEpoch of a truncating partition whose log has epochs. */
        OFFSET_FOR_LEADER_EPOCH(ApiKey.OFFSET_FOR_LEADER_EPOCH),
        /** ListOffsets of a partition the leader answered OFFSET_OUT_OF_RANGE (the fetch offset reset). */
        LIST_OFFSETS(ApiKey.LIST_OFFSETS);

        final ApiKey apiKey;

        Call(ApiKey apiKey) {
            this.apiKey = apiKey;
        }
    }

    /** What the metadata applier does while the call is out. */
    enum Action {
        /** The partition leaves this fetcher (a new leader, a reassignment, a deletion). */
        REMOVE_PARTITION,
        /**
         * This replica is elected: the partition takes the new registration (under the partition's lock), stops
         * being fetched, and the fetcher left idle is shut down, as the replica manager does it.
         */
        BECOME_LEADER,
        /** The broker shuts the fetcher down. */
        SHUTDOWN
    }

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (Call call : Call.values()) {
            for (Action action : Action.values()) {
                all.add(Arguments.of(call, action));
            }
        }
        return all.stream();
    }

    @TempDir
    Path dir;

    private UnansweringLeader leader;
    private PartitionLog followerLog;
    private ReplicaFetcherThread thread;

    @AfterEach
    void tearDown() throws Exception {
        if (thread != null) {
            thread.shutdown();
        }
        if (leader != null) {
            leader.close();
        }
        if (followerLog != null) {
            followerLog.close();
        }
    }

    private static PartitionRegistration registration(int leaderId, int epoch) {
        return new PartitionRegistration(List.of(LEADER, FOLLOWER), List.of(LEADER, FOLLOWER), leaderId, epoch,
            epoch);
    }

    @ParameterizedTest(name = "{1} while {0} is unanswered")
    @MethodSource("cases")
    void theMetadataApplierDoesNotWaitForALeaderThatDoesNotAnswer(Call call, Action action) throws Exception {
        // Given: a follower of the leader in epoch 3, its fetcher blocked on the call the leader leaves unanswered
        leader = new UnansweringLeader(call.apiKey);
        followerLog = PartitionLog.open(dir.resolve("orders-0"), LogConfig.defaults(), LogEnvironment.of(Time.SYSTEM),
            true);
        Partition follower = TestPartitions.create(TP, TOPIC_ID, FOLLOWER, followerLog, registration(LEADER, 3),
            p -> { }, Time.SYSTEM);
        SourceBroker source = new SourceBroker(LEADER, "127.0.0.1", leader.port());
        ReplicaFetcherConfig config = ReplicaFetcherConfig.of(1, 1 << 20, 1, 500, 1_000L, 10 << 20, SOCKET_TIMEOUT_MS,
            -1, 1 << 20);
        thread = new ReplicaFetcherThread("ReplicaFetcherThread-0-" + LEADER, new RemoteLeaderEndpoint(source,
            FOLLOWER, () -> 1L, config, "broker-" + FOLLOWER + "-fetcher-0"), tp -> TP.equals(tp) ? follower : null,
            ConcurrentHashMap.newKeySet(), Time.SYSTEM, config.fetchBackoffMs(), config.fetchMaxBytes());
        // Added while its log is empty (no epoch history): the partition starts truncating.
        thread.addPartitions(Map.of(TP, new InitialFetchState(TOPIC_ID, source, 3, 0L)));
        if (call == Call.OFFSET_FOR_LEADER_EPOCH) {
            // The log got an epoch history before the fetcher's first round: it truncates by OffsetForLeaderEpoch.
            followerLog.appendAsLeader(batch(5), 1, AppendOrigin.CLIENT);
        }
        thread.start();
        assertThat(leader.awaitUnanswered(PROMPT_MS)).as("the fetcher sent %s", call.apiKey).isTrue();

        // When
        long start = System.nanoTime();
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
            switch (action) {
                case REMOVE_PARTITION -> assertThat(thread.removePartitions(Set.of(TP))).containsOnlyKeys(TP);
                case BECOME_LEADER -> {
                    TestPartitions.update(follower, registration(FOLLOWER, 4));
                    assertThat(thread.removePartitions(Set.of(TP))).containsOnlyKeys(TP);
                    thread.shutdown();
                }
                case SHUTDOWN -> thread.shutdown();
                default -> throw new IllegalStateException(action.toString());
            }
        });

        // Then: done well under the socket timeout
        assertThat(done).succeedsWithin(PROMPT_MS, TimeUnit.MILLISECONDS);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(PROMPT_MS);
        switch (action) {
            case REMOVE_PARTITION -> {
                // The call is still out: the removal did not wait for it
                assertThat(thread.fetchState(TP)).isNull();
                assertThat(thread.isAlive()).isTrue();
                assertThat(leader.unansweredCalls()).isPositive();
            }
            case BECOME_LEADER -> {
                assertThat(thread.fetchState(TP)).isNull();
                assertThat(follower.isLeader()).isTrue();
                assertThat(thread.isAlive()).isFalse();
            }
            case SHUTDOWN -> assertThat(thread.isAlive()).isFalse();
            default -> throw new IllegalStateException(action.toString());
        }
        // The follower's log is as it was: nothing was truncated or appended by a call that was never answered
        assertThat(followerLog.logEndOffset()).isEqualTo(call == Call.OFFSET_FOR_LEADER_EPOCH ? 5 : 0);
    }

    private static ByteBuffer batch(int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L + i, new byte[] {1}, new byte[] {(byte) i});
        }
        ByteBuf buf = builder.build();
        try {
            ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), copy);
            return copy.flip();
        } finally {
            buf.release();
        }
    }

    /**
     * A leader on a plain server socket: answers ApiVersions with the ranges the fetcher speaks, answers a Fetch
     * with OFFSET_OUT_OF_RANGE when ListOffsets is the call under test, and leaves the call under test unanswered
     * (reading on, so the connection stays open until the follower closes it).
     */
    private static final class UnansweringLeader implements AutoCloseable {

        private final ApiKey silentOn;
        private final ServerSocket server;
        private final List<Socket> connections = new CopyOnWriteArrayList<>();
        private final CountDownLatch unanswered = new CountDownLatch(1);
        private final Thread acceptor;
        private volatile int unansweredCalls;

        UnansweringLeader(ApiKey silentOn) throws IOException {
            this.silentOn = silentOn;
            this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            this.acceptor = new Thread(this::accept, "unanswering-leader");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return server.getLocalPort();
        }

        boolean awaitUnanswered(long ms) throws InterruptedException {
            return unanswered.await(ms, TimeUnit.MILLISECONDS);
        }

        int unansweredCalls() {
            return unansweredCalls;
        }

        private void accept() {
            try {
                while (true) {
                    Socket socket = server.accept();
                    connections.add(socket);
                    Thread serving = new Thread(() -> serve(socket), "unanswering-leader-connection");
                    serving.setDaemon(true);
                    serving.start();
                }
            } catch (IOException e) {
                // closed
            }
        }

        private void serve(Socket socket) {
            try (socket) {
                DataInputStream in = new DataInputStream(socket.getInputStream());
                OutputStream out = socket.getOutputStream();
                while (true) {
                    byte[] frame = new byte[in.readInt()];
                    in.readFully(frame);
                    ByteBuf request = Unpooled.wrappedBuffer(frame);
                    ApiKey apiKey = ApiKey.forId(request.getShort(0));
                    short version = request.getShort(2);
                    RequestHeaderData header = new RequestHeaderData(new ByteBufAccessor(request),
                        apiKey.requestHeaderVersion(version));
                    if (apiKey == silentOn) {
                        unansweredCalls++;
                        unanswered.countDown();
                        continue;
                    }
                    ApiMessage response = switch (apiKey) {
                        case API_VERSIONS -> apiVersions();
                        case FETCH -> outOfRange();
                        default -> throw new IllegalStateException("Unexpected " + apiKey);
                    };
                    write(out, apiKey, version, header.correlationId(), response);
                }
            } catch (EOFException e) {
                // the follower closed the connection
            } catch (IOException e) {
                // closed by the follower or the test
            }
        }

        private static ApiVersionsResponseData apiVersions() {
            ApiVersionsResponseData response = new ApiVersionsResponseData();
            response.apiKeys().add(range(ApiKey.API_VERSIONS, 0, 3));
            // Fetch v12 only: topics by name, so that the out-of-range answer needs no topic id session
            response.apiKeys().add(range(ApiKey.FETCH, 12, 12));
            response.apiKeys().add(range(ApiKey.OFFSET_FOR_LEADER_EPOCH, 3, 4));
            response.apiKeys().add(range(ApiKey.LIST_OFFSETS, 1, 10));
            return response;
        }

        private static ApiVersionsResponseData.ApiVersion range(ApiKey apiKey, int min, int max) {
            return new ApiVersionsResponseData.ApiVersion().setApiKey(apiKey.id()).setMinVersion((short) min)
                .setMaxVersion((short) max);
        }

        private static FetchResponseData outOfRange() {
            FetchResponseData response = new FetchResponseData();
            FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse()
                .setTopic(TP.topic());
            topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(TP.partition())
                .setErrorCode(Errors.OFFSET_OUT_OF_RANGE.code()).setHighWatermark(-1L).setLogStartOffset(-1L));
            response.responses().add(topic);
            return response;
        }

        private static void write(OutputStream out, ApiKey apiKey, short version, int correlationId,
                                  ApiMessage body) throws IOException {
            ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(correlationId);
            short headerVersion = apiKey.responseHeaderVersion(version);
            SerializationCache headerCache = new SerializationCache();
            SerializationCache bodyCache = new SerializationCache();
            int size = header.size(headerCache, headerVersion) + body.size(bodyCache, version);
            ByteBuf buffer = Unpooled.buffer(4 + size);
            buffer.writeInt(size);
            ByteBufAccessor writer = new ByteBufAccessor(buffer);
            header.write(writer, headerCache, headerVersion);
            body.write(writer, bodyCache, version);
            out.write(buffer.array(), buffer.arrayOffset() + buffer.readerIndex(), buffer.readableBytes());
            out.flush();
        }

        @Override
        public void close() throws Exception {
            server.close();
            for (Socket socket : connections) {
                socket.close();
            }
            acceptor.join(5_000);
        }
    }
}
