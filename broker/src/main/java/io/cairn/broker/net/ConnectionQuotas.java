package io.cairn.broker.net;

import io.cairn.broker.config.ConnectionLimits;
import io.cairn.broker.metrics.SocketServerMetrics;
import io.cairn.broker.quota.ConnectionRateSensor;
import io.cairn.broker.quota.IpConnectionRates;
import io.cairn.log.Time;
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
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Kafka's connection limits ({@code ConnectionQuotas}) over the Kafka listeners: {@code max.connections} for the
 * broker, {@code listener.name.<l>.max.connections} per listener, {@code max.connections.per.ip} and its
 * {@code max.connections.per.ip.overrides} per client address, and the connection creation rates of KIP-612:
 * {@code max.connection.creation.rate} for the broker, {@code listener.name.<l>.max.connection.creation.rate} per
 * listener and the {@code connection_creation_rate} client quota of IP entities.
 *
 * <p>Rates as Kafka's acceptor applies them: each connection a listener takes is counted in its listener's and the
 * broker's rate (the protected inter-broker listener's in its own only) over {@code quota.window.num} samples of
 * {@code quota.window.size.seconds}; when that takes a rate over its limit the listener stops accepting for the
 * throttle time (at most one window), then goes on with that connection. A connection that takes its address's rate
 * over its IP quota is not admitted: it is held unread for the throttle time and then closed (Kafka's delayed close, so
 * that the client does not reconnect at once), is taken back out of the listener's and broker's rates, and its
 * throttle time is recorded ({@code ip-connection-accept-throttle-time}); the sensor of an address is kept only while
 * it has a quota and dropped after an hour idle.
 *
 * <p>As Kafka's acceptor: a listener without a free slot (its own limit reached, or the broker's) stops accepting
 * (the server channel stops reading, so clients wait in the listen backlog) and holds the few connections it already
 * took until a connection closes or a limit rises; a connection over its address's limit is closed at once with one
 * INFO line. The inter-broker listener, when the broker has other listeners, is protected: only its own limit
 * applies, and a connection it takes over the broker's limit makes the least recently active connection of another
 * listener close, so followers and controllers always get through.
 *
 * <p>Thread-safe: counts and rates change under one lock; each listener's gate runs on the acceptor event loop.
 */
public final class ConnectionQuotas {

    private static final Logger LOGGER = LogManager.getLogger(ConnectionQuotas.class);
    /** The last time a connection read from its socket, for the least-recently-active choice. */
    private static final AttributeKey<Long> LAST_ACTIVE = AttributeKey.valueOf("cairn.lastActiveNanos");
    private static final AttributeKey<String> LISTENER = AttributeKey.valueOf("cairn.listener");
    /** Kafka's expiry of an IP's connection-rate sensor: an hour without a connection. */
    private static final long IP_SENSOR_EXPIRATION_MS = 3_600_000L;

    private enum Decision { ACCEPT, WAIT, REJECT, THROTTLE }

    /** The decision on a connection, with the IP throttle time of a THROTTLE. */
    private record Admission(Decision decision, int throttleMs) {
        static final Admission ACCEPT = new Admission(Decision.ACCEPT, 0);
        static final Admission WAIT = new Admission(Decision.WAIT, 0);
        static final Admission REJECT = new Admission(Decision.REJECT, 0);
    }

    private final Object lock = new Object();
    private final Map<InetAddress, Integer> counts = new HashMap<>();
    private final Map<String, Integer> listenerCounts = new HashMap<>();
    private final Map<String, Gate> gates = new ConcurrentHashMap<>();
    /** Every accepted connection, for the close of the least recently active one. */
    private final Set<Channel> open = ConcurrentHashMap.newKeySet();
    private final String protectedListener;
    private int total;
    private volatile ConnectionLimits limits;
    private volatile IpConnectionRates ipRates = IpConnectionRates.NONE;
    private final Time time;
    private final int samples;
    private final long windowMs;
    private final SocketServerMetrics metrics;
    /** The broker-wide accept rate; guarded by lock. */
    private final ConnectionRateSensor brokerRate;
    /** Each listener's accept rate; guarded by lock. */
    private final Map<String, ConnectionRateSensor> listenerRates = new HashMap<>();
    /** The accept rates of addresses with an IP quota, least recently used first; guarded by lock. */
    private final LinkedHashMap<InetAddress, ConnectionRateSensor> ipSensors = new LinkedHashMap<>(16, 0.75f, true);

    /**
     * @param limits             the limits at start
     * @param listeners          the names of the listeners counted
     * @param interBrokerListener the inter-broker listener's name (protected when there are other listeners)
     */
    public ConnectionQuotas(ConnectionLimits limits, Set<String> listeners, String interBrokerListener) {
        this(limits, listeners, interBrokerListener, 11, 1, Time.SYSTEM, null);
    }

    /**
     * @param samples           {@code quota.window.num} of the accept rates
     * @param windowSizeSeconds {@code quota.window.size.seconds}, also the longest throttle
     * @param metrics           where the accept rates and throttle times are published, or null
     */
    public ConnectionQuotas(ConnectionLimits limits, Set<String> listeners, String interBrokerListener, int samples,
                            int windowSizeSeconds, Time time, SocketServerMetrics metrics) {
        this.limits = limits;
        this.time = time;
        this.samples = samples;
        this.windowMs = windowSizeSeconds * 1000L;
        this.metrics = metrics;
        this.brokerRate = new ConnectionRateSensor(samples, windowMs);
        listeners.forEach(l -> {
            listenerCounts.put(l, 0);
            listenerRates.put(l, new ConnectionRateSensor(samples, windowMs));
        });
        this.protectedListener = listeners.size() > 1 && listeners.contains(interBrokerListener)
                ? interBrokerListener : null;
        if (metrics != null) {
            metrics.brokerConnectionAcceptRate(() -> acceptRate(null));
            listeners.forEach(l -> metrics.forListener(l).connectionAcceptRate(() -> acceptRate(l)));
        }
    }

    /** Applies new IP connection creation rates ({@code connection_creation_rate} of IP entities). */
    public void updateIpRates(IpConnectionRates rates) {
        IpConnectionRates old = ipRates;
        ipRates = rates;
        if (!old.equals(rates)) {
            LOGGER.info("IP connection creation rates now: default {}, per address {}",
                    rates.defaultRate() == Integer.MAX_VALUE ? "none" : rates.defaultRate(), rates.byAddress());
        }
    }

    /** Connections accepted per second on {@code listener}, or by the broker when it is null. */
    public double acceptRate(String listener) {
        long now = time.milliseconds();
        synchronized (lock) {
            ConnectionRateSensor sensor = listener == null ? brokerRate : listenerRates.get(listener);
            return sensor == null ? 0 : sensor.rate(now);
        }
    }

    /** Counts a listener a dynamic {@code listeners} change binds. */
    void addListener(String listener) {
        synchronized (lock) {
            listenerCounts.putIfAbsent(listener, 0);
            listenerRates.putIfAbsent(listener, new ConnectionRateSensor(samples, windowMs));
        }
        if (metrics != null) {
            metrics.forListener(listener).connectionAcceptRate(() -> acceptRate(listener));
        }
    }

    /** Stops counting a listener a dynamic {@code listeners} change closed. */
    void removeListener(String listener) {
        gates.remove(listener);
        synchronized (lock) {
            listenerCounts.remove(listener);
            listenerRates.remove(listener);
        }
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
                    + "max.connections.per.ip.overrides={}, per listener {}, max.connection.creation.rate={}, "
                    + "per listener {}", newLimits.maxConnections(), newLimits.maxConnectionsPerIp(),
                    newLimits.perIpOverrides(), newLimits.perListener(), newLimits.maxConnectionCreationRate(),
                    newLimits.perListenerCreationRate());
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

    private Admission admit(String listener, InetAddress address) {
        ConnectionLimits l = limits;
        synchronized (lock) {
            int onListener = listenerCounts.getOrDefault(listener, 0);
            boolean slot = onListener < l.forListener(listener)
                    && (listener.equals(protectedListener) || total < l.maxConnections());
            if (!slot) {
                return Admission.WAIT;
            }
            int ipThrottleMs = recordIpConnection(listener, address);
            if (ipThrottleMs > 0) {
                return new Admission(Decision.THROTTLE, ipThrottleMs);
            }
            int fromAddress = counts.getOrDefault(address, 0);
            if (fromAddress >= l.forAddress(address)) {
                return Admission.REJECT;
            }
            counts.put(address, fromAddress + 1);
            listenerCounts.put(listener, onListener + 1);
            total++;
            return Admission.ACCEPT;
        }
    }

    /**
     * Kafka's {@code recordConnectionAndGetThrottleTimeMs}: counts a connection in the listener's rate and, but for
     * the protected listener, the broker's; the longer throttle time of the two.
     */
    private int recordConnection(String listener) {
        ConnectionLimits l = limits;
        long now = time.milliseconds();
        int throttleMs;
        synchronized (lock) {
            int brokerThrottleMs = listener.equals(protectedListener) ? 0
                    : brokerRate.recordAndGetThrottleTimeMs(l.maxConnectionCreationRate(), now);
            ConnectionRateSensor sensor = listenerRates.computeIfAbsent(listener,
                    name -> new ConnectionRateSensor(samples, windowMs));
            throttleMs = Math.max(brokerThrottleMs,
                    sensor.recordAndGetThrottleTimeMs(l.creationRateForListener(listener), now));
        }
        if (throttleMs > 0 && metrics != null) {
            metrics.forListener(listener).connectionAcceptThrottled(throttleMs);
        }
        return throttleMs;
    }

    /**
     * Kafka's {@code recordIpConnectionMaybeThrottle}: with an IP quota, counts the connection in its address's rate;
     * over the quota it is taken back there and from the listener's and broker's rates, and the throttle time is
     * returned (0 when the connection may go on). Guarded by lock.
     */
    private int recordIpConnection(String listener, InetAddress address) {
        int rate = ipRates.rateFor(address);
        if (rate == Integer.MAX_VALUE) {
            return 0;
        }
        long now = time.milliseconds();
        expireIdleIpSensors(now);
        ConnectionRateSensor sensor = ipSensors.computeIfAbsent(address,
                a -> new ConnectionRateSensor(samples, windowMs));
        int throttleMs = sensor.recordAndGetThrottleTimeMs(rate, now);
        if (throttleMs == 0) {
            return 0;
        }
        sensor.unrecord(now);
        if (!listener.equals(protectedListener)) {
            brokerRate.unrecord(now);
        }
        ConnectionRateSensor onListener = listenerRates.get(listener);
        if (onListener != null) {
            onListener.unrecord(now);
        }
        if (metrics != null) {
            metrics.forListener(listener).ipConnectionAcceptThrottled(throttleMs);
        }
        return throttleMs;
    }

    /** Drops the sensors of addresses idle for an hour (Kafka's IP sensor expiry). Guarded by lock. */
    private void expireIdleIpSensors(long nowMs) {
        Iterator<ConnectionRateSensor> it = ipSensors.values().iterator();
        while (it.hasNext()) {
            if (nowMs - it.next().lastRecordMs() < IP_SENSOR_EXPIRATION_MS) {
                return;
            }
            it.remove();
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
     * One listener's acceptor side: reads each accepted child channel before Netty registers it, counts it in the
     * accept rates, holds it while accepting is throttled or there is no slot (the server channel stops reading, so
     * further clients wait in the listen backlog), then admits it, closes it, or holds it unread until its IP throttle
     * time is over and closes it.
     */
    @ChannelHandler.Sharable
    private final class Gate extends ChannelInboundHandlerAdapter {
        private final String listener;
        /** Accepted children not yet admitted, the first one next; only on the acceptor loop. */
        private final ArrayDeque<Channel> waiting = new ArrayDeque<>();
        /** Children held for their IP throttle time before they are closed; only on the acceptor loop. */
        private final Set<Channel> delayedClose = new HashSet<>();
        /** Whether the first waiting child was counted in the accept rates; only on the acceptor loop. */
        private boolean headCounted;
        /** Until when (ms) the accept rates throttle this listener; only on the acceptor loop. */
        private long throttledUntilMs;
        /** Whether a drain is scheduled for the end of the throttle; only on the acceptor loop. */
        private boolean drainScheduled;
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
            waiting.add(child);
            drain(ctx);
        }

        /** Admits the waiting children in order while it may, then reads on; on the acceptor loop. */
        private void drain(ChannelHandlerContext ctx) {
            while (!waiting.isEmpty()) {
                if (!headCounted) {
                    headCounted = true;
                    int throttleMs = recordConnection(listener);
                    if (throttleMs > 0) {
                        throttledUntilMs = time.milliseconds() + throttleMs;
                        LOGGER.debug("Throttling accepts on listener {} for {} ms (connection creation rate)",
                                listener, throttleMs);
                    }
                }
                long remainingMs = throttledUntilMs - time.milliseconds();
                if (remainingMs > 0) {
                    ctx.channel().config().setAutoRead(false);
                    if (!drainScheduled) {
                        drainScheduled = true;
                        ctx.executor().schedule(() -> {
                            drainScheduled = false;
                            drain(ctx);
                        }, remainingMs, TimeUnit.MILLISECONDS);
                    }
                    return;
                }
                if (!offer(ctx, waiting.peek())) {
                    ctx.channel().config().setAutoRead(false);
                    return;
                }
                waiting.poll();
                headCounted = false;
            }
            if (!ctx.channel().config().isAutoRead() && ctx.channel().isOpen()) {
                ctx.channel().config().setAutoRead(true);
            }
        }

        /** Admits, or closes, {@code child}; false when it must wait for a slot. */
        private boolean offer(ChannelHandlerContext ctx, Channel child) {
            InetAddress address = addressOf(child);
            if (address == null) {
                ctx.fireChannelRead(child);
                return true;
            }
            Admission admission = admit(listener, address);
            switch (admission.decision()) {
                case WAIT -> {
                    return false;
                }
                case REJECT -> {
                    LOGGER.info("Rejected connection from {}, address already has the configured maximum of {} "
                            + "connections.", address, limits.forAddress(address));
                    child.unsafe().closeForcibly();
                    return true;
                }
                case THROTTLE -> {
                    LOGGER.debug("Delaying closing of connection from {} for {} ms", address,
                            admission.throttleMs());
                    delayedClose.add(child);
                    ctx.executor().schedule(() -> {
                        if (delayedClose.remove(child)) {
                            child.unsafe().closeForcibly();
                        }
                    }, admission.throttleMs(), TimeUnit.MILLISECONDS);
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
            ctx.executor().execute(() -> drain(ctx));
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            // The listener closes: children that never got a slot, or wait to be closed, close with it.
            waiting.forEach(child -> child.unsafe().closeForcibly());
            waiting.clear();
            delayedClose.forEach(child -> child.unsafe().closeForcibly());
            delayedClose.clear();
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
