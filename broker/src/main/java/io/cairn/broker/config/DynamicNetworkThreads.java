package io.cairn.broker.config;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The network threads of each Kafka listener as dynamic broker configs size them (Kafka's {@code DataPlaneAcceptor},
 * a listener reconfigurable of {@code num.network.threads}): each listener has a set of its own, of
 * {@code listener.name.<l>.num.network.threads} where set, else {@code num.network.threads}. As Kafka resolves a
 * listener's values, the listener's key wins at any level (this broker's, the cluster default's, then
 * {@code server.properties}') over the unprefixed key at any level, so a listener with its own size keeps it when
 * {@code num.network.threads} changes. Both keys may be set per broker and cluster-wide (Kafka's cluster-level
 * listener keys). A change is checked per listener against the listener's thread count now, as Kafka's acceptor
 * checks it (at least 1, at least half and at most double; Kafka's "Dynamic thread count update validation failed
 * for num.network.threads=..." wrapped as {@link DynamicBrokerConfigs#invalidDynamicConfiguration}), before the broker
 * forwards it; each committed change of this broker's or the cluster default's configs is applied on this object's
 * own thread, and again from the image at start, so the sizes survive a restart. A listener added live starts with
 * the size {@code server.properties} gives it and takes the dynamic one at the next change.
 *
 * <p>Thread-safe.
 */
public final class DynamicNetworkThreads extends AppliedOnOwnThread implements BrokerReconfigurable {

    /** The key, unprefixed or after a listener's prefix. */
    public static final String KEY = BrokerConfig.NUM_NETWORK_THREADS;

    private static final Logger LOGGER = LogManager.getLogger(DynamicNetworkThreads.class);
    /** {@code listener.name.<l>.num.network.threads} (a listener name has no dot). */
    private static final Pattern LISTENER_KEY = Pattern.compile("listener\\.name\\.[^.]+\\." + Pattern.quote(KEY));

    /** What holds the listeners' network threads (the socket server). */
    public interface Listeners {

        /** The network thread count of each Kafka listener now, by listener name. */
        Map<String, Integer> networkThreads();

        /** Makes the network threads of {@code listenerName} {@code threads}. */
        void resizeNetworkThreads(String listenerName, int threads);
    }

    private final String brokerId;
    private final Map<String, String> staticProps;
    private final int staticThreads;
    private final Supplier<Listeners> listeners;

    /**
     * @param config    {@code server.properties} (with overrides)
     * @param listeners the listeners' network threads, asked when a change is checked or applied (the socket server
     *                  is made after this object)
     */
    public DynamicNetworkThreads(BrokerConfig config, Supplier<Listeners> listeners) {
        super("dynamic-network-threads", Integer.toString(config.nodeId()));
        this.brokerId = Integer.toString(config.nodeId());
        this.staticProps = config.originals();
        this.staticThreads = config.numNetworkThreads();
        this.listeners = listeners;
    }

    /** Whether {@code key} is {@code num.network.threads} of one listener ({@code listener.name.<l>.}). */
    public static boolean isListenerKey(String key) {
        return LISTENER_KEY.matcher(key).matches();
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        Map<String, String> mine = resourceName.isEmpty() ? image.configs(ConfigResource.broker(brokerId)) : props;
        Map<String, String> cluster = resourceName.isEmpty() ? props : image.configs(ConfigResource.broker(""));
        for (Map.Entry<String, Integer> now : listeners.get().networkThreads().entrySet()) {
            Optional<String> refused = check(effective(now.getKey(), mine, cluster), now.getValue());
            if (refused.isPresent()) {
                return refused.map(DynamicBrokerConfigs::invalidDynamicConfiguration);
            }
        }
        return Optional.empty();
    }

    /** Resizes each listener's network threads to the size {@code image} gives it (at start, for those kept). */
    @Override
    public synchronized void apply(MetadataImage image) {
        Map<String, String> mine = image.configs(ConfigResource.broker(brokerId));
        Map<String, String> cluster = image.configs(ConfigResource.broker(""));
        for (Map.Entry<String, Integer> now : listeners.get().networkThreads().entrySet()) {
            int size = effective(now.getKey(), mine, cluster);
            if (size == now.getValue()) {
                continue;
            }
            Optional<String> refused = check(size, now.getValue());
            if (refused.isPresent()) {
                LOGGER.error("Failed to update the network threads of listener {} with the broker configs of "
                        + "metadata offset {}: {}", now.getKey(), image.offset(), refused.get());
                continue;
            }
            try {
                listeners.get().resizeNetworkThreads(now.getKey(), size);
                LOGGER.info("Resized the network threads of listener {} from {} to {}", now.getKey(),
                        now.getValue(), size);
            } catch (RuntimeException e) {
                LOGGER.error("Failed to resize the network threads of listener {} to {}", now.getKey(), size, e);
            }
        }
    }

    /**
     * The size the configs give {@code listenerName}: its own key (this broker's, the cluster default's, the
     * static one), else {@code num.network.threads} (the same order), as Kafka's {@code valuesWithPrefixOverride}.
     */
    private int effective(String listenerName, Map<String, String> mine, Map<String, String> cluster) {
        String listenerKey = SslSettings.listenerPrefix(listenerName) + KEY;
        for (String key : List.of(listenerKey, KEY)) {
            for (Map<String, String> level : List.of(mine, cluster, staticProps)) {
                String value = level.get(key);
                if (value != null && !value.isBlank()) {
                    try {
                        return Integer.parseInt(value.trim());
                    } catch (NumberFormatException e) {
                        LOGGER.debug("Ignoring {}={}: not a number", key, value);
                    }
                }
            }
        }
        return staticThreads;
    }

    /** Kafka's {@code DataPlaneAcceptor.validateReconfiguration} of a listener's new size against its size now. */
    private static Optional<String> check(int size, int now) {
        return DynamicThreadPools.checkResize(KEY, size, now);
    }
}
