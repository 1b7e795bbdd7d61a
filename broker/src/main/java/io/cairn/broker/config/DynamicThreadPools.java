package io.cairn.broker.config;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntConsumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The thread pools a dynamic broker config resizes live (Kafka's {@code DynamicThreadPool}): {@code num.io.threads}
 * (the request handlers), {@code num.replica.fetchers} (the follower fetchers per leader) and
 * {@code background.threads} (the
 * {@code kafka-scheduler-N} threads of retention, flushes, delayed deletes, high-watermark checkpoints and ISR
 * expiration) and {@code num.recovery.threads.per.data.dir} (the threads per log directory that load the logs and
 * close them, made for that work: a new count applies to the next shutdown and start, as in Kafka). A pool's size is
 * this
 * broker's dynamic value, else the cluster default's, else {@code server.properties}' (Kafka's order). A change is
 * checked as Kafka's {@code validateReconfiguration} checks it, against the size now: at least 1, at least half and at
 * most double. The broker checks a request before it forwards it ({@link #validate}); each committed change of this
 * broker's or the cluster default's configs is applied on this object's own thread, so the metadata applier never
 * waits for fetcher threads to stop; one that fails the check there (the other broker's answer was wrong for this one)
 * is logged and not applied, as Kafka does. Sizes are read from the image again at start, so they survive a restart.
 *
 * <p>Thread-safe.
 */
public final class DynamicThreadPools extends AppliedOnOwnThread implements BrokerReconfigurable {

    public static final String NUM_IO_THREADS = BrokerConfig.NUM_IO_THREADS;
    public static final String NUM_REPLICA_FETCHERS = ReplicaFetchSettings.NUM_REPLICA_FETCHERS;
    public static final String BACKGROUND_THREADS = BrokerConfig.BACKGROUND_THREADS;
    public static final String NUM_RECOVERY_THREADS_PER_DATA_DIR = BrokerConfig.NUM_RECOVERY_THREADS_PER_DATA_DIR;
    /** The keys this class applies live (a listener's {@code num.network.threads}: {@link DynamicNetworkThreads}). */
    public static final Set<String> KEYS = Set.of(NUM_IO_THREADS, NUM_REPLICA_FETCHERS, BACKGROUND_THREADS,
            NUM_RECOVERY_THREADS_PER_DATA_DIR);

    private static final Logger LOGGER = LogManager.getLogger(DynamicThreadPools.class);

    private final String brokerId;
    private final Map<String, Integer> staticSizes;
    private final Map<String, IntConsumer> resizers;
    private final Map<String, Integer> current = new ConcurrentHashMap<>();

    /**
     * @param brokerId    this broker's id
     * @param staticSizes each key's size from {@code server.properties} (or Kafka's default), the pools' sizes now;
     *                    the keys of {@link #KEYS} this broker resizes
     * @param resizers    what resizes each key's pool
     */
    public DynamicThreadPools(int brokerId, Map<String, Integer> staticSizes, Map<String, IntConsumer> resizers) {
        super("dynamic-thread-pools", Integer.toString(brokerId));
        this.brokerId = Integer.toString(brokerId);
        this.staticSizes = Map.copyOf(staticSizes);
        this.resizers = Map.copyOf(resizers);
        this.current.putAll(staticSizes);
    }

    /** The size of {@code key}'s pool now. */
    public int currentSize(String key) {
        return current.get(key);
    }

    /**
     * Kafka's check of a broker resource's change: the sizes the dynamic configs {@code props} of the resource named
     * {@code resourceName} ({@code ""} for the cluster default) would give this broker, against the sizes now.
     *
     * @return the refusal's message, Kafka's (wrapped as {@link DynamicBrokerConfigs#invalidDynamicConfiguration}), or
     *     empty
     */
    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        Map<String, String> mine = resourceName.isEmpty() ? image.configs(ConfigResource.broker(brokerId)) : props;
        Map<String, String> cluster = resourceName.isEmpty() ? props : image.configs(ConfigResource.broker(""));
        for (String key : staticSizes.keySet()) {
            Optional<String> refused = check(key, effective(key, mine, cluster));
            if (refused.isPresent()) {
                return refused.map(DynamicBrokerConfigs::invalidDynamicConfiguration);
            }
        }
        return Optional.empty();
    }

    /** Resizes the pools to the sizes {@code image} gives this broker (at start, for the sizes kept in metadata). */
    @Override
    public void apply(MetadataImage image) {
        Map<String, String> mine = image.configs(ConfigResource.broker(brokerId));
        Map<String, String> cluster = image.configs(ConfigResource.broker(""));
        Map<String, Integer> wanted = new LinkedHashMap<>();
        for (String key : staticSizes.keySet()) {
            wanted.put(key, effective(key, mine, cluster));
        }
        synchronized (this) {
            wanted.forEach((key, size) -> {
                if (size == current.get(key)) {
                    return;
                }
                Optional<String> refused = check(key, size);
                if (refused.isPresent()) {
                    LOGGER.error("Failed to update broker configuration with configs {}={} (metadata offset {}): {}",
                            key, size, image.offset(), refused.get());
                    return;
                }
                try {
                    resizers.get(key).accept(size);
                    LOGGER.info("Dynamic broker config {} changed from {} to {}", key, current.get(key), size);
                    current.put(key, size);
                } catch (RuntimeException e) {
                    LOGGER.error("Failed to resize the thread pool of {} to {}", key, size, e);
                }
            });
        }
    }

    /**
     * The size the dynamic configs of {@code image} give {@code key} on broker {@code brokerId}: its value, else the
     * cluster default's, else {@code staticSize} (what a pool made before this object, at start, is sized with).
     */
    public static int effectiveSize(MetadataImage image, int brokerId, String key, int staticSize) {
        return sizeOf(key, image.configs(ConfigResource.broker(Integer.toString(brokerId))),
                image.configs(ConfigResource.broker("")), staticSize);
    }

    /** The size the dynamic configs give {@code key}: this broker's value, else the cluster default's, else static. */
    private int effective(String key, Map<String, String> mine, Map<String, String> cluster) {
        return sizeOf(key, mine, cluster, staticSizes.get(key));
    }

    private static int sizeOf(String key, Map<String, String> mine, Map<String, String> cluster, int staticSize) {
        String value = mine.get(key);
        if (value == null) {
            value = cluster.get(key);
        }
        if (value == null) {
            return staticSize;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            return staticSize;
        }
    }

    /** Kafka's {@code DynamicThreadPool.validateReconfiguration} of one key's new size. */
    private Optional<String> check(String key, int size) {
        return checkResize(key, size, current.get(key));
    }

    /**
     * Kafka's check of a thread count {@code key} changed from {@code now} to {@code size} (its
     * {@code DynamicThreadPool} and {@code DataPlaneAcceptor} check alike): at least 1, at least half and at most
     * double the current count; the refusal's text, or empty.
     */
    static Optional<String> checkResize(String key, int size, int now) {
        if (size == now) {
            return Optional.empty();
        }
        String failed = "Dynamic thread count update validation failed for " + key + "=" + size;
        if (size <= 0) {
            return Optional.of(failed + ", value should be at least 1");
        }
        if (size < now / 2) {
            return Optional.of(failed + ", value should be at least half the current value " + now);
        }
        if (size > now * 2) {
            return Optional.of(failed + ", value should not be greater than double the current value " + now);
        }
        return Optional.empty();
    }
}
