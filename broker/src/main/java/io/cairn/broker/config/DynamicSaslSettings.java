package io.cairn.broker.config;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The SASL settings of the SASL listeners as this broker's dynamic configs change them: the listener keys of
 * {@link SaslSettings#isListenerKey} ({@code listener.name.<l>.sasl.enabled.mechanisms},
 * {@code listener.name.<l>.<mechanism>.sasl.jaas.config}, {@code listener.name.<l>.sasl.server.max.receive.size},
 * {@code listener.name.<l>.[<mechanism>.]connections.max.reauth.ms}) set for this broker override
 * {@code server.properties}, and the listener's next connections authenticate with the result (its mechanisms, the
 * users of its PLAIN login module); connections already accepted keep what they were accepted with, their
 * re-authentications included. Kafka 4.1.1 accepts these keys per broker too, but its SASL channel builder reconfigures
 * only the SSL stores, so there they reach only a listener added later; Cairn honours what it stores. A change is
 * resolved as the listener's settings are at start ({@link SaslSettings#forListener}) before the broker forwards it,
 * and one that cannot be used is refused with that message (wrapped as
 * {@link DynamicBrokerConfigs#invalidDynamicConfiguration}); each committed change of this broker's configs is applied
 * at once, and again from the image at start, so it survives a restart. The inter-broker clients keep the credentials
 * they started with, as Kafka's.
 *
 * <p>Thread-safe.
 */
public final class DynamicSaslSettings implements MetadataListener, BrokerReconfigurable {

    private static final Logger LOGGER = LogManager.getLogger(DynamicSaslSettings.class);

    /** What serves the SASL listeners (the socket server). */
    public interface Listeners {

        /** The SASL settings of each SASL listener now, by listener name. */
        Map<String, SaslSettings> saslSettings();

        /** Makes {@code next} the settings of the next connections of {@code listenerName}. */
        void replaceSasl(String listenerName, SaslSettings next);
    }

    private final String brokerId;
    private final Map<String, String> staticProps;
    private final Supplier<Listeners> listeners;

    /**
     * @param brokerId    this broker's id
     * @param staticProps {@code server.properties} (with overrides)
     * @param listeners   the SASL listeners, asked when a change is checked or applied (the socket server is made
     *                    after this object)
     */
    public DynamicSaslSettings(int brokerId, Map<String, String> staticProps, Supplier<Listeners> listeners) {
        this.brokerId = Integer.toString(brokerId);
        this.staticProps = Map.copyOf(staticProps);
        this.listeners = listeners;
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        if (resourceName.isEmpty()) {
            return Optional.empty(); // per-broker keys: DynamicBrokerConfigs refuses them for the cluster default
        }
        for (String listenerName : listeners.get().saslSettings().keySet()) {
            try {
                settings(listenerName, props);
            } catch (ConfigException e) {
                return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(e.getMessage()));
            }
        }
        return Optional.empty();
    }

    /** Gives each SASL listener the settings {@code image} gives it (at start, for those kept in metadata). */
    public synchronized void apply(MetadataImage image) {
        Map<String, String> dynamic = image.configs(ConfigResource.broker(brokerId));
        Listeners served = listeners.get();
        for (Map.Entry<String, SaslSettings> now : served.saslSettings().entrySet()) {
            try {
                SaslSettings next = settings(now.getKey(), dynamic);
                if (!next.equals(now.getValue())) {
                    served.replaceSasl(now.getKey(), next);
                }
            } catch (ConfigException | IllegalStateException e) {
                LOGGER.error("Failed to update the SASL settings of listener {} with the broker configs of metadata "
                        + "offset {}; it keeps its current ones: {}", now.getKey(), image.offset(), e.getMessage());
            }
        }
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        if (update.changes().changedConfigs().contains(ConfigResource.broker(brokerId))) {
            apply(update.image());
        }
    }

    /** The listener's settings: {@code server.properties} with this broker's dynamic SASL keys of the listener. */
    private SaslSettings settings(String listenerName, Map<String, String> dynamic) {
        Map<String, String> props = new HashMap<>(staticProps);
        String prefix = SslSettings.listenerPrefix(listenerName);
        dynamic.forEach((key, value) -> {
            if (value != null && key.startsWith(prefix) && SaslSettings.isListenerKey(key)) {
                props.put(key, value);
            }
        });
        return SaslSettings.forListener(props, listenerName);
    }
}
