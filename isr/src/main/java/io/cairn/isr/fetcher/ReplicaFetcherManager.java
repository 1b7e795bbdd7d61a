package io.cairn.isr.fetcher;

import io.cairn.isr.Partition;
import io.cairn.isr.ReplicationQuota;
import io.cairn.isr.client.ClientTls;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The follower fetchers of this broker (Kafka's {@code ReplicaFetcherManager} / {@code AbstractFetcherManager}):
 * {@code num.replica.fetchers} threads per leader broker, started on demand; a partition goes to fetcher
 * {@code abs(31 * topic.hashCode() + partition) % num.replica.fetchers} of its leader, as Kafka assigns it. Threads
 * are named {@code ReplicaFetcherThread-<fetcherId>-<leaderId>}; a thread whose leader moved to another endpoint is
 * replaced, one left without partitions is stopped.
 *
 * <p>Thread-safety: thread-safe (one monitor); never called from a fetcher thread.
 */
public final class ReplicaFetcherManager implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(ReplicaFetcherManager.class);

    /** Creates the endpoint of a new fetcher thread. */
    @FunctionalInterface
    public interface EndpointFactory {
        LeaderEndpoint create(int fetcherId, SourceBroker source);
    }

    private final int brokerId;
    private final ReplicaFetcherConfig config;
    private final Function<TopicPartition, Partition> partitions;
    private final EndpointFactory endpoints;
    private final Time time;
    private volatile ReplicationQuota quota;
    private final Map<FetcherKey, ReplicaFetcherThread> threads = new HashMap<>();
    private final Set<TopicPartition> failedPartitions = ConcurrentHashMap.newKeySet();
    /** {@code num.replica.fetchers}, changed by {@link #resizeThreadPool}. */
    private int numFetchers;
    private boolean closed;

    /**
     * @param brokerId   this broker's id
     * @param config     the {@code replica.*} settings
     * @param partitions this broker's hosted partition of a topic partition, or null
     * @param endpoints  how a fetcher reaches its leader
     * @param time       the clock of the back-offs
     */
    public ReplicaFetcherManager(int brokerId, ReplicaFetcherConfig config,
                                 Function<TopicPartition, Partition> partitions, EndpointFactory endpoints,
                                 Time time) {
        this.brokerId = brokerId;
        this.config = config;
        this.partitions = partitions;
        this.endpoints = endpoints;
        this.time = time;
        this.quota = new ReplicationQuota(time);
        this.numFetchers = config.numFetchers();
    }

    /** The follower side of the replication throttle that every fetcher started from now on obeys. */
    public void useQuota(ReplicationQuota followerQuota) {
        this.quota = followerQuota;
    }

    /** The network fetchers: each thread its own {@link RemoteLeaderEndpoint}. */
    public static ReplicaFetcherManager remote(int brokerId, ReplicaFetcherConfig config,
                                               Function<TopicPartition, Partition> partitions,
                                               LongSupplier brokerEpoch) {
        return remote(brokerId, config, partitions, brokerEpoch, ClientTls.PLAINTEXT);
    }

    /** As {@link #remote(int, ReplicaFetcherConfig, Function, LongSupplier)}, connecting over {@code tls}. */
    public static ReplicaFetcherManager remote(int brokerId, ReplicaFetcherConfig config,
                                               Function<TopicPartition, Partition> partitions,
                                               LongSupplier brokerEpoch, ClientTls tls) {
        return new ReplicaFetcherManager(brokerId, config, partitions, (fetcherId, source) ->
            new RemoteLeaderEndpoint(source, brokerId, brokerEpoch, config,
                "broker-" + brokerId + "-fetcher-" + fetcherId, tls), Time.SYSTEM);
    }

    /** Kafka's fetcher id of a partition. */
    synchronized int fetcherId(TopicPartition tp) {
        int hash = 31 * tp.topic().hashCode() + tp.partition();
        return (hash == Integer.MIN_VALUE ? 0 : Math.abs(hash)) % numFetchers;
    }

    /** The number of fetcher threads per leader broker ({@code num.replica.fetchers} now). */
    public synchronized int numFetchers() {
        return numFetchers;
    }

    /**
     * Changes {@code num.replica.fetchers} live (Kafka's {@code AbstractFetcherManager.resizeThreadPool}): every
     * partition is taken off its thread with its fetch position and leader epoch, the threads stop, and the
     * partitions are added again over {@code newSize} threads per leader, each where {@link #fetcherId} now puts it.
     */
    public synchronized void resizeThreadPool(int newSize) {
        if (newSize < 1) {
            throw new IllegalArgumentException("num.replica.fetchers must be at least 1, not " + newSize);
        }
        if (closed || newSize == numFetchers) {
            return;
        }
        Map<TopicPartition, InitialFetchState> moved = new LinkedHashMap<>();
        List<ReplicaFetcherThread> stopped = new ArrayList<>(threads.values());
        for (ReplicaFetcherThread thread : stopped) {
            thread.initiateShutdown();
            thread.removePartitions(thread.partitions()).forEach((tp, state) -> moved.put(tp,
                new InitialFetchState(state.topicId(), thread.sourceBroker(), state.currentLeaderEpoch(),
                    state.fetchOffset())));
        }
        stopped.forEach(ReplicaFetcherThread::shutdown);
        threads.clear();
        int oldSize = numFetchers;
        numFetchers = newSize;
        LOGGER.info("[ReplicaFetcherManager on broker {}] Resized the fetcher thread pool from {} to {} threads per "
            + "leader; moving {} partition(s)", brokerId, oldSize, newSize, moved.size());
        addFetcherForPartitions(moved);
    }

    /**
     * Starts fetching {@code initial}'s partitions from their leaders (Kafka's {@code addFetcherForPartitions}),
     * starting the fetcher threads they need.
     */
    public synchronized void addFetcherForPartitions(Map<TopicPartition, InitialFetchState> initial) {
        if (closed) {
            return;
        }
        Map<FetcherKey, Map<TopicPartition, InitialFetchState>> byFetcher = new LinkedHashMap<>();
        initial.forEach((tp, state) -> byFetcher.computeIfAbsent(new FetcherKey(state.leader().id(), fetcherId(tp)),
            k -> new LinkedHashMap<>()).put(tp, state));
        byFetcher.forEach((key, states) -> {
            SourceBroker source = states.values().iterator().next().leader();
            ReplicaFetcherThread thread = threads.get(key);
            if (thread != null && !thread.sourceBroker().equals(source)) {
                thread.shutdown();
                thread = null;
            }
            if (thread == null) {
                thread = new ReplicaFetcherThread("ReplicaFetcherThread-" + key.fetcherId() + "-" + key.leaderId(),
                    endpoints.create(key.fetcherId(), source), partitions, failedPartitions, time,
                    config.fetchBackoffMs(), config.fetchMaxBytes(), quota);
                threads.put(key, thread);
                thread.start();
            }
            thread.addPartitions(states);
            LOGGER.info("[ReplicaFetcherManager on broker {}] Added fetcher to {} for partitions {}", brokerId,
                source, states);
        });
    }

    /** Stops fetching {@code toRemove}; returns their last fetch states. */
    public synchronized Map<TopicPartition, PartitionFetchState> removeFetcherForPartitions(
            Set<TopicPartition> toRemove) {
        Map<TopicPartition, PartitionFetchState> removed = new HashMap<>();
        for (ReplicaFetcherThread thread : threads.values()) {
            removed.putAll(thread.removePartitions(toRemove));
        }
        failedPartitions.removeAll(toRemove);
        if (!removed.isEmpty()) {
            LOGGER.info("[ReplicaFetcherManager on broker {}] Removed fetcher for partitions {}", brokerId,
                removed.keySet());
        }
        return removed;
    }

    /** Stops the threads left without partitions. */
    public synchronized void shutdownIdleFetcherThreads() {
        threads.entrySet().removeIf(e -> {
            if (e.getValue().partitionCount() > 0) {
                return false;
            }
            e.getValue().shutdown();
            return true;
        });
    }

    /** The thread fetching {@code tp}, or null. */
    public synchronized ReplicaFetcherThread fetcher(TopicPartition tp) {
        for (ReplicaFetcherThread thread : threads.values()) {
            if (thread.fetchState(tp) != null) {
                return thread;
            }
        }
        return null;
    }

    /** Receives one fetched partition's replication lag. */
    @FunctionalInterface
    public interface LagConsumer {
        /**
         * @param clientId the fetcher thread's name ({@code ReplicaFetcherThread-<fetcherId>-<leaderId>}), Kafka's
         *                 {@code clientId} tag of {@code FetcherLagMetrics}
         */
        void accept(String clientId, TopicPartition tp, long lag);
    }

    /**
     * Calls {@code action} with the replication lag of every partition the fetchers have had an answer for (Kafka's
     * {@code FetcherLagMetrics.ConsumerLag}): the leader's high watermark minus this replica's next fetch offset.
     */
    public synchronized void forEachLag(LagConsumer action) {
        for (ReplicaFetcherThread thread : threads.values()) {
            String clientId = thread.getName();
            thread.forEachLag((tp, lag) -> action.accept(clientId, tp, lag));
        }
    }

    /** The largest lag over every fetched partition, 0 when there is none (Kafka's {@code MaxLag}). */
    public synchronized long maxLag() {
        long[] max = {0L};
        forEachLag((clientId, tp, lag) -> max[0] = Math.max(max[0], lag));
        return max[0];
    }

    /** Partitions given up on (a storage error, a fenced epoch) until metadata adds them again. */
    public Set<TopicPartition> failedPartitions() {
        return Set.copyOf(failedPartitions);
    }

    /** Stops every fetcher thread (all are told first, then each is awaited). */
    @Override
    public synchronized void close() {
        closed = true;
        List<ReplicaFetcherThread> all = new ArrayList<>(threads.values());
        threads.clear();
        all.forEach(ReplicaFetcherThread::initiateShutdown);
        all.forEach(ReplicaFetcherThread::shutdown);
    }

    /** A fetcher of one leader. */
    private record FetcherKey(int leaderId, int fetcherId) {
    }
}
