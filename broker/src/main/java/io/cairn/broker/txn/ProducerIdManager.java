package io.cairn.broker.txn;

import io.cairn.log.Time;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AllocateProducerIdsRequestData;
import io.cairn.wire.message.AllocateProducerIdsResponseData;
import java.util.concurrent.CompletableFuture;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Hands out producer ids from blocks that the active controller allocates (Kafka's {@code RPCProducerIdManager}):
 * ids come from the current block; when 90% of it is used the next block is requested ahead of need
 * (AllocateProducerIds with this broker's id and epoch). When the current block is used up and no next block has
 * arrived, a caller waits for the request in flight; if that fails (no controller, stale broker epoch, a block that
 * is not above the current one) the caller gets COORDINATOR_LOAD_IN_PROGRESS, the retriable error Kafka answers,
 * and the next request is sent after a {@value #RETRY_BACKOFF_MS} ms backoff. The first id is fetched on first
 * use, so producers that start with the broker wait for one controller round trip.
 *
 * <p>Thread-safe: the blocks and the request in flight are guarded by this object's monitor; controller responses
 * complete on the metadata node's threads and never block.
 */
public final class ProducerIdManager {

    private static final Logger LOGGER = LogManager.getLogger(ProducerIdManager.class);
    /** Kafka's {@code ProducerIdManager.PidPrefetchThreshold}: prefetch once this share of a block is used. */
    static final double PREFETCH_THRESHOLD = 0.90;
    /** Kafka's {@code RPCProducerIdManager.RetryBackoffMs}. */
    static final long RETRY_BACKOFF_MS = 50L;

    private final MetadataNode metadata;
    private final int brokerId;
    private final Time time;
    private final String logPrefix;
    /** Guarded by {@code this}: ids are handed out from here; null before the first block. */
    private Block current;
    /** Guarded by {@code this}: the prefetched block, or null. */
    private Block next;
    /** Guarded by {@code this}: completes when the AllocateProducerIds in flight is handled, or null. */
    private CompletableFuture<Void> inFlight;
    /** Guarded by {@code this}: no new request before this time after a failed one. */
    private long backoffDeadlineMs;

    public ProducerIdManager(MetadataNode metadata, int brokerId, Time time) {
        this.metadata = metadata;
        this.brokerId = brokerId;
        this.time = time;
        this.logPrefix = "[ProducerIdManager id=" + brokerId + "] ";
    }

    /**
     * A new producer id; completes at once while a block has ids left, otherwise when the block requested from the
     * controller arrives, or exceptionally with COORDINATOR_LOAD_IN_PROGRESS when none could be had.
     */
    public CompletableFuture<Long> generateProducerId() {
        CompletableFuture<Void> waitFor;
        synchronized (this) {
            Long id = claim();
            if (id != null) {
                return CompletableFuture.completedFuture(id);
            }
            waitFor = maybeRequestNextBlock();
        }
        if (waitFor == null) {
            return CompletableFuture.failedFuture(blockFull());
        }
        return waitFor.thenCompose(done -> {
            synchronized (this) {
                Long id = claim();
                return id != null ? CompletableFuture.completedFuture(id)
                        : CompletableFuture.<Long>failedFuture(blockFull());
            }
        });
    }

    private static RuntimeException blockFull() {
        return Errors.COORDINATOR_LOAD_IN_PROGRESS.exception("Producer ID block is full. Waiting for next block");
    }

    /** The next id of the current (or the prefetched) block, requesting the following block at 90%; or null. */
    private Long claim() {
        if ((current == null || current.exhausted()) && next != null) {
            current = next;
            next = null;
        }
        if (current == null || current.exhausted()) {
            return null;
        }
        long id = current.nextId++;
        if (id == current.prefetchTarget()) {
            maybeRequestNextBlock();
        }
        return id;
    }

    /** Sends AllocateProducerIds unless a block is prefetched, a request is in flight, or in backoff. */
    private CompletableFuture<Void> maybeRequestNextBlock() {
        if (next != null) {
            return CompletableFuture.completedFuture(null);
        }
        if (inFlight != null) {
            return inFlight;
        }
        if (time.milliseconds() < backoffDeadlineMs) {
            return null;
        }
        long brokerEpoch = metadata.currentImage().broker(brokerId).map(BrokerRegistration::epoch).orElse(-1L);
        CompletableFuture<Void> request = new CompletableFuture<>();
        inFlight = request;
        AllocateProducerIdsRequestData data = new AllocateProducerIdsRequestData().setBrokerId(brokerId)
                .setBrokerEpoch(brokerEpoch);
        CompletableFuture<AllocateProducerIdsResponseData> sent;
        try {
            sent = metadata.allocateProducerIds(data);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((response, error) -> {
            synchronized (this) {
                handleResponse(response, error);
                inFlight = null;
            }
            request.complete(null);
        });
        return request;
    }

    /** Guarded by {@code this}. */
    private void handleResponse(AllocateProducerIdsResponseData response, Throwable error) {
        boolean ok = false;
        if (error != null) {
            LOGGER.warn("{}Cannot get a producer id block from the controller: {}", logPrefix, error.toString());
        } else {
            Errors code = Errors.forCode(response.errorCode());
            long start = response.producerIdStart();
            int length = response.producerIdLen();
            if (code != Errors.NONE) {
                LOGGER.warn("{}The controller answered AllocateProducerIds with {}", logPrefix, code);
            } else if (current != null && start < current.last()) {
                LOGGER.error("{}Producer ID block is not monotonic with current block: current={} response={}",
                        logPrefix, current, response);
            } else if (start < 0 || length <= 0 || start > Long.MAX_VALUE - length) {
                LOGGER.error("{}Producer ID block includes invalid ID range: {}", logPrefix, response);
            } else {
                next = new Block(start, length);
                ok = true;
                LOGGER.info("{}Got producer ID block {}", logPrefix, next);
            }
        }
        if (!ok) {
            backoffDeadlineMs = time.milliseconds() + RETRY_BACKOFF_MS;
        }
    }

    /** A range of producer ids [start, start + length); not thread-safe (guarded by the manager). */
    private static final class Block {
        private final long start;
        private final int length;
        private long nextId;

        Block(long start, int length) {
            this.start = start;
            this.length = length;
            this.nextId = start;
        }

        boolean exhausted() {
            return nextId >= start + length;
        }

        long last() {
            return start + length - 1;
        }

        long prefetchTarget() {
            return start + (long) (length * PREFETCH_THRESHOLD);
        }

        @Override
        public String toString() {
            return "ProducerIdsBlock(start=" + start + ", length=" + length + ", next=" + nextId + ")";
        }
    }
}
