package io.cairn.broker.config;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The SASL settings of the SASL listeners as this broker's dynamic configs change them: the listener keys of
 * {@link SaslSettings#isListenerKey} ({@code listener.name.<l>.sasl.enabled.mechanisms},
 * {@code listener.name.<l>.<mechanism>.sasl.jaas.config}, {@code listener.name.<l>.sasl.server.max.receive.size},
 * {@code listener.name.<l>.[<mechanism>.]connections.max.reauth.ms}) and the unprefixed
 * {@code sasl.enabled.mechanisms} (for the listeners without their own) set for this broker override
 * {@code server.properties}, and the listener's next connections authenticate with the result (its mechanisms, the
 * users of its PLAIN login module); connections already accepted keep what they were accepted with, their
 * re-authentications included. Kafka 4.1.1 accepts these keys per broker too, but its SASL channel builder reconfigures
 * only the SSL stores, so there they reach only a listener added later; Cairn honours what it stores. A change is
 * resolved as the listener's settings are at start ({@link SaslSettings#forListener}) before the broker forwards it,
 * and one that cannot be used is refused with that message (wrapped as
 * {@link DynamicBrokerConfigs#invalidDynamicConfiguration}); each committed change of this broker's configs is applied
 * at once, and again from the image at start, so it survives a restart.
 *
 * <p>The inter-broker clients' new connections authenticate with {@code sasl.mechanism.inter.broker.protocol} (this
 * broker's dynamic value, else {@code server.properties}') and the broker's own user of that mechanism's login module
 * on the inter-broker listener as it is now, as Kafka's replica fetchers made after a change take them from its
 * current config; a change that leaves the mechanism out of the listener's enabled ones is refused with Kafka's
 * {@code KafkaConfig} requirement ("requirement failed: sasl.mechanism.inter.broker.protocol must be included in
 * sasl.enabled.mechanisms when SASL is used for inter-broker communication"), one Cairn's clients cannot use
 * (OAUTHBEARER, a login module without the broker's username and password) with Cairn's startup message.
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

    /** The unprefixed keys this class applies (with the listener keys of {@link SaslSettings#isListenerKey}). */
    public static final Set<String> UNPREFIXED_KEYS = Set.of(SaslSettings.ENABLED_MECHANISMS,
            SaslSettings.MECHANISM_INTER_BROKER_PROTOCOL);

    private final String brokerId;
    private final Map<String, String> staticProps;
    private final Supplier<Listeners> listeners;
    private final String interBrokerListener;
    private final Consumer<SaslSettings.ClientCredentials> interBrokerClients;

    /**
     * @param brokerId            this broker's id
     * @param staticProps         {@code server.properties} (with overrides)
     * @param listeners           the SASL listeners, asked when a change is checked or applied (the socket server is
     *                            made after this object)
     * @param interBrokerListener the inter-broker listener's name
     * @param interBrokerClients  takes the credentials the inter-broker clients' new connections authenticate with,
     *                            when the inter-broker listener is a SASL listener
     */
    public DynamicSaslSettings(int brokerId, Map<String, String> staticProps, Supplier<Listeners> listeners,
            String interBrokerListener, Consumer<SaslSettings.ClientCredentials> interBrokerClients) {
        this.brokerId = Integer.toString(brokerId);
        this.staticProps = Map.copyOf(staticProps);
        this.listeners = listeners;
        this.interBrokerListener = interBrokerListener;
        this.interBrokerClients = interBrokerClients;
    }

    /** A broker's key this class applies: a SASL listener key, or {@link #UNPREFIXED_KEYS}. */
    public static boolean isKey(String key) {
        return SaslSettings.isListenerKey(key) || UNPREFIXED_KEYS.contains(key);
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        if (resourceName.isEmpty()) {
            return Optional.empty(); // per-broker keys: DynamicBrokerConfigs refuses them for the cluster default
        }
        Map<String, SaslSettings> next = new HashMap<>();
        for (String listenerName : listeners.get().saslSettings().keySet()) {
            try {
                next.put(listenerName, settings(listenerName, props));
            } catch (ConfigException e) {
                return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(e.getMessage()));
            }
        }
        SaslSettings interBroker = next.get(interBrokerListener);
        if (interBroker != null) {
            String mechanism = interBrokerMechanism(props);
            if (!interBroker.enabledMechanisms().contains(mechanism)) {
                // KafkaConfig's require, which DynamicBrokerConfig does not wrap
                return Optional.of("requirement failed: " + SaslSettings.MECHANISM_INTER_BROKER_PROTOCOL
                        + " must be included in " + SaslSettings.ENABLED_MECHANISMS
                        + " when SASL is used for inter-broker communication");
            }
            try {
                interBrokerClient(props, interBroker);
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
        SaslSettings interBroker = served.saslSettings().get(interBrokerListener);
        if (interBroker != null) {
            try {
                interBrokerClients.accept(interBrokerClient(dynamic, interBroker));
            } catch (ConfigException e) {
                LOGGER.error("Failed to update the inter-broker clients' SASL credentials with the broker configs of "
                        + "metadata offset {}; their new connections keep the current ones: {}", image.offset(),
                        e.getMessage());
            }
        }
    }

    @Override
    public void onUpdate(MetadataUpdate update) {
        if (update.changes().changedConfigs().contains(ConfigResource.broker(brokerId))) {
            apply(update.image());
        }
    }

    /**
     * The listener's settings: {@code server.properties} with this broker's dynamic SASL keys of the listener and its
     * unprefixed {@code sasl.enabled.mechanisms} (which a listener's own key overrides, wherever each is set, as in
     * Kafka's {@code valuesWithPrefixOverride}).
     */
    private SaslSettings settings(String listenerName, Map<String, String> dynamic) {
        Map<String, String> props = new HashMap<>(staticProps);
        String prefix = SslSettings.listenerPrefix(listenerName);
        dynamic.forEach((key, value) -> {
            if (value != null && (key.startsWith(prefix) && SaslSettings.isListenerKey(key)
                    || key.equals(SaslSettings.ENABLED_MECHANISMS))) {
                props.put(key, value);
            }
        });
        return SaslSettings.forListener(props, listenerName);
    }

    /** {@code sasl.mechanism.inter.broker.protocol}: this broker's dynamic value, else the static one (GSSAPI). */
    private String interBrokerMechanism(Map<String, String> dynamic) {
        String value = dynamic.get(SaslSettings.MECHANISM_INTER_BROKER_PROTOCOL);
        if (value == null) {
            value = staticProps.getOrDefault(SaslSettings.MECHANISM_INTER_BROKER_PROTOCOL, "GSSAPI");
        }
        return value.trim();
    }

    /** The inter-broker clients' credentials on the inter-broker listener's settings {@code listener}. */
    private SaslSettings.ClientCredentials interBrokerClient(Map<String, String> dynamic, SaslSettings listener) {
        Map<String, String> props = new HashMap<>(staticProps);
        props.put(SaslSettings.MECHANISM_INTER_BROKER_PROTOCOL, interBrokerMechanism(dynamic));
        return SaslSettings.interBrokerClient(props, listener);
    }
}
