package io.cairn.broker.txn.markers;

import io.cairn.broker.txn.TransactionMarkerSender;
import io.cairn.isr.client.ClientTls;
import io.cairn.log.Time;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The transaction marker channel (Kafka's {@code TransactionMarkerChannelManager}): the transaction coordinator's
 * COMMIT and ABORT markers go to the leaders of the transaction's partitions as WriteTxnMarkers requests over the
 * inter-broker listener, one request per leader at a time carrying every ready marker for it, retried until written
 * (the rules are {@link MarkerQueue}'s). Partitions this broker leads take the same path, to this broker's own
 * inter-broker listener, as Kafka sends to itself: one way of writing a marker, with the leader's acks=all wait.
 *
 * <p>Threads: {@code cairn-txn-marker-channel} routes ready markers with the current metadata image and sleeps until
 * the next back-off ends, a call arrives or an answer comes back; each destination broker has its own
 * {@code cairn-txn-marker-sender-<id>} thread that does the blocking send, so a slow leader (its acks wait is up to
 * {@code request.timeout.ms}) delays only its own partitions. No Netty event loop or request-handler thread ever
 * waits here. {@link #writeMarkers} only queues and returns.
 *
 * <p>Thread-safe: the queue is guarded by one lock; futures complete on the channel or a sender thread (callers that
 * need their own thread switch with {@code thenXxxAsync}).
 */
public final class TransactionMarkerChannel implements TransactionMarkerSender, AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(TransactionMarkerChannel.class);

    /**
     * @param interBrokerListener the listener whose endpoints the leaders are reached on
     * @param retryBackoffMs      the wait before a failed marker is routed again
     * @param maxQueuedMarkers    the most partition markers in the queue at once
     * @param socketTimeoutMs     connect and read timeout of a request (above the leader's acks wait)
     */
    public record Config(String interBrokerListener, long retryBackoffMs, int maxQueuedMarkers, int socketTimeoutMs) {
    }

    private final Supplier<MetadataImage> image;
    private final MarkerTransport transport;
    private final Time time;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final MarkerQueue queue;
    private final Map<Integer, ExecutorService> senders = new ConcurrentHashMap<>();
    private final Thread thread;
    /** Guarded by {@link #lock}. */
    private boolean closed;

    /** A channel reaching leaders over the inter-broker client; {@link #start()} it. */
    public static TransactionMarkerChannel create(int brokerId, Supplier<MetadataImage> image, Time time,
                                                  Config config) {
        return create(brokerId, image, time, config, ClientTls.PLAINTEXT);
    }

    /** As {@link #create(int, Supplier, Time, Config)}, reaching leaders over {@code tls}. */
    public static TransactionMarkerChannel create(int brokerId, Supplier<MetadataImage> image, Time time,
                                                  Config config, ClientTls tls) {
        return new TransactionMarkerChannel(image, new InterBrokerMarkerTransport(brokerId, config.socketTimeoutMs(),
            tls), time, config);
    }

    TransactionMarkerChannel(Supplier<MetadataImage> image, MarkerTransport transport, Time time, Config config) {
        this.image = image;
        this.transport = transport;
        this.time = time;
        this.queue = new MarkerQueue(config.interBrokerListener(), config.retryBackoffMs(),
            config.maxQueuedMarkers());
        this.thread = new Thread(this::run, "cairn-txn-marker-channel");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    @Override
    public CompletionStage<Void> writeMarkers(String transactionalId, long producerId, short producerEpoch,
                                              boolean commit, int coordinatorEpoch,
                                              Collection<TopicPartition> partitions) {
        MarkerQueue.Txn txn = new MarkerQueue.Txn(transactionalId, producerId, producerEpoch, commit,
            coordinatorEpoch, List.copyOf(partitions));
        lock.lock();
        try {
            if (closed) {
                return CompletableFuture.failedFuture(closedException());
            }
            queue.add(txn);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        return txn.result;
    }

    private void run() {
        lock.lock();
        try {
            while (!closed) {
                long now = time.milliseconds();
                for (MarkerQueue.Send send : queue.drain(image.get(), now)) {
                    sender(send.destination().id()).execute(() -> deliver(send));
                }
                long next = queue.nextReadyMs(now);
                if (next == Long.MAX_VALUE) {
                    changed.await();
                } else {
                    changed.await(Math.max(1L, next - now), TimeUnit.MILLISECONDS);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOGGER.error("The transaction marker channel stopped", e);
            closed = true;
            queue.failAll(e);
        } finally {
            lock.unlock();
        }
    }

    private ExecutorService sender(int brokerId) {
        return senders.computeIfAbsent(brokerId, id -> Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "cairn-txn-marker-sender-" + id);
            t.setDaemon(true);
            return t;
        }));
    }

    /** On the destination's sender thread: the blocking send, then its outcome applied under the lock. */
    private void deliver(MarkerQueue.Send send) {
        WriteTxnMarkersResponseData response = null;
        Exception failure = null;
        try {
            response = transport.send(send.destination(), send.request());
        } catch (Exception e) {
            failure = e;
        }
        lock.lock();
        try {
            if (closed) {
                return;
            }
            if (response != null) {
                queue.onResponse(send, response, time.milliseconds());
            } else {
                queue.onFailure(send, failure, time.milliseconds());
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Queued markers whose partition had no reachable leader when last routed (metrics). */
    public int unknownDestinationMarkers() {
        lock.lock();
        try {
            return queue.unknownDestinations();
        } finally {
            lock.unlock();
        }
    }

    /** Partition markers queued and not yet written (tests, metrics). */
    public int queuedMarkers() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    private static IllegalStateException closedException() {
        return new IllegalStateException("The transaction marker channel is closed");
    }

    /** Stops the threads and fails every pending call; a send blocked on a socket fails at once. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            queue.failAll(closedException());
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        transport.close();
        senders.values().forEach(ExecutorService::shutdownNow);
        try {
            thread.join(10_000L);
            for (ExecutorService sender : senders.values()) {
                sender.awaitTermination(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
