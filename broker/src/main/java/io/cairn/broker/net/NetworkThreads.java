package io.cairn.broker.net;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.util.concurrent.AbstractEventExecutorGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.Promise;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The network threads of one listener ({@code listener.name.<l>.num.network.threads}, else
 * {@code num.network.threads}: Kafka's processors of one acceptor): a set of single-thread event loops that the
 * listener's accepted connections are registered with in turn, which a dynamic config resizes live. Growing adds
 * loops that new connections go to; shrinking stops the last loops, which closes the connections they serve, as
 * Kafka's {@code removeProcessors} closes the removed processors' connections (their clients reconnect). The
 * listener's server channel registers its connections here ({@code ServerBootstrap}'s child group).
 *
 * <p>Thread-safe: {@link #resize} and {@link #shutdownGracefully} are serialized; {@link #next} reads a
 * copy-on-write list.
 */
final class NetworkThreads extends AbstractEventExecutorGroup implements EventLoopGroup {

    /** One network thread, with the thread itself for its CPU time. */
    private record Processor(EventLoopGroup loop, Thread[] thread) {
    }

    private final IoHandlerFactory ioFactory;
    private final DefaultThreadFactory threadFactory;
    /** Written under this object's lock by resize and shutdown, read by every accept. */
    private final List<Processor> processors = new CopyOnWriteArrayList<>();
    private final AtomicInteger turn = new AtomicInteger();
    private final Promise<Void> terminated = GlobalEventExecutor.INSTANCE.newPromise();
    private volatile boolean shuttingDown;

    /**
     * @param threads      how many loops to start with
     * @param ioFactory    epoll or NIO
     * @param listenerName the listener served, in the threads' names ({@code cairn-network-thread-<listener>-...})
     */
    NetworkThreads(int threads, IoHandlerFactory ioFactory, String listenerName) {
        this.ioFactory = ioFactory;
        this.threadFactory = new DefaultThreadFactory("cairn-network-thread-" + listenerName);
        resize(threads);
    }

    /** How many network threads there are now. */
    int size() {
        return processors.size();
    }

    /** The network threads now, for their CPU time. */
    List<Thread> threads() {
        List<Thread> threads = new ArrayList<>();
        for (Processor p : processors) {
            if (p.thread()[0] != null) {
                threads.add(p.thread()[0]);
            }
        }
        return threads;
    }

    /**
     * Makes the set {@code threads} loops: new loops serve the next connections; removed loops are stopped and
     * their connections closed.
     */
    synchronized void resize(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("num.network.threads must be at least 1, got " + threads);
        }
        while (processors.size() < threads) {
            Thread[] holder = new Thread[1];
            EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, runnable -> {
                Thread thread = threadFactory.newThread(runnable);
                holder[0] = thread;
                return thread;
            }, ioFactory);
            processors.add(new Processor(loop, holder));
        }
        List<Processor> removed = new ArrayList<>();
        while (processors.size() > threads) {
            removed.add(processors.remove(processors.size() - 1));
        }
        // Stopping a loop closes every channel registered with it (the removed processors' connections).
        removed.forEach(p -> p.loop().shutdownGracefully(0, 5, TimeUnit.SECONDS));
    }

    @Override
    public EventLoop next() {
        List<Processor> now = processors;
        return now.get(Math.floorMod(turn.getAndIncrement(), now.size())).loop().next();
    }

    @Override
    public ChannelFuture register(Channel channel) {
        return next().register(channel);
    }

    @Override
    public ChannelFuture register(ChannelPromise promise) {
        return next().register(promise);
    }

    @Override
    @Deprecated
    @SuppressWarnings("deprecation")
    public ChannelFuture register(Channel channel, ChannelPromise promise) {
        return next().register(channel, promise);
    }

    @Override
    public Iterator<EventExecutor> iterator() {
        List<EventExecutor> loops = new ArrayList<>();
        processors.forEach(p -> p.loop().forEach(loops::add));
        return loops.iterator();
    }

    @Override
    public boolean isShuttingDown() {
        return shuttingDown;
    }

    @Override
    public synchronized Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
        shuttingDown = true;
        List<Future<?>> stopping = new ArrayList<>();
        processors.forEach(p -> stopping.add(p.loop().shutdownGracefully(quietPeriod, timeout, unit)));
        AtomicInteger left = new AtomicInteger(stopping.size());
        if (stopping.isEmpty()) {
            terminated.trySuccess(null);
        }
        stopping.forEach(f -> f.addListener(ignored -> {
            if (left.decrementAndGet() == 0) {
                terminated.trySuccess(null);
            }
        }));
        return terminated;
    }

    @Override
    public Future<?> terminationFuture() {
        return terminated;
    }

    @Override
    @Deprecated
    public void shutdown() {
        shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }

    @Override
    public boolean isShutdown() {
        return shuttingDown;
    }

    @Override
    public boolean isTerminated() {
        return terminated.isDone();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return terminated.await(timeout, unit);
    }
}
