package io.cairn.broker.config;

import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The listeners a dynamic broker config adds and removes live (Kafka's {@code DynamicListenerConfig}):
 * {@code listeners} and {@code listener.security.protocol.map}, per broker only (the cluster default is refused by
 * {@link DynamicBrokerConfigs}). A change is read with the rest of {@code server.properties} by {@link BrokerConfig},
 * so a listener's own settings ({@code listener.name.<l>.ssl.*}, its SASL mechanisms) come from the file and this
 * broker's dynamic listener keys (as Kafka adds a listener with the new configuration's), then checked
 * as Kafka checks it: the advertised listeners (which do not change at run time, as {@code advertised.listeners}
 * is a static key) must stay among the listeners, and an existing listener keeps its security protocol. Listeners
 * whose name is new are bound, listeners no longer named are closed with their connections, as Kafka's
 * {@code addListeners}/{@code removeListeners}; a listener whose name stays keeps its address, as in Kafka. The
 * controller listeners are the metadata quorum's and change only at start. Changes are applied on this object's own
 * thread, and again from the image at start, so they survive a restart.
 *
 * <p>Thread-safe.
 */
public final class DynamicListeners extends AppliedOnOwnThread implements BrokerReconfigurable {

    /** The keys this class applies live. */
    public static final Set<String> KEYS = Set.of(BrokerConfig.LISTENERS, ListenerProtocols.KEY);

    private static final Logger LOGGER = LogManager.getLogger(DynamicListeners.class);

    /** What binds and closes the Kafka listeners. */
    public interface Binder {

        /** Binds {@code endpoint}, whose settings {@code config} holds. */
        void addListener(BrokerConfig config, Endpoint endpoint);

        /** Closes the listener {@code listenerName} and its connections. */
        void removeListener(String listenerName);
    }

    private final String brokerId;
    private final BrokerConfig staticConfig;
    /** The binder, asked when a change is applied (the socket server is made after this object). */
    private final Supplier<Binder> binder;
    /** The Kafka listeners bound now, by name; written only by the applier thread (or apply at start). */
    private final Map<String, Endpoint> bound = new LinkedHashMap<>();

    public DynamicListeners(BrokerConfig staticConfig, Supplier<Binder> binder) {
        super("dynamic-listeners", Integer.toString(staticConfig.nodeId()));
        this.brokerId = Integer.toString(staticConfig.nodeId());
        this.staticConfig = staticConfig;
        this.binder = binder;
        staticConfig.kafkaListeners().forEach(endpoint -> bound.put(endpoint.listenerName(), endpoint));
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        if (!resourceName.equals(brokerId) || KEYS.stream().noneMatch(props::containsKey)) {
            return Optional.empty();
        }
        try {
            return check(with(props));
        } catch (ConfigException e) {
            return Optional.of(e.getMessage());
        }
    }

    /** Binds and closes listeners to match what {@code image} gives this broker (at start, for the kept ones). */
    @Override
    public synchronized void apply(MetadataImage image) {
        BrokerConfig next;
        try {
            next = with(image.configs(ConfigResource.broker(brokerId)));
            Optional<String> refused = check(next);
            if (refused.isPresent()) {
                throw new ConfigException(refused.get());
            }
        } catch (ConfigException e) {
            LOGGER.error("Failed to update the listeners with the broker configs of metadata offset {}: {}",
                    image.offset(), e.getMessage());
            return;
        }
        Map<String, Endpoint> wanted = new LinkedHashMap<>();
        next.kafkaListeners().forEach(endpoint -> wanted.put(endpoint.listenerName(), endpoint));
        for (String name : new ArrayList<>(bound.keySet())) {
            if (!wanted.containsKey(name)) {
                binder.get().removeListener(name);
                bound.remove(name);
                LOGGER.info("Removed listener {}", name);
            }
        }
        for (Endpoint endpoint : wanted.values()) {
            if (!bound.containsKey(endpoint.listenerName())) {
                try {
                    binder.get().addListener(next, endpoint);
                    bound.put(endpoint.listenerName(), endpoint);
                    LOGGER.info("Added listener {}", endpoint);
                } catch (RuntimeException e) {
                    LOGGER.error("Failed to add listener {}", endpoint, e);
                }
            }
        }
    }

    /**
     * {@code server.properties} with this broker's dynamic {@code listeners}, protocol map, listener keys
     * ({@code listener.name.<l>.ssl.*}, its SASL keys, ...) and unprefixed SASL keys of
     * {@link DynamicSaslSettings#UNPREFIXED_KEYS} (a listener added live takes them, as Kafka's), parsed.
     */
    private BrokerConfig with(Map<String, String> dynamic) {
        Map<String, String> props = new HashMap<>(staticConfig.originals());
        dynamic.forEach((key, value) -> {
            if (value != null && (key.startsWith("listener.name.")
                    || DynamicSaslSettings.UNPREFIXED_KEYS.contains(key))) {
                props.put(key, value);
            }
        });
        for (String key : KEYS) {
            if (dynamic.get(key) != null) {
                props.put(key, dynamic.get(key));
            }
        }
        return BrokerConfig.fromMap(props);
    }

    /** Kafka's {@code DynamicListenerConfig.validateReconfiguration}, and the controller listeners kept. */
    private Optional<String> check(BrokerConfig next) {
        List<String> names = next.listeners().stream().map(Endpoint::listenerName).toList();
        List<String> advertised = staticConfig.advertisedListeners().stream().map(Endpoint::listenerName).toList();
        if (!names.containsAll(advertised)) {
            return refused("Advertised listeners '" + listenerNames(advertised) + "' must be a subset of listeners '"
                    + listenerNames(names) + "'");
        }
        for (Endpoint now : staticConfig.listeners()) {
            for (Endpoint then : next.listeners()) {
                if (now.listenerName().equals(then.listenerName())
                        && now.securityProtocol() != then.securityProtocol()) {
                    return refused("Security protocol cannot be updated for existing listener ListenerName("
                            + now.listenerName() + ")");
                }
            }
        }
        List<Endpoint> controllers = controllerListeners(staticConfig);
        if (!controllers.equals(controllerListeners(next))) {
            return refused("The controller listeners " + controllers + " are where the metadata quorum is reached; "
                    + "Cairn changes them only at start");
        }
        return Optional.empty();
    }

    private static List<Endpoint> controllerListeners(BrokerConfig config) {
        return config.listeners().stream().filter(e -> config.isControllerListener(e.listenerName())).toList();
    }

    private static Optional<String> refused(String reason) {
        return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(reason));
    }

    /** A Scala {@code Set} of Kafka's {@code ListenerName}s, as Kafka's message prints it. */
    private static String listenerNames(List<String> names) {
        List<String> shown = new ArrayList<>();
        names.forEach(name -> shown.add("ListenerName(" + name + ")"));
        return "Set(" + String.join(", ", shown) + ")";
    }
}
