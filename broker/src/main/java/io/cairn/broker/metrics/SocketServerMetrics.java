package io.cairn.broker.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * Kafka's socket-server and thread-pool meters: per listener the open connections
 * ({@code kafka_server_socket_server_metrics_connection_count{listener}}) and the connections created and closed
 * ({@code ..._connection_creation_total}, {@code ..._connection_close_total}: Kafka's {@code -total} attributes,
 * whose {@code rate()} is Kafka's {@code -rate}); SASL re-authentication (KIP-368) per listener as Kafka's
 * {@code Selector} and {@code SocketServer} count it ({@code ..._successful_reauthentication_total},
 * {@code ..._failed_reauthentication_total}, {@code ..._reauthentication_latency_avg} and {@code _max} in
 * milliseconds over the last 30 to 60 s, and {@code ..._expired_connections_killed_count}, the connections closed
 * because a request came after their session expired); the connection creation rates of KIP-612 as Kafka's
 * {@code ConnectionQuotas} publishes them ({@code ..._connection_accept_rate{listener}} and
 * {@code ..._broker_connection_accept_rate}, connections per second over the quota window, and per listener
 * {@code ..._connection_accept_throttle_time} and {@code ..._ip_connection_accept_throttle_time}, the mean of the
 * non-zero throttle times in ms over the last 30 to 60 s, NaN without one); the network threads' and request
 * handlers' idle fraction
 * ({@code kafka_network_socketserver_networkprocessoravgidle_percent},
 * {@code kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent}).
 *
 * <p>Thread-safe.
 */
public final class SocketServerMetrics {

    private static final String PREFIX = "kafka.server.socket.server.metrics.";

    private final MeterRegistry registry;
    private final ConcurrentMap<String, ListenerMeters> byListener = new ConcurrentHashMap<>();

    SocketServerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The connection meters of {@code listener}; resolve once per listener. */
    public ListenerMeters forListener(String listener) {
        return byListener.computeIfAbsent(listener, name -> new ListenerMeters(registry, name));
    }

    /** Publishes the broker-wide connection accept rate (Kafka's {@code broker-connection-accept-rate}). */
    public void brokerConnectionAcceptRate(DoubleSupplier rate) {
        Gauge.builder(PREFIX + "broker.connection.accept.rate", rate, DoubleSupplier::getAsDouble)
                .description("Connections accepted per second by the broker (over the quota window)")
                .strongReference(true).register(registry);
    }

    /** Publishes the network threads' idle fraction from their accumulated busy (CPU) time. */
    public void networkProcessorIdle(LongSupplier busyNanos, IntSupplier threads) {
        IdleRatio ratio = new IdleRatio(registry.config().clock(), busyNanos, threads);
        // Strong: the gauge is the only holder of the ratio (Micrometer keeps gauge objects weakly by default).
        Gauge.builder("kafka.network.socketserver.networkprocessoravgidle.percent", ratio, IdleRatio::read)
                .description("Idle fraction of the network threads since the last scrape").strongReference(true)
                .register(registry);
    }

    /** Publishes the request-handler threads' idle fraction from the time they spent running requests. */
    public void requestHandlerIdle(LongSupplier busyNanos, IntSupplier threads) {
        IdleRatio ratio = new IdleRatio(registry.config().clock(), busyNanos, threads);
        Gauge.builder("kafka.server.kafkarequesthandlerpool.requesthandleravgidle.percent", ratio, IdleRatio::read)
                .description("Idle fraction of the request-handler threads since the last scrape")
                .strongReference(true).register(registry);
    }

    /** The connection meters of one listener. Thread-safe. */
    public static final class ListenerMeters {

        private final AtomicInteger open = new AtomicInteger();
        private final Counter created;
        private final Counter closed;
        private final Counter reauthenticated;
        private final Counter reauthenticationFailed;
        private final WindowedAvgMax reauthenticationLatency;
        private final AtomicLong expiredKilled = new AtomicLong();
        private final MeterRegistry registry;
        private final String listener;
        private final WindowedAvgMax acceptThrottleTime;
        private final WindowedAvgMax ipAcceptThrottleTime;

        ListenerMeters(MeterRegistry registry, String listener) {
            this.registry = registry;
            this.listener = listener;
            this.acceptThrottleTime = new WindowedAvgMax(registry.config().clock());
            this.ipAcceptThrottleTime = new WindowedAvgMax(registry.config().clock());
            Gauge.builder(PREFIX + "connection.accept.throttle.time", acceptThrottleTime, WindowedAvgMax::avg)
                    .description("Mean ms accepting was throttled by the broker's or listener's connection "
                            + "creation rate (last 30 to 60 s)").tag("listener", listener).strongReference(true)
                    .register(registry);
            Gauge.builder(PREFIX + "ip.connection.accept.throttle.time", ipAcceptThrottleTime, WindowedAvgMax::avg)
                    .description("Mean ms a connection over its IP's connection creation rate was held before "
                            + "its close (last 30 to 60 s)").tag("listener", listener).strongReference(true)
                    .register(registry);
            Gauge.builder(PREFIX + "connection.count", open, AtomicInteger::get).description("Open connections")
                    .tag("listener", listener)
                    .strongReference(true).register(registry);
            this.created = Counter.builder(PREFIX + "connection.creation").description("Connections accepted")
                    .tag("listener", listener).register(registry);
            this.closed = Counter.builder(PREFIX + "connection.close").description("Connections closed")
                    .tag("listener", listener).register(registry);
            this.reauthenticated = Counter.builder(PREFIX + "successful.reauthentication")
                    .description("Successful SASL re-authentications").tag("listener", listener).register(registry);
            this.reauthenticationFailed = Counter.builder(PREFIX + "failed.reauthentication")
                    .description("Failed SASL re-authentications").tag("listener", listener).register(registry);
            this.reauthenticationLatency = new WindowedAvgMax(registry.config().clock());
            Gauge.builder(PREFIX + "reauthentication.latency.avg", reauthenticationLatency, WindowedAvgMax::avg)
                    .description("Mean milliseconds of a SASL re-authentication (last 30 to 60 s)")
                    .tag("listener", listener).strongReference(true).register(registry);
            Gauge.builder(PREFIX + "reauthentication.latency.max", reauthenticationLatency, WindowedAvgMax::max)
                    .description("Largest milliseconds of a SASL re-authentication (last 30 to 60 s)")
                    .tag("listener", listener).strongReference(true).register(registry);
            Gauge.builder(PREFIX + "expired.connections.killed.count", expiredKilled, AtomicLong::get)
                    .description("Connections closed because a request came after their SASL session expired")
                    .tag("listener", listener).strongReference(true).register(registry);
        }

        /** Publishes the listener's connection accept rate (Kafka's {@code connection-accept-rate}). */
        public void connectionAcceptRate(DoubleSupplier rate) {
            Gauge.builder(PREFIX + "connection.accept.rate", rate, DoubleSupplier::getAsDouble)
                    .description("Connections accepted per second (over the quota window)").tag("listener", listener)
                    .strongReference(true).register(registry);
        }

        /** Accepting was throttled by the broker's or the listener's connection creation rate. */
        public void connectionAcceptThrottled(int throttleMs) {
            acceptThrottleTime.record(throttleMs);
        }

        /** A connection over its IP's connection creation rate is held for {@code throttleMs} and closed. */
        public void ipConnectionAcceptThrottled(int throttleMs) {
            ipAcceptThrottleTime.record(throttleMs);
        }

        /** A SASL re-authentication succeeded, {@code latencyMs} after its SaslHandshake arrived. */
        public void reauthenticated(long latencyMs) {
            reauthenticated.increment();
            reauthenticationLatency.record(latencyMs);
        }

        public void reauthenticationFailed() {
            reauthenticationFailed.increment();
        }

        /** A connection closed because a request came after its SASL session expired. */
        public void expiredConnectionKilled() {
            expiredKilled.incrementAndGet();
        }

        public void connectionOpened() {
            open.incrementAndGet();
            created.increment();
        }

        public void connectionClosed() {
            open.decrementAndGet();
            closed.increment();
        }
    }
}
