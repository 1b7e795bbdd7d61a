package io.cairn.broker.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The Prometheus endpoint: {@code GET /metrics} on its own port (the JDK's HTTP server, one daemon thread
 * {@code cairn-metrics-http}), answering the text exposition format of {@link BrokerMetrics#scrape()}. A wildcard
 * (empty) host binds every interface, as a listener's does. Anything but GET or HEAD on {@code /metrics} gets 405,
 * any other path 404.
 *
 * <p>Lifecycle: {@link #start} binds (throws if the port cannot be bound), {@link #close} stops. Thread-safe.
 */
public final class MetricsHttpServer implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(MetricsHttpServer.class);
    private static final String PATH = "/metrics";
    private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsHttpServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Binds {@code host:port} (empty host: every interface; port 0: a free one) and serves {@code metrics}. */
    public static MetricsHttpServer start(String host, int port, BrokerMetrics metrics) throws IOException {
        InetSocketAddress address = host.isEmpty() ? new InetSocketAddress(port)
                : new InetSocketAddress(InetAddress.getByName(host), port);
        HttpServer server;
        try {
            server = HttpServer.create(address, 16);
        } catch (IOException e) {
            throw new IOException("Cannot bind the metrics endpoint to " + address + " (metrics.host/metrics.port): "
                    + e.getMessage(), e);
        }
        ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "cairn-metrics-http");
            thread.setDaemon(true);
            return thread;
        });
        server.setExecutor(executor);
        server.createContext("/", exchange -> handle(exchange, metrics));
        server.start();
        MetricsHttpServer started = new MetricsHttpServer(server, executor);
        LOGGER.info("Serving Prometheus metrics on http://{}:{}{}", host.isEmpty() ? "0.0.0.0" : host,
                started.port(), PATH);
        return started;
    }

    private static void handle(HttpExchange exchange, BrokerMetrics metrics) throws IOException {
        try (exchange) {
            if (!PATH.equals(exchange.getRequestURI().getPath())) {
                reply(exchange, 404, "Not found; metrics are at " + PATH + "\n", true);
                return;
            }
            String method = exchange.getRequestMethod();
            if (!"GET".equals(method) && !"HEAD".equals(method)) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                reply(exchange, 405, "Method not allowed\n", true);
                return;
            }
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            reply(exchange, 200, metrics.scrape(), "GET".equals(method));
        } catch (RuntimeException e) {
            LOGGER.error("Cannot answer a metrics scrape", e);
            throw e;
        }
    }

    private static void reply(HttpExchange exchange, int status, String text, boolean withBody) throws IOException {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, withBody ? body.length : -1);
        if (withBody) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** The bound port (the real one when 0 was asked for). */
    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
