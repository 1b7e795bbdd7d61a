package io.cairn.broker.metrics;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;

/**
 * The broker's meter registry and the component meters built on it: requests ({@link RequestMetrics}), topics
 * ({@link BrokerTopicMetrics}), listeners and threads ({@link SocketServerMetrics}), log flushes
 * ({@link LogFlushMetrics}), controller events ({@link ControllerEventMetrics}), plus the JVM and process
 * metrics of the Prometheus client ({@code jvm_memory_used_bytes}, {@code jvm_gc_collection_seconds},
 * {@code jvm_threads_current}, {@code process_cpu_seconds_total}, {@code process_open_fds}: the names Kafka
 * dashboards query, which Micrometer's own JVM binders do not produce) and scrape-time collectors added by the
 * owners of the state they read ({@link #addCollector}).
 *
 * <p>One per server. Thread-safe: meters may be recorded from any thread while a scrape runs.
 */
public final class BrokerMetrics implements AutoCloseable {

    private final PrometheusMeterRegistry registry;
    private final MillisSummaries summaries;
    private final RequestMetrics requests;
    private final BrokerTopicMetrics topics;
    private final SocketServerMetrics socketServer;
    private final LogFlushMetrics logFlush;
    private final ControllerEventMetrics controllerEvents;

    private BrokerMetrics(PrometheusMeterRegistry registry, boolean enabled) {
        this.registry = registry;
        if (!enabled) {
            // Every meter registered from here on is Micrometer's no-op meter: recording costs a virtual call.
            registry.config().meterFilter(MeterFilter.deny());
        }
        this.summaries = new MillisSummaries(registry.config().clock(), enabled);
        if (enabled) {
            registry.getPrometheusRegistry().register(summaries);
        }
        this.requests = new RequestMetrics(registry, summaries);
        this.topics = new BrokerTopicMetrics(registry);
        this.socketServer = new SocketServerMetrics(registry);
        this.logFlush = new LogFlushMetrics(summaries);
        this.controllerEvents = new ControllerEventMetrics(registry, summaries);
    }

    /** The server's metrics, JVM and process metrics included. */
    public static BrokerMetrics create() {
        BrokerMetrics metrics = new BrokerMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), true);
        JvmMetrics.builder().register(metrics.registry.getPrometheusRegistry());
        return metrics;
    }

    /** Metrics that record nothing ({@code metrics.enabled=false}): every meter is a no-op, nothing is served. */
    public static BrokerMetrics disabled() {
        return new BrokerMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), false);
    }

    /** Metrics on {@code clock} without the JVM metrics (tests). */
    public static BrokerMetrics withClock(Clock clock) {
        return new BrokerMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT,
                new io.prometheus.metrics.model.registry.PrometheusRegistry(), clock), true);
    }

    public RequestMetrics requests() {
        return requests;
    }

    public BrokerTopicMetrics topics() {
        return topics;
    }

    public SocketServerMetrics socketServer() {
        return socketServer;
    }

    /** What the log managers tell of their segment flushes. */
    public LogFlushMetrics logFlush() {
        return logFlush;
    }

    /** What the controller's event loop tells of its events. */
    public ControllerEventMetrics controllerEvents() {
        return controllerEvents;
    }

    /** The registry, for components that register their own gauges. */
    public MeterRegistry registry() {
        return registry;
    }

    /** Adds a collector evaluated at every scrape (series whose label sets follow the broker's state). */
    public void addCollector(MultiCollector collector) {
        registry.getPrometheusRegistry().register(collector);
    }

    /** Every metric in the Prometheus text format 0.0.4. */
    public String scrape() {
        return registry.scrape();
    }

    @Override
    public void close() {
        registry.close();
    }
}
