package io.cairn.broker.net;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.DynamicListeners;
import io.cairn.broker.config.DynamicNetworkThreads;
import io.cairn.broker.config.DynamicSaslSettings;
import io.cairn.broker.config.Endpoint;
import io.cairn.broker.config.SaslSettings;
import io.cairn.broker.config.SecurityProtocol;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.metrics.BrokerMetrics;
import io.cairn.broker.security.ScramCredentials;
import io.cairn.broker.security.SslEngineFactory;
import io.cairn.broker.security.SslFactory;
import io.cairn.log.Time;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.UnknownHostException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The broker's network front: one Netty server channel per configured listener on a shared acceptor thread, each
 * listener with its own network threads ({@code listener.name.<l>.num.network.threads}, else
 * {@code num.network.threads}, as Kafka gives each listener's acceptor its processors), epoll where the platform has
 * it and NIO elsewhere.
 * A listener with an empty or wildcard host binds the IPv6 wildcard, which on Linux also accepts IPv4, so
 * {@code localhost} works whether it resolves to 127.0.0.1 or ::1.
 *
 * <p>Lifecycle: {@link #start()} once, then {@link #close()} once. Thread-safe for {@link #boundPort} after start.
 */
public final class SocketServer implements AutoCloseable, DynamicListeners.Binder, DynamicNetworkThreads.Listeners,
        DynamicSaslSettings.Listeners {

    private static final Logger LOGGER = LogManager.getLogger(SocketServer.class);

    private final BrokerConfig config;
    private final Function<Endpoint, HandlerRegistry> registries;
    private final boolean epoll = Epoll.isAvailable();
    private final Map<String, InetSocketAddress> boundAddresses = new ConcurrentHashMap<>();
    private final RequestMemoryPool memoryPool;
    private final Executor requestHandlers;
    private final BrokerMetrics metrics;
    /** The SCRAM credentials SASL listeners authenticate against (the current metadata image's). */
    private final ScramCredentials scramCredentials;
    /** The TLS engines of each SSL listener, by listener name (their stores reloadable). */
    private final Map<String, SslFactory> sslFactories = new LinkedHashMap<>();
    private final ConnectionQuotas connectionQuotas;
    /** The channel initializer of each bound listener, by listener name, closed after the listeners. */
    private final Map<String, CairnChannelInitializer> initializers = new ConcurrentHashMap<>();
    /** Each bound listener's server channel and connections, by listener name (a listener removed closes them). */
    private final Map<String, ChannelGroup> listenerChannels = new ConcurrentHashMap<>();
    private EventLoopGroup acceptorGroup;
    /** Epoll or NIO, from start; null before. */
    private volatile IoHandlerFactory ioFactory;
    /**
     * Each bound listener's network threads, by listener name: put by bind (under this object's lock), removed with
     * the listener, read by the metrics.
     */
    private final Map<String, NetworkThreads> networkGroups = new ConcurrentHashMap<>();
    /** The SASL settings a listener is bound with when dynamic configs gave them before start. This lock. */
    private final Map<String, SaslSettings> saslBeforeStart = new LinkedHashMap<>();
    /** The network thread count of each listener when it is bound (a dynamic size applied before). This lock. */
    private final Map<String, Integer> networkThreadCounts = new LinkedHashMap<>();

    /**
     * @param registries gives each listener its handlers (controller listeners serve other APIs than broker ones)
     * @param requestHandlers runs the handlers that do not run on the network threads (the caller owns it and
     *     closes it after this server)
     * @param metrics where requests, connections and the network threads' idle time are recorded
     * @param scramCredentials where SCRAM users are looked up (a read of the current metadata image)
     * @throws io.cairn.broker.config.ConfigException when an SSL listener's stores or settings cannot be used
     */
    public SocketServer(BrokerConfig config, Function<Endpoint, HandlerRegistry> registries,
            Executor requestHandlers, BrokerMetrics metrics, ScramCredentials scramCredentials) {
        this.config = config;
        this.scramCredentials = scramCredentials;
        this.metrics = metrics;
        this.registries = registries;
        this.requestHandlers = requestHandlers;
        this.memoryPool = new RequestMemoryPool(config.queuedMaxRequestBytes());
        config.kafkaListeners().forEach(endpoint -> networkThreadCounts.put(endpoint.listenerName(),
                config.numNetworkThreads(endpoint.listenerName())));
        this.connectionQuotas = new ConnectionQuotas(config.connectionLimits(), config.kafkaListeners().stream()
                .map(Endpoint::listenerName).collect(Collectors.toSet()),
                config.replicaFetch().interBrokerListenerName(), config.quotaWindowNum(),
                config.quotaWindowSizeSeconds(), Time.SYSTEM, metrics.socketServer());
        // Every SSL listener's stores are loaded here, before the broker registers or binds anything: a bad key store
        // fails startup with one ConfigException naming its key.
        for (Endpoint endpoint : config.kafkaListeners()) {
            SecurityProtocol protocol = endpoint.securityProtocol();
            if (protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL) {
                SslEngineFactory factory = SslEngineFactory.create(config.sslSettings(endpoint.listenerName()));
                sslFactories.put(endpoint.listenerName(), new SslFactory(factory, endpoint.listenerName().equals(
                        config.replicaFetch().interBrokerListenerName())));
                LOGGER.info("Listener {} serves TLS: {}", endpoint.listenerName(), factory);
            }
            if (config.saslSettings(endpoint.listenerName()) != null) {
                LOGGER.info("Listener {} authenticates with SASL: {}", endpoint.listenerName(),
                        config.saslSettings(endpoint.listenerName()));
            }
        }
    }

    /** Binds every listener; throws if one cannot be bound (the caller closes this server). */
    public void start() throws InterruptedException {
        ioFactory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        acceptorGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("cairn-acceptor"), ioFactory);
        metrics.socketServer().networkProcessorIdle(this::networkThreadsCpuNanos, () -> networkGroups.values()
                .stream().mapToInt(NetworkThreads::size).sum());
        for (Endpoint endpoint : config.kafkaListeners()) {
            SaslSettings sasl;
            synchronized (this) {
                sasl = saslBeforeStart.getOrDefault(endpoint.listenerName(),
                        config.saslSettings(endpoint.listenerName()));
            }
            bind(endpoint, sslFactories.get(endpoint.listenerName()), sasl);
        }
    }

    /**
     * Binds a listener a dynamic {@code listeners} change adds, with the settings {@code next} (the configuration
     * with that change) gives it: its TLS stores are loaded here, so a bad one fails the change, not the broker.
     */
    @Override
    public void addListener(BrokerConfig next, Endpoint endpoint) {
        SecurityProtocol protocol = endpoint.securityProtocol();
        SslFactory ssl = null;
        if (protocol == SecurityProtocol.SSL || protocol == SecurityProtocol.SASL_SSL) {
            ssl = new SslFactory(SslEngineFactory.create(next.sslSettings(endpoint.listenerName())), false);
        }
        connectionQuotas.addListener(endpoint.listenerName());
        synchronized (this) {
            networkThreadCounts.putIfAbsent(endpoint.listenerName(), next.numNetworkThreads(endpoint.listenerName()));
        }
        try {
            bind(endpoint, ssl, next.saslSettings(endpoint.listenerName()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while binding listener " + endpoint, e);
        } catch (RuntimeException e) {
            removeListener(endpoint.listenerName());
            throw e;
        }
    }

    /** Closes a listener a dynamic {@code listeners} change removes, with its connections (Kafka closes them). */
    @Override
    public void removeListener(String listenerName) {
        ChannelGroup group = listenerChannels.remove(listenerName);
        if (group != null) {
            group.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        boundAddresses.remove(listenerName);
        CairnChannelInitializer initializer = initializers.remove(listenerName);
        if (initializer != null) {
            initializer.close();
        }
        synchronized (this) {
            shutdown(networkGroups.remove(listenerName));
            networkThreadCounts.remove(listenerName);
        }
        connectionQuotas.removeListener(listenerName);
    }

    /** The TLS engines of each SSL listener, by listener name, whose stores dynamic configs replace. */
    public Map<String, SslFactory> sslFactories() {
        return Collections.unmodifiableMap(sslFactories);
    }

    private void bind(Endpoint endpoint, SslFactory ssl, SaslSettings sasl) throws InterruptedException {
        Class<? extends ServerChannel> channelClass = epoll ? EpollServerSocketChannel.class
                : NioServerSocketChannel.class;
        ChannelGroup listenerGroup = new DefaultChannelGroup("cairn-listener-" + endpoint.listenerName(),
                GlobalEventExecutor.INSTANCE);
        listenerChannels.put(endpoint.listenerName(), listenerGroup);
        CairnChannelInitializer initializer = new CairnChannelInitializer(endpoint, registries.apply(endpoint),
                config.socketRequestMaxBytes(), config.connectionsMaxIdleMs(), listenerGroup, memoryPool,
                requestHandlers, new DispatcherMetrics(metrics.requests(),
                        metrics.socketServer().forListener(endpoint.listenerName()), Time.SYSTEM), ssl,
                sasl, scramCredentials, connectionQuotas.tracksActivity());
        initializers.put(endpoint.listenerName(), initializer);
        NetworkThreads networkGroup;
        synchronized (this) {
            networkGroup = networkGroups.computeIfAbsent(endpoint.listenerName(), name -> new NetworkThreads(
                    networkThreadCounts.getOrDefault(name, config.numNetworkThreads()), ioFactory, name));
        }
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(acceptorGroup, networkGroup)
                .channel(channelClass)
                .option(ChannelOption.SO_BACKLOG, config.socketListenBacklogSize())
                .option(ChannelOption.SO_REUSEADDR, true)
                .handler(connectionQuotas.gate(endpoint.listenerName()))
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.SO_KEEPALIVE, true)
                .childHandler(initializer);
        if (config.socketSendBufferBytes() > 0) {
            bootstrap.childOption(ChannelOption.SO_SNDBUF, config.socketSendBufferBytes());
        }
        if (config.socketReceiveBufferBytes() > 0) {
            bootstrap.childOption(ChannelOption.SO_RCVBUF, config.socketReceiveBufferBytes());
        }
        InetSocketAddress address = bindAddress(endpoint);
        Channel channel;
        try {
            channel = bootstrap.bind(address).sync().channel();
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            if (!endpoint.wildcardHost() || !(address.getAddress() instanceof Inet6Address)) {
                throw new IllegalStateException("Cannot bind listener " + endpoint + " to " + address + ": "
                        + e.getMessage(), e);
            }
            LOGGER.debug("Cannot bind the IPv6 wildcard for {}, binding 0.0.0.0: {}", endpoint, e.toString());
            try {
                channel = bootstrap.bind(new InetSocketAddress(endpoint.port())).sync().channel();
            } catch (InterruptedException e2) {
                throw e2;
            } catch (Exception e2) {
                throw new IllegalStateException("Cannot bind listener " + endpoint + ": " + e2.getMessage(), e2);
            }
        }
        listenerGroup.add(channel);
        InetSocketAddress bound = (InetSocketAddress) channel.localAddress();
        boundAddresses.put(endpoint.listenerName(), bound);
        String shownHost = endpoint.wildcardHost() ? "0.0.0.0" : endpoint.host();
        LOGGER.info("Awaiting socket connections on {}:{} for listener {} ({}, {}{}).", shownHost, bound.getPort(),
                endpoint.listenerName(), endpoint.securityProtocol(), epoll ? "epoll" : "nio",
                endpoint.wildcardHost() && bound.getAddress() instanceof Inet6Address
                        ? ", dual-stack IPv4/IPv6" : "");
    }

    private static InetSocketAddress bindAddress(Endpoint endpoint) {
        if (!endpoint.wildcardHost()) {
            return new InetSocketAddress(endpoint.host(), endpoint.port());
        }
        if (!NetUtil.isIpV4StackPreferred()) {
            try {
                // "::" with IPV6_V6ONLY off (Linux default) accepts IPv4 too; "0.0.0.0" would be IPv4 only.
                return new InetSocketAddress(InetAddress.getByName("::"), endpoint.port());
            } catch (UnknownHostException e) {
                LOGGER.debug("No IPv6 wildcard address, binding 0.0.0.0", e);
            }
        }
        return new InetSocketAddress(endpoint.port());
    }

    /**
     * The CPU time the network threads have used: a network thread waiting in epoll/select uses none, so its CPU
     * time is its busy time (Kafka measures the time outside {@code select}, which Netty does not expose).
     */
    private long networkThreadsCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (NetworkThreads group : networkGroups.values()) {
            for (Thread thread : group.threads()) {
                long cpu = threads.getThreadCpuTime(thread.getId());
                if (cpu > 0) {
                    total += cpu;
                }
            }
        }
        return total;
    }

    /** The port {@code listenerName} is bound to (the real one when the config said 0). */
    public int boundPort(String listenerName) {
        InetSocketAddress address = boundAddresses.get(listenerName);
        if (address == null) {
            throw new IllegalArgumentException("No bound listener named " + listenerName);
        }
        return address.getPort();
    }

    /**
     * Makes the network threads of listener {@code listenerName} {@code threads} (a dynamic broker config): its new
     * connections are spread over the new set; when it shrinks, the connections of the removed threads are closed, as
     * Kafka closes a removed processor's. A listener not bound (removed meanwhile) is left alone.
     */
    @Override
    public synchronized void resizeNetworkThreads(String listenerName, int threads) {
        if (!networkThreadCounts.containsKey(listenerName)) {
            return;
        }
        networkThreadCounts.put(listenerName, threads);
        NetworkThreads group = networkGroups.get(listenerName);
        if (group != null) {
            group.resize(threads);
        }
        LOGGER.info("Listener {}'s connections are served by {} network threads", listenerName, threads);
    }

    /** The SASL settings of each SASL listener now (or what start binds it with), by listener name. */
    @Override
    public synchronized Map<String, SaslSettings> saslSettings() {
        Map<String, SaslSettings> settings = new LinkedHashMap<>();
        for (Endpoint endpoint : config.kafkaListeners()) {
            SaslSettings before = saslBeforeStart.getOrDefault(endpoint.listenerName(),
                    config.saslSettings(endpoint.listenerName()));
            if (before != null) {
                settings.put(endpoint.listenerName(), before);
            }
        }
        initializers.forEach((name, initializer) -> {
            if (initializer.saslSettings() != null) {
                settings.put(name, initializer.saslSettings());
            }
        });
        return settings;
    }

    /**
     * Makes {@code next} the SASL settings of the next connections of listener {@code listenerName} (a dynamic
     * config); a listener not bound (removed meanwhile) is left alone.
     *
     * @throws IllegalStateException when the servers of {@code next} cannot start (OAUTHBEARER's keys)
     */
    @Override
    public synchronized void replaceSasl(String listenerName, SaslSettings next) {
        CairnChannelInitializer initializer = initializers.get(listenerName);
        if (initializer != null) {
            initializer.replaceSasl(next);
            LOGGER.info("Listener {} authenticates new connections with SASL: {}", listenerName, next);
        } else if (config.saslSettings(listenerName) != null) {
            saslBeforeStart.put(listenerName, next);
        }
    }

    /** The network thread count of each Kafka listener, by listener name (what start binds them with, before). */
    @Override
    public synchronized Map<String, Integer> networkThreads() {
        return Map.copyOf(networkThreadCounts);
    }

    /** The connection limits of the Kafka listeners, which dynamic broker configs change. */
    public ConnectionQuotas connectionQuotas() {
        return connectionQuotas;
    }

    public boolean usesEpoll() {
        return epoll;
    }

    /** Closes the listeners and every open connection, then stops the event loops. */
    @Override
    public void close() {
        listenerChannels.values().forEach(group -> group.close().awaitUninterruptibly(5, TimeUnit.SECONDS));
        shutdown(acceptorGroup);
        networkGroups.values().forEach(SocketServer::shutdown);
        initializers.values().forEach(CairnChannelInitializer::close);
    }

    private static void shutdown(EventLoopGroup group) {
        if (group != null) {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }
}
