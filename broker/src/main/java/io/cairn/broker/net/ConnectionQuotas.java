package io.cairn.broker.net;

import io.cairn.broker.config.ConnectionLimits;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.AttributeKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Kafka's connection limits ({@code ConnectionQuotas}) over the Kafka listeners: {@code max.connections} for the
 * broker, {@code listener.name.<l>.max.connections} per listener, {@code max.connections.per.ip} and its
 * {@code max.connections.per.ip.overrides} per client address.
 *
 * <p>As Kafka's acceptor: a listener without a free slot (its own limit reached, or the broker's) stops accepting
 * (the server channel stops reading, so clients wait in the listen backlog) and holds the few connections it already
 * took until a connection closes or a limit rises; a connection over its address's limit is closed at once with one
 * INFO line. The inter-broker listener, when the broker has other listeners, is protected: only its own limit
 * applies, and a connection it takes over the broker's limit makes the least recently active connection of another
 * listener close, so followers and controllers always get through.
 *
 * <p>Thread-safe: counts change under one lock; each listener's gate runs on the acceptor event loop.
 */
public final class ConnectionQuotas {

    private static final Logger LOGGER = LogManager.getLogger(ConnectionQuotas.class);
    /** The last time a connection read from its socket, for the least-recently-active choice. */
    private static final AttributeKey<Long> LAST_ACTIVE = AttributeKey.valueOf("cairn.lastActiveNanos");
    private static final AttributeKey<String> LISTENER = AttributeKey.valueOf("cairn.listener");

    private enum Decision { ACCEPT, WAIT, REJECT }

    private final Object lock = new Object();
    private final Map<InetAddress, Integer> counts = new HashMap<>();
    private final Map<String, Integer> listenerCounts = new HashMap<>();
    private final Map<String, Gate> gates = new ConcurrentHashMap<>();
    /** Every accepted connection, for the close of the least recently active one. */
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();
    private final String protectedListener;
    private int total;
    private volatile ConnectionLimits limits;

    /**
     * @param limits             the limits at start
     * @param listeners          the names of the listeners counted
     * @param interBrokerListener the inter-broker listener's name (protected when there are other listeners)
     */
    public ConnectionQuotas(ConnectionLimits limits, Set<String> listeners, String interBrokerListener) {
        this.limits = limits;
        listeners.forEach(l -> listenerCounts.put(l, 0));
        this.protectedListener = listeners.size() > 1 && listeners.contains(interBrokerListener)
                ? interBrokerListener : null;
    }

    /** The handler of {@code listener}'s server channel that admits its new connections. */
    ChannelHandler gate(String listener) {
        return gates.computeIfAbsent(listener, Gate::new);
    }

    /** Whether connections must note their activity: only a protected listener makes others close. */
    boolean tracksActivity() {
        return protectedListener != null;
    }

    /** The handler at the head of each connection's pipeline that notes its activity. */
    static ChannelHandler activity() {
        return Activity.INSTANCE;
    }

    /** Applies new limits: waiting connections are admitted if they now fit, surplus ones closed as Kafka does. */
    public void update(ConnectionLimits newLimits) {
        ConnectionLimits old = limits;
        limits = newLimits;
        if (!old.equals(newLimits)) {
            LOGGER.info("Connection limits now: max.connections={}, max.connections.per.ip={}, "
                    + "max.connections.per.ip.overrides={}, per listener {}", newLimits.maxConnections(),
                    newLimits.maxConnectionsPerIp(), newLimits.perIpOverrides(), newLimits.perListener());
        }
        wakeGates();
        closeSurplus();
    }

    /** The connections open from {@code address}. */
    public int connections(InetAddress address) {
        synchronized (lock) {
            return counts.getOrDefault(address, 0);
        }
    }

    /** The connections open on every listener. */
    public int total() {
        synchronized (lock) {
            return total;
        }
    }

    private Decision admit(String listener, InetAddress address) {
        ConnectionLimits l = limits;
        synchronized (lock) {
            int onListener = listenerCounts.getOrDefault(listener, 0);
            boolean slot = onListener < l.forListener(listener)
                    && (listener.equals(protectedListener) || total < l.maxConnections());
            if (!slot) {
                return Decision.WAIT;
            }
            int fromAddress = counts.getOrDefault(address, 0);
            if (fromAddress >= l.forAddress(address)) {
                return Decision.REJECT;
            }
            counts.put(address, fromAddress + 1);
            listenerCounts.put(listener, onListener + 1);
            total++;
            return Decision.ACCEPT;
        }
    }

    private void release(String listener, InetAddress address) {
        synchronized (lock) {
            counts.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
            listenerCounts.computeIfPresent(listener, (a, n) -> Math.max(0, n - 1));
            total = Math.max(0, total - 1);
        }
        wakeGates();
    }

    private void wakeGates() {
        for (Gate gate : gates.values()) {
            gate.wake();
        }
    }

    /**
     * Kafka's {@code maxConnectionsExceeded}: while the protected listener's connections hold the broker over its
     * limit, the least recently active connection of another listener closes, one at a time.
     */
    private void closeSurplus() {
        if (protectedListener == null) {
            return;
        }
        int surplus;
        synchronized (lock) {
            surplus = total - limits.maxConnections();
        }
        for (int i = 0; i < surplus; i++) {
            Channel oldest = null;
            long oldestActive = Long.MAX_VALUE;
            for (Channel channel : open) {
                Long active = channel.attr(LAST_ACTIVE).get();
                if (!protectedListener.equals(channel.attr(LISTENER).get()) && channel.isActive() && active != null
                        && active < oldestActive) {
                    oldest = channel;
                    oldestActive = active;
                }
            }
            if (oldest == null) {
                return;
            }
            open.remove(oldest);
            LOGGER.info("Closing the least recently active connection {}: the broker is over max.connections={} "
                    + "with inter-broker connections", oldest.remoteAddress(), limits.maxConnections());
            oldest.close();
        }
    }

    private static InetAddress addressOf(Channel channel) {
        SocketAddress remote = channel.remoteAddress();
        return remote instanceof InetSocketAddress inet ? inet.getAddress() : null;
    }

    /**
     * One listener's acceptor side: reads each accepted child channel before Netty registers it, admits it, holds it
     * while there is no slot (the server channel stops reading), or closes it.
     */
    @ChannelHandler.Sharable
    private final class Gate extends ChannelInboundHandlerAdapter {
        private final String listener;
        /** Accepted children waiting for a slot, with the context to pass them on; only on the acceptor loop. */
        private final ArrayDeque<Channel> waiting = new ArrayDeque<>();
        private volatile ChannelHandlerContext context;

        Gate(String listener) {
            this.listener = listener;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            context = ctx;
            if (!(msg instanceof Channel child)) {
                ctx.fireChannelRead(msg);
                return;
            }
            if (!waiting.isEmpty()) {
                waiting.add(child);
                return;
            }
            if (!offer(ctx, child)) {
                waiting.add(child);
                ctx.channel().config().setAutoRead(false);
            }
        }

        /** Admits, or closes, {@code child}; false when it must wait for a slot. */
        private boolean offer(ChannelHandlerContext ctx, Channel child) {
            InetAddress address = addressOf(child);
            if (address == null) {
                ctx.fireChannelRead(child);
                return true;
            }
            switch (admit(listener, address)) {
                case WAIT -> {
                    return false;
                }
                case REJECT -> {
                    LOGGER.info("Rejected connection from {}, address already has the configured maximum of {} "
                            + "connections.", address, limits.forAddress(address));
                    child.unsafe().closeForcibly();
                    return true;
                }
                default -> {
                    child.attr(LISTENER).set(listener);
                    child.attr(LAST_ACTIVE).set(System.nanoTime());
                    open.add(child);
                    child.closeFuture().addListener(f -> {
                        open.remove(child);
                        release(listener, address);
                    });
                    ctx.fireChannelRead(child);
                    if (listener.equals(protectedListener)) {
                        closeSurplus();
                    }
                    return true;
                }
            }
        }

        /** Offers the waiting children again, on the acceptor loop, and reads on once none waits. */
        void wake() {
            ChannelHandlerContext ctx = context;
            if (ctx == null) {
                return;
            }
            ctx.executor().execute(() -> {
                while (!waiting.isEmpty()) {
                    Channel child = waiting.peek();
                    if (!offer(ctx, child)) {
                        return;
                    }
                    waiting.poll();
                }
                if (!ctx.channel().config().isAutoRead() && ctx.channel().isOpen()) {
                    ctx.channel().config().setAutoRead(true);
                }
            });
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            // The listener closes: children that never got a slot close with it.
            waiting.forEach(child -> child.unsafe().closeForcibly());
            waiting.clear();
            ctx.fireChannelInactive();
        }
    }

    /** Notes each read's time on the connection. */
    @ChannelHandler.Sharable
    private static final class Activity extends ChannelInboundHandlerAdapter {
        static final Activity INSTANCE = new Activity();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.channel().attr(LAST_ACTIVE).set(System.nanoTime());
            ctx.fireChannelRead(msg);
        }
    }
}
