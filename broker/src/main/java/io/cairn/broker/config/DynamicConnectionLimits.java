package io.cairn.broker.config;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The connection limits as dynamic broker configs change them (Kafka's {@code SocketServer} and
 * {@code ListenerConnectionQuota} reconfigurables): {@code max.connections}, {@code max.connections.per.ip},
 * {@code max.connections.per.ip.overrides}, {@code listener.name.<l>.max.connections}, and the connection creation
 * rates {@code max.connection.creation.rate} and {@code listener.name.<l>.max.connection.creation.rate}, each this
 * broker's dynamic value, else the cluster default's, else {@code server.properties}'. A change is checked as Kafka
 * checks the new {@code KafkaConfig} (its messages as is) and a listener's new limit or rate (at least 1, wrapped as
 * {@link DynamicBrokerConfigs#invalidDynamicConfiguration}); each committed change of this broker's or the cluster
 * default's configs is applied at once, and again from the image at start, so the limits survive a restart.
 *
 * <p>Thread-safe.
 */
public final class DynamicConnectionLimits implements MetadataListener, BrokerReconfigurable {

    private static final Logger LOGGER = LogManager.getLogger(DynamicConnectionLimits.class);

    private final String brokerId;
    private final Map<String, String> staticProps;
    private final List<String> listeners;
    private final Consumer<ConnectionLimits> apply;

    /**
     * @param brokerId    this broker's id
     * @param staticProps {@code server.properties} (with overrides)
     * @param listeners   the names of the listeners the limits count
     * @param apply       what applies the limits
     */
    public DynamicConnectionLimits(int brokerId, Map<String, String> staticProps, Collection<String> listeners,
                                   Consumer<ConnectionLimits> apply) {
        this.brokerId = Integer.toString(brokerId);
        this.staticProps = Map.copyOf(staticProps);
        this.listeners = List.copyOf(listeners);
        this.apply = apply;
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        for (Map.Entry<String, String> e : props.entrySet()) {
            if (ConnectionLimits.isListenerKey(e.getKey()) && e.getValue() != null) {
                String refused = ConnectionLimits.checkListenerLimit(e.getKey(), e.getValue());
                if (refused != null) {
                    return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(refused));
                }
            }
        }
        Map<String, String> mine = resourceName.isEmpty() ? image.configs(ConfigResource.broker(brokerId)) : props;
        Map<String, String> cluster = resourceName.isEmpty() ? props : image.configs(ConfigResource.broker(""));
        try {
            ConnectionLimits.parse(effective(mine, cluster), listeners);
            return Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** Applies the limits {@code image} gives this broker (at start, for the limits kept in metadata). */
    public void apply(MetadataImage image) {
        Map<String, String> props = effective(image.configs(ConfigResource.broker(brokerId)),
                image.configs(ConfigResource.broker("")));
        try {
            apply.accept(ConnectionLimits.parse(props, listeners));
        } catch (IllegalArgumentException e) {
            LOGGER.error("Failed to update the connection limits with the broker configs of metadata offset {}: {}",
                    image.offset(), e.getMessage());
        }
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        if (BrokerReconfigurable.changesConfigsOf(update, brokerId)) {
            apply(update.image());
        }
    }

    /** Kafka's order: {@code server.properties}, then the cluster default's dynamic values, then this broker's. */
    private Map<String, String> effective(Map<String, String> mine, Map<String, String> cluster) {
        Map<String, String> props = new HashMap<>(staticProps);
        cluster.forEach((k, v) -> {
            if (ConnectionLimits.isKey(k) && v != null) {
                props.put(k, v);
            }
        });
        mine.forEach((k, v) -> {
            if (ConnectionLimits.isKey(k) && v != null) {
                props.put(k, v);
            }
        });
        return props;
    }
}
