package io.cairn.broker.net;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The broker's request-handler threads (Kafka's {@code KafkaRequestHandlerPool}): {@code num.io.threads} threads
 * named {@code data-plane-kafka-request-handler-N} that call every handler declared
 * {@code RunsOn.REQUEST_HANDLER_THREAD}, so reading files, opening logs and taking partition locks never happen on
 * an event loop. The queue needs no bound of its own: a connection hands the pool its next request only after its
 * previous one was dispatched, so it holds at most one request per open connection, whose bytes
 * {@code queued.max.request.bytes} already bounds.
 *
 * <p>The time the threads spend running requests is summed ({@link #busyNanos()}: Kafka's
 * {@code RequestHandlerAvgIdlePercent} is the rest).
 *
 * <p>{@link #resize} changes the number of threads live (a dynamic {@code num.io.threads}, as Kafka's
 * {@code resizeThreadPool}): new threads start at once, surplus ones end when they finish their current request.
 *
 * <p>Thread-safe. Closed by the server after its listeners: requests already queued still run, then the threads end.
 */
public final class RequestHandlerPool implements Executor, AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(RequestHandlerPool.class);
    private static final long CLOSE_TIMEOUT_MS = 10_000;

    private final ThreadPoolExecutor threads;
    private volatile int numIoThreads;
    private final LongAdder busyNanos = new LongAdder();

    public RequestHandlerPool(int numIoThreads) {
        if (numIoThreads < 1) {
            throw new IllegalArgumentException("num.io.threads must be at least 1, not " + numIoThreads);
        }
        this.numIoThreads = numIoThreads;
        AtomicInteger index = new AtomicInteger();
        this.threads = new ThreadPoolExecutor(numIoThreads, numIoThreads, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), runnable -> {
                    Thread thread = new HandlerThread(runnable, "data-plane-kafka-request-handler-"
                            + index.getAndIncrement());
                    thread.setDaemon(true);
                    return thread;
                }) {
            @Override
            protected void beforeExecute(Thread thread, Runnable task) {
                ((HandlerThread) thread).taskStartNanos = System.nanoTime();
            }

            @Override
            protected void afterExecute(Runnable task, Throwable error) {
                busyNanos.add(System.nanoTime() - ((HandlerThread) Thread.currentThread()).taskStartNanos);
            }
        };
    }

    /** The nanoseconds the threads have spent running requests, summed over the threads. */
    public long busyNanos() {
        return busyNanos.sum();
    }

    /** {@code num.io.threads}. */
    public int threadCount() {
        return numIoThreads;
    }

    /** Changes the number of threads to {@code newSize} (at least 1). */
    public synchronized void resize(int newSize) {
        if (newSize < 1) {
            throw new IllegalArgumentException("num.io.threads must be at least 1, not " + newSize);
        }
        int oldSize = numIoThreads;
        if (newSize == oldSize) {
            return;
        }
        if (newSize > oldSize) {
            threads.setMaximumPoolSize(newSize);
            threads.setCorePoolSize(newSize);
            threads.prestartAllCoreThreads();
        } else {
            threads.setCorePoolSize(newSize);
            threads.setMaximumPoolSize(newSize);
        }
        numIoThreads = newSize;
        LOGGER.info("Resized the request handler pool from {} to {} threads", oldSize, newSize);
    }

    /** Runs {@code task} on a request-handler thread; throws {@code RejectedExecutionException} once closed. */
    @Override
    public void execute(Runnable task) {
        threads.execute(task);
    }

    /** A request-handler thread; its start time of the running task is its own. */
    private static final class HandlerThread extends Thread {

        /** Written and read by this thread only (before and after each task). */
        private long taskStartNanos;

        HandlerThread(Runnable runnable, String name) {
            super(runnable, name);
        }
    }

    /** Lets the queued requests finish, then ends the threads (at most {@value #CLOSE_TIMEOUT_MS} ms). */
    @Override
    public void close() {
        threads.shutdown();
        try {
            if (!threads.awaitTermination(CLOSE_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                LOGGER.warn("Request handlers still busy after {} ms; interrupting them", CLOSE_TIMEOUT_MS);
                threads.shutdownNow();
            }
        } catch (InterruptedException e) {
            threads.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
