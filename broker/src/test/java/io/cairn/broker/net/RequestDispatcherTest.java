package io.cairn.broker.net;

import io.cairn.log.Time;
import io.micrometer.core.instrument.Clock;
import io.cairn.broker.metrics.BrokerMetrics;
import io.cairn.testkit.LeakDetection;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.LogCapture;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.ClientConnection;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.handler.RequestContext;
import io.cairn.broker.handler.TwoPhaseApiHandler;
import io.cairn.broker.quota.RequestQuotas;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.UnsupportedVersionException;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.HeartbeatRequestData;
import io.cairn.wire.message.HeartbeatResponseData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.message.ResponseHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The dispatch rules of one connection, with a controllable Heartbeat handler on an EmbeddedChannel. */
@ExtendWith(LeakDetection.class)
class RequestDispatcherTest {

    private static final short VERSION = 4;
    private static final RequestMemoryPool POOL = new RequestMemoryPool(-1);

    private final FakeHeartbeatHandler handler = new FakeHeartbeatHandler();
    private LogCapture logs;
    private EmbeddedChannel channel;

    @BeforeEach
    void setUp() {
        logs = LogCapture.start();
        channel = channelFor(handler);
    }

    @AfterEach
    void tearDown() {
        channel.finishAndReleaseAll();
        logs.close();
    }

    @Test
    void shouldDispatchTheNextRequestOnlyAfterThePreviousOneCompleted() {
        // Given
        channel.writeInbound(Unpooled.wrappedBuffer(request(1, "g"), request(2, "g"), request(3, "g")));
        assertThat(handler.calls).hasSize(1);

        // When
        handler.calls.get(0).complete(new HeartbeatResponseData());

        // Then
        assertThat(handler.calls).hasSize(2);
        handler.calls.get(1).complete(new HeartbeatResponseData());
        handler.calls.get(2).complete(new HeartbeatResponseData());
        assertThat(responseCorrelationIds()).containsExactly(1, 2, 3);
        assertThat(channel.config().isAutoRead()).isTrue();
    }

    @Test
    void shouldStopReadingWhileARequestIsInProgress() {
        // When
        channel.writeInbound(request(1, "g"));

        // Then
        assertThat(channel.config().isAutoRead()).isFalse();
        handler.calls.get(0).complete(new HeartbeatResponseData());
        assertThat(channel.config().isAutoRead()).isTrue();
    }

    @Test
    void aThrottledResponseIsSentAtOnceAndTheConnectionStopsReadingForTheThrottleTime() {
        // Given: every response throttled for 100 ms, on a clock the test moves
        ManualClock clock = new ManualClock();
        throttling((key, version, user, clientId, request, response, bytes, threadNanos) ->
                new RequestQuotas.Throttled(response, 100), clock);
        channel.writeInbound(request(1, "g"));

        // When
        handler.calls.get(0).complete(new HeartbeatResponseData());

        // Then: the response is out and the connection does not read until the throttle time has passed
        assertThat(responseCorrelationIds()).containsExactly(1);
        assertThat(channel.config().isAutoRead()).isFalse();
        advance(clock, 99);
        assertThat(channel.config().isAutoRead()).isFalse();
        advance(clock, 1);
        assertThat(channel.config().isAutoRead()).isTrue();
    }

    @Test
    void aThrottleThatEndsLaterExtendsTheOneInPlace() {
        // Given: the first response throttled for 100 ms, the second for 300 ms, 50 ms later
        ManualClock clock = new ManualClock();
        int[] throttles = {100, 300};
        int[] next = {0};
        throttling((key, version, user, clientId, request, response, bytes, threadNanos) ->
                new RequestQuotas.Throttled(response, throttles[next[0]++]), clock);
        channel.writeInbound(Unpooled.wrappedBuffer(request(1, "g"), request(2, "g")));
        handler.calls.get(0).complete(new HeartbeatResponseData());
        advance(clock, 50);

        // When
        handler.calls.get(1).complete(new HeartbeatResponseData());

        // Then: still muted when the first throttle would have ended, reading again at 350 ms
        advance(clock, 60);
        assertThat(channel.config().isAutoRead()).isFalse();
        advance(clock, 240);
        assertThat(channel.config().isAutoRead()).isTrue();
        assertThat(responseCorrelationIds()).containsExactly(1, 2);
    }

    @Test
    void shouldWriteNothingForARequestThatExpectsNoResponseAndKeepTheOrder() {
        // Given
        channel.writeInbound(Unpooled.wrappedBuffer(request(1, "g"), request(2, "silent"), request(3, "g")));

        // When
        handler.calls.get(0).complete(new HeartbeatResponseData());
        handler.calls.get(1).complete(new HeartbeatResponseData());
        handler.calls.get(2).complete(new HeartbeatResponseData());

        // Then
        assertThat(responseCorrelationIds()).containsExactly(1, 3);
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void shouldCloseTheConnectionWhenARequestWithoutResponseFails() {
        // Given
        channel.writeInbound(request(1, "silent"));

        // When
        handler.calls.get(0).completeExceptionally(new IllegalStateException("boom"));

        // Then
        assertThat(channel.isOpen()).isFalse();
        assertThat(logs.warnings("expects no response failed")).hasSize(1);
    }

    @Test
    void shouldMapAnApiExceptionToTheHandlersErrorResponse() {
        // Given
        channel.writeInbound(request(1, "g"));

        // When
        handler.calls.get(0).completeExceptionally(new UnsupportedVersionException("no"));

        // Then
        assertThat(responses()).singleElement().extracting(HeartbeatResponseData::errorCode)
                .isEqualTo(Errors.UNSUPPORTED_VERSION.code());
        assertThat(logs.messages(Level.ERROR, m -> true)).isEmpty();
    }

    @Test
    void shouldAnswerUnknownServerErrorAndLogOnceAtErrorWhenAHandlerThrows() {
        // Given
        handler.throwOnHandle = true;

        // When
        channel.writeInbound(request(1, "g"));

        // Then
        assertThat(responses()).singleElement().extracting(HeartbeatResponseData::errorCode)
                .isEqualTo(Errors.UNKNOWN_SERVER_ERROR.code());
        assertThat(logs.messages(Level.ERROR, m -> m.contains("Unexpected error handling Heartbeat"))).hasSize(1);
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void shouldCloseWithOneWarningOnAVersionAboveTheServedRange() {
        // When
        channel.writeInbound(frame(ApiKey.HEARTBEAT, (short) 2, 1, new HeartbeatRequestData().setGroupId("g")));

        // Then
        assertThat(handler.calls).isEmpty();
        assertThat(channel.isOpen()).isFalse();
        assertThat(logs.warnings("unsupported version 2 of api Heartbeat (key 12; served versions 3-4)")).hasSize(1);
    }

    @Test
    void shouldDispatchTheNextRequestAfterTheDispatchStageAndStillAnswerInRequestOrder() {
        // Given
        TwoPhaseHeartbeatHandler twoPhase = new TwoPhaseHeartbeatHandler();
        EmbeddedChannel twoPhaseChannel = channelFor(twoPhase);
        twoPhaseChannel.writeInbound(Unpooled.wrappedBuffer(request(1, "g"), request(2, "g")));
        twoPhase.dispatched.get(0).complete(null);
        assertThat(twoPhase.responses).hasSize(2);

        // When
        twoPhase.responses.get(1).complete(new HeartbeatResponseData());
        assertThat((Object) twoPhaseChannel.readOutbound()).isNull();
        twoPhase.responses.get(0).complete(new HeartbeatResponseData());

        // Then
        channel.finishAndReleaseAll();
        channel = twoPhaseChannel;
        assertThat(responseCorrelationIds()).containsExactly(1, 2);
    }

    @Test
    void shouldHoldTheRequestBytesInTheMemoryPoolUntilTheDispatchStageCompletes() {
        // Given
        RequestMemoryPool pool = new RequestMemoryPool(1000);
        channel.finishAndReleaseAll();
        channel = channelFor(handler, pool);
        ByteBuf request = request(1, "g");
        int size = request.readableBytes() - 4;
        channel.writeInbound(request);
        assertThat(pool.available()).isEqualTo(1000 - size);

        // When
        handler.calls.get(0).complete(new HeartbeatResponseData());

        // Then
        assertThat(pool.available()).isEqualTo(1000);
    }

    @Test
    void shouldReturnTheReservationOfFramesThatArriveWhileTheConnectionCloses() {
        // Given
        RequestMemoryPool pool = new RequestMemoryPool(1000);
        channel.finishAndReleaseAll();
        channel = channelFor(handler, pool);
        ByteBuf badVersion = frame(ApiKey.HEARTBEAT, (short) 2, 1, new HeartbeatRequestData().setGroupId("g"));

        // When
        channel.writeInbound(Unpooled.wrappedBuffer(badVersion, request(2, "g"), request(3, "g")));

        // Then
        assertThat(channel.isOpen()).isFalse();
        assertThat(handler.calls).isEmpty();
        assertThat(pool.available()).isEqualTo(1000);
    }

    @Test
    void shouldCallAHandlerOnTheRequestHandlerThreadsAndHandThemTheNextRequestOnlyAfterThePreviousOne() {
        // Given
        ArrayDeque<Runnable> requestHandlers = new ArrayDeque<>();
        channel.finishAndReleaseAll();
        channel = channelFor(handler, POOL, requestHandlers::add);
        channel.writeInbound(Unpooled.wrappedBuffer(request(1, "g"), request(2, "g")));
        assertThat(handler.calls).isEmpty();
        assertThat(requestHandlers).hasSize(1);
        requestHandlers.poll().run();
        assertThat(handler.calls).hasSize(1);
        assertThat(requestHandlers).isEmpty();

        // When
        handler.calls.get(0).complete(new HeartbeatResponseData());

        // Then
        assertThat(requestHandlers).hasSize(1);
        requestHandlers.poll().run();
        handler.calls.get(1).complete(new HeartbeatResponseData());
        assertThat(responseCorrelationIds()).containsExactly(1, 2);
    }

    @Test
    void shouldCallANetworkThreadHandlerOnTheEventLoopWithoutTheRequestHandlerThreads() {
        // Given
        ArrayDeque<Runnable> requestHandlers = new ArrayDeque<>();
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(), false);
        channel.finishAndReleaseAll();
        channel = channelFor(registry, POOL, requestHandlers::add);

        // When
        channel.writeInbound(frame(ApiKey.API_VERSIONS, (short) 3, 7, new ApiVersionsRequestData()
                .setClientSoftwareName("test").setClientSoftwareVersion("1")));

        // Then
        assertThat(requestHandlers).isEmpty();
        ByteBuf response = channel.readOutbound();
        try {
            assertThat(response.getInt(4)).isEqualTo(7);
        } finally {
            response.release();
        }
    }

    @Test
    void shouldCloseTheConnectionAndReleaseTheRequestWhenTheRequestHandlerThreadsHaveStopped() {
        // Given
        RequestMemoryPool pool = new RequestMemoryPool(1000);
        channel.finishAndReleaseAll();
        channel = channelFor(handler, pool, task -> {
            throw new RejectedExecutionException("stopped");
        });

        // When
        channel.writeInbound(request(1, "g"));

        // Then
        assertThat(handler.calls).isEmpty();
        assertThat(channel.isOpen()).isFalse();
        assertThat(pool.available()).isEqualTo(1000);
        assertThat(logs.warnings("request-handler threads have stopped")).hasSize(1);
    }

    /** A clock the throttle tests move together with the channel's event loop. */
    private static final class ManualClock implements Time {
        private final AtomicLong nanos = new AtomicLong();

        @Override
        public long milliseconds() {
            return TimeUnit.NANOSECONDS.toMillis(nanos.get());
        }

        @Override
        public long nanoseconds() {
            return nanos.get();
        }

        @Override
        public void sleep(long ms) {
            nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
        }
    }

    /** Replaces the test channel by one whose responses go through {@code quotas}, its time frozen on {@code clock}. */
    private void throttling(RequestQuotas quotas, ManualClock clock) {
        channel.finishAndReleaseAll();
        BrokerMetrics brokerMetrics = BrokerMetrics.withClock(Clock.SYSTEM);
        HandlerRegistry registry = HandlerRegistry.forListener(List.of(handler), false).withQuotas(quotas);
        channel = new EmbeddedChannel(new RequestFrameDecoder(1 << 20, "TEST", POOL), new ResponseEncoder(),
                new ResponseOrderer(), new RequestDispatcher(new RequestDecoder(registry, "TEST"), POOL,
                        Runnable::run, "TEST", ctx -> new ClientConnection("test-connection", "TEST",
                                ctx.channel().remoteAddress()), new DispatcherMetrics(brokerMetrics.requests(),
                                brokerMetrics.socketServer().forListener("TEST"), clock)));
        channel.freezeTime();
    }

    /** Moves the clock and the channel's event loop by {@code ms} and runs the tasks then due. */
    private void advance(ManualClock clock, long ms) {
        clock.sleep(ms);
        channel.advanceTimeBy(ms, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
    }

    private static EmbeddedChannel channelFor(ApiHandler<?, ?> apiHandler) {
        return channelFor(apiHandler, POOL);
    }

    private static EmbeddedChannel channelFor(ApiHandler<?, ?> apiHandler, RequestMemoryPool pool) {
        return channelFor(apiHandler, pool, Runnable::run);
    }

    private static EmbeddedChannel channelFor(ApiHandler<?, ?> apiHandler, RequestMemoryPool pool,
            Executor requestHandlers) {
        return channelFor(HandlerRegistry.forListener(List.of(apiHandler), false), pool, requestHandlers);
    }

    private static EmbeddedChannel channelFor(HandlerRegistry registry, RequestMemoryPool pool,
            Executor requestHandlers) {
        return new EmbeddedChannel(new RequestFrameDecoder(1 << 20, "TEST", pool), new ResponseEncoder(),
                new ResponseOrderer(), new RequestDispatcher(new RequestDecoder(registry, "TEST"), pool,
                        requestHandlers, "TEST", ctx -> new ClientConnection("test-connection", "TEST", ctx.channel().remoteAddress()),
                        metrics()));
    }

    static DispatcherMetrics metrics() {
        BrokerMetrics metrics = BrokerMetrics.withClock(Clock.SYSTEM);
        return new DispatcherMetrics(metrics.requests(), metrics.socketServer().forListener("TEST"), Time.SYSTEM);
    }

    private static ByteBuf request(int correlationId, String groupId) {
        return frame(ApiKey.HEARTBEAT, VERSION, correlationId,
                new HeartbeatRequestData().setGroupId(groupId).setMemberId("m").setGenerationId(1));
    }

    static ByteBuf frame(ApiKey key, short version, int correlationId, ApiMessage body) {
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(key.id()).setRequestApiVersion(version)
                .setCorrelationId(correlationId).setClientId("test");
        short headerVersion = key.requestHeaderVersion(version);
        SerializationCache cache = new SerializationCache();
        int size = header.size(cache, headerVersion) + body.size(cache, version);
        ByteBuf buf = Unpooled.buffer(4 + size);
        ByteBufAccessor out = new ByteBufAccessor(buf);
        buf.writeInt(size);
        header.write(out, cache, headerVersion);
        body.write(out, cache, version);
        return buf;
    }

    private List<Integer> responseCorrelationIds() {
        List<Integer> ids = new ArrayList<>();
        ByteBuf buf;
        while ((buf = channel.readOutbound()) != null) {
            try {
                buf.readInt();
                ids.add(new ResponseHeaderData(new ByteBufAccessor(buf), ApiKey.HEARTBEAT.responseHeaderVersion(
                        VERSION)).correlationId());
            } finally {
                buf.release();
            }
        }
        return ids;
    }

    private List<HeartbeatResponseData> responses() {
        List<HeartbeatResponseData> responses = new ArrayList<>();
        ByteBuf buf;
        while ((buf = channel.readOutbound()) != null) {
            try {
                buf.readInt();
                ByteBufAccessor in = new ByteBufAccessor(buf);
                new ResponseHeaderData(in, ApiKey.HEARTBEAT.responseHeaderVersion(VERSION));
                responses.add(new HeartbeatResponseData(in, VERSION));
            } finally {
                buf.release();
            }
        }
        return responses;
    }

    /** Serves Heartbeat v3-v4 in two phases whose stages the test completes. */
    private static final class TwoPhaseHeartbeatHandler
            implements TwoPhaseApiHandler<HeartbeatRequestData, HeartbeatResponseData> {

        final List<CompletableFuture<Void>> dispatched = new ArrayList<>();
        final List<CompletableFuture<HeartbeatResponseData>> responses = new ArrayList<>();

        @Override
        public ApiKey apiKey() {
            return ApiKey.HEARTBEAT;
        }

        @Override
        public short minVersion() {
            return 3;
        }

        @Override
        public short maxVersion() {
            return 4;
        }

        @Override
        public Stages<HeartbeatResponseData> dispatch(RequestContext ctx, HeartbeatRequestData request) {
            CompletableFuture<Void> accepted = new CompletableFuture<>();
            CompletableFuture<HeartbeatResponseData> response = new CompletableFuture<>();
            dispatched.add(accepted);
            responses.add(response);
            return new Stages<>(accepted, response);
        }

        @Override
        public HeartbeatResponseData errorResponse(RequestContext ctx, HeartbeatRequestData request, Errors error) {
            return new HeartbeatResponseData().setErrorCode(error.code());
        }
    }

    /** Serves Heartbeat v3-v4 with futures the test completes; group "silent" expects no response. */
    private static final class FakeHeartbeatHandler implements ApiHandler<HeartbeatRequestData, HeartbeatResponseData> {

        final List<CompletableFuture<HeartbeatResponseData>> calls = new ArrayList<>();
        boolean throwOnHandle;

        @Override
        public ApiKey apiKey() {
            return ApiKey.HEARTBEAT;
        }

        @Override
        public short minVersion() {
            return 3;
        }

        @Override
        public short maxVersion() {
            return 4;
        }

        @Override
        public CompletionStage<HeartbeatResponseData> handle(RequestContext ctx, HeartbeatRequestData request) {
            if (throwOnHandle) {
                throw new IllegalStateException("handler bug");
            }
            CompletableFuture<HeartbeatResponseData> call = new CompletableFuture<>();
            calls.add(call);
            return call;
        }

        @Override
        public HeartbeatResponseData errorResponse(RequestContext ctx, HeartbeatRequestData request, Errors error) {
            return new HeartbeatResponseData().setErrorCode(error.code());
        }

        @Override
        public boolean expectsResponse(HeartbeatRequestData request) {
            return !"silent".equals(request.groupId());
        }
    }
}
