package io.cairn.broker;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.Endpoint;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.net.SocketServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * One Cairn node: its log directories, its handlers and its listeners, started and stopped together. {@link Main}
 * runs one per process; tests may run one in their own JVM.
 *
 * <p>Lifecycle: {@link #start()} once, then {@link #close()} (idempotent). Thread-safe: close may be called from a
 * shutdown hook while another thread waits.
 */
public final class CairnServer implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(CairnServer.class);

    private final BrokerConfig config;
    private final List<ApiHandler<?, ?>> handlers;
    private final String logPrefix;
    private SocketServer socketServer;
    private boolean closed;

    /** A server with the APIs implemented so far (today: ApiVersions only, registered by the registry itself). */
    public CairnServer(BrokerConfig config) {
        this(config, List.of());
    }

    CairnServer(BrokerConfig config, List<ApiHandler<?, ?>> handlers) {
        this.config = config;
        this.handlers = List.copyOf(handlers);
        this.logPrefix = "[CairnServer id=" + config.nodeId() + "] ";
    }

    /** Creates the log directories and binds the listeners; on failure everything started is stopped again. */
    public synchronized void start() throws InterruptedException {
        LOGGER.info("{}starting", logPrefix);
        for (String unknown : config.unknownKeys()) {
            LOGGER.warn("The configuration '{}' was supplied but isn't a known config.", unknown);
        }
        createLogDirs();
        socketServer = new SocketServer(config, this::registryFor);
        try {
            socketServer.start();
        } catch (InterruptedException | RuntimeException e) {
            socketServer.close();
            throw e;
        }
    }

    private HandlerRegistry registryFor(Endpoint endpoint) {
        return HandlerRegistry.forListener(handlers, config.isControllerListener(endpoint.listenerName()));
    }

    private void createLogDirs() {
        for (Path dir : config.logDirs()) {
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot create log directory " + dir.toAbsolutePath(), e);
            }
            LOGGER.info("{}Log directory {}", logPrefix, dir.toAbsolutePath().normalize());
        }
    }

    /** The port a listener is bound to; useful when the config asked for port 0. */
    public synchronized int boundPort(String listenerName) {
        return socketServer.boundPort(listenerName);
    }

    public BrokerConfig config() {
        return config;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOGGER.info("{}shutting down", logPrefix);
        if (socketServer != null) {
            socketServer.close();
        }
        LOGGER.info("{}shut down completed", logPrefix);
    }
}
