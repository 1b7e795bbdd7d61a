package io.cairn.broker.security;

import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.broker.config.ConfigException;
import io.cairn.broker.config.DynamicBrokerConfigs;
import io.cairn.broker.config.SslSettings;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The key and trust stores of the SSL listeners as this broker's dynamic configs change them (Kafka's listener
 * reconfigurables of {@code DynamicBrokerConfig}): {@code listener.name.<listener>.ssl.keystore.location} and the other
 * {@link SslSettings#RECONFIGURABLE} keys set for this broker override {@code server.properties}; the other
 * {@code ssl.*} keys stay as the broker started. A change that alters a listener's settings is checked before the
 * broker forwards it ({@link SslFactory#validateReconfiguration}, wrapped as
 * {@link DynamicBrokerConfigs#invalidDynamicConfiguration}); each committed change of this broker's configs is applied
 * at once, and reloads a store file modified in place even when no setting changed (Kafka's
 * {@code reloadUpdatedFilesWithoutConfigChange}, which is why the controller writes a record for an unchanged broker
 * value); at start the image's values are applied, so a swapped store survives a restart. A change that fails when
 * applied (a file replaced by a bad one) is logged and the listener keeps its engines.
 *
 * <p>Thread-safe: the factories serialise their replacement; applied on the metadata thread.
 */
public final class DynamicSslStores implements MetadataListener, BrokerReconfigurable {

    private static final Logger LOGGER = LogManager.getLogger(DynamicSslStores.class);

    private final String brokerId;
    private final Map<String, String> staticProps;
    private final Map<String, SslFactory> listeners;

    /**
     * @param brokerId    this broker's id
     * @param staticProps {@code server.properties} (with overrides)
     * @param listeners   the engines of each SSL listener, by listener name
     */
    public DynamicSslStores(int brokerId, Map<String, String> staticProps, Map<String, SslFactory> listeners) {
        this.brokerId = Integer.toString(brokerId);
        this.staticProps = Map.copyOf(staticProps);
        this.listeners = new LinkedHashMap<>(listeners);
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        if (resourceName.isEmpty()) {
            return Optional.empty(); // the store keys are per broker: DynamicBrokerConfigs refuses them here
        }
        for (Map.Entry<String, SslFactory> listener : listeners.entrySet()) {
            SslSettings next;
            try {
                next = settings(listener.getKey(), props);
            } catch (ConfigException e) {
                return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(SslFactory.refusal(
                        e.getMessage())));
            }
            // Kafka checks a listener only when its settings change; a file changed in place is checked on apply
            if (!next.sameValues(listener.getValue().current().settings())) {
                Optional<String> refused = listener.getValue().validateReconfiguration(next);
                if (refused.isPresent()) {
                    return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(refused.get()));
                }
            }
        }
        return Optional.empty();
    }

    /** Applies the stores {@code image} gives this broker's listeners (at start, for the values kept in metadata). */
    public void apply(MetadataImage image) {
        Map<String, String> dynamic = image.configs(ConfigResource.broker(brokerId));
        for (Map.Entry<String, SslFactory> listener : listeners.entrySet()) {
            try {
                listener.getValue().reconfigure(settings(listener.getKey(), dynamic));
            } catch (ConfigException | SslFactory.ReconfigurationException e) {
                LOGGER.error("Failed to update the SSL stores of listener {} with the broker configs of metadata "
                        + "offset {}; it keeps its current ones: {}", listener.getKey(), image.offset(),
                        e.getMessage());
            }
        }
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        // Kafka reloads files only for the broker's own resource, never for the cluster default
        if (update.changes().changedConfigs().contains(ConfigResource.broker(brokerId))) {
            apply(update.image());
        }
    }

    /** The listener's settings: {@code server.properties} with this broker's dynamic store keys of the listener. */
    private SslSettings settings(String listenerName, Map<String, String> dynamic) {
        Map<String, String> props = new HashMap<>(staticProps);
        String prefix = SslSettings.listenerPrefix(listenerName);
        for (String key : SslSettings.RECONFIGURABLE) {
            String value = dynamic.get(prefix + key);
            if (value != null) {
                props.put(prefix + key, value);
            }
        }
        return SslSettings.forListener(props, listenerName);
    }
}
