package io.cairn.broker.security;

import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.broker.config.ConfigException;
import io.cairn.broker.config.DynamicBrokerConfigs;
import io.cairn.broker.config.SslSettings;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataUpdate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The key and trust stores of the SSL listeners as this broker's dynamic configs change them (Kafka's listener
 * reconfigurables of {@code DynamicBrokerConfig}): {@code listener.name.<listener>.ssl.keystore.location} and the other
 * {@link SslSettings#RECONFIGURABLE} keys set for this broker override {@code server.properties}, and so do the
 * listener's other {@code ssl.*} keys ({@code ssl.enabled.protocols}, {@code ssl.cipher.suites},
 * {@code ssl.client.auth}, ...): the listener's new connections take them all. Kafka 4.1.1 accepts those other keys
 * too, but its listener's {@code SslFactory} copies only the store keys into its engines, so there they reach only a
 * listener added later; Cairn honours what it stores. A change that alters a listener's settings is checked before the
 * broker forwards it ({@link SslFactory#validateReconfiguration}, wrapped as
 * {@link DynamicBrokerConfigs#invalidDynamicConfiguration}); each committed change of this broker's configs is applied
 * at once, and reloads a store file modified in place even when no setting changed (Kafka's
 * {@code reloadUpdatedFilesWithoutConfigChange}, which is why the controller writes a record for an unchanged broker
 * value); at start the image's values are applied, so a swapped store survives a restart. A change that fails when
 * applied (a file replaced by a bad one) is logged and the listener keeps its engines. The inter-broker clients'
 * engines (followers, marker sender, verifier) follow the inter-broker listener's settings the same way, checked and
 * replaced with it, as Kafka reconfigures its replica fetcher's and marker sender's client channel builders with that
 * listener's prefixed values: their new connections present and trust the new stores, open ones keep theirs. An SSL or
 * SASL_SSL controller listener's stores are reloaded the same way, with the same checks, for the metadata quorum's TLS
 * (its factory hands each replacement to the quorum's stores: gRPC's key and trust managers, or the quorum front's
 * engines), as Kafka reloads a controller listener's.
 *
 * <p>Thread-safe: the factories serialise their replacement; applied on the metadata thread.
 */
public final class DynamicSslStores implements MetadataListener, BrokerReconfigurable {

    private static final Logger LOGGER = LogManager.getLogger(DynamicSslStores.class);

    private final String brokerId;
    private final Map<String, String> staticProps;
    /** The listeners' engines, then the clients' ones, each with the listener whose settings it follows. */
    private final List<Stores> factories;
    /**
     * The listeners that take only their store keys live (the SSL or SASL_SSL controller listener: the quorum's TLS,
     * gRPC's or its front's, keeps the rest as it started).
     */
    private final Set<String> storesOnly;

    /** The engines of a listener ({@code client} false) or of the clients that follow its settings. */
    private record Stores(String listenerName, SslFactory factory, boolean client) {
    }

    /**
     * @param brokerId    this broker's id
     * @param staticProps {@code server.properties} (with overrides)
     * @param listeners   the engines of each SSL listener, by listener name
     * @param clients     the engines of the clients that connect to a listener of other brokers with that listener's
     *                    settings (the inter-broker clients, by the inter-broker listener's name), applied after the
     *                    listeners' own
     */
    public DynamicSslStores(int brokerId, Map<String, String> staticProps, Map<String, SslFactory> listeners,
                            Map<String, SslFactory> clients) {
        this(brokerId, staticProps, listeners, clients, Set.of());
    }

    /**
     * As {@link #DynamicSslStores(int, Map, Map, Map)}, the listeners named in {@code storesOnly} taking only their
     * store keys ({@link SslSettings#RECONFIGURABLE}); their other {@code ssl.*} keys are refused.
     */
    public DynamicSslStores(int brokerId, Map<String, String> staticProps, Map<String, SslFactory> listeners,
                            Map<String, SslFactory> clients, Set<String> storesOnly) {
        this.storesOnly = Set.copyOf(storesOnly);
        this.brokerId = Integer.toString(brokerId);
        this.staticProps = Map.copyOf(staticProps);
        List<Stores> all = new ArrayList<>();
        listeners.forEach((name, factory) -> all.add(new Stores(name, factory, false)));
        clients.forEach((name, factory) -> all.add(new Stores(name, factory, true)));
        this.factories = List.copyOf(all);
    }

    @Override
    public Optional<String> validate(String resourceName, Map<String, String> props, MetadataImage image) {
        if (resourceName.isEmpty()) {
            return Optional.empty(); // the store keys are per broker: DynamicBrokerConfigs refuses them here
        }
        for (String listenerName : storesOnly) {
            String prefix = SslSettings.listenerPrefix(listenerName);
            Set<String> refused = new TreeSet<>();
            props.keySet().stream().filter(key -> key.startsWith(prefix)
                    && SslSettings.isSslKey(key.substring(prefix.length()))
                    && !SslSettings.RECONFIGURABLE.contains(key.substring(prefix.length()))).forEach(refused::add);
            if (!refused.isEmpty()) {
                return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration("The controller listener "
                        + listenerName + " serves the metadata quorum, whose TLS takes only its key and trust stores "
                        + "live: Set(" + String.join(", ", refused) + ")"));
            }
        }
        for (Stores stores : factories) {
            SslSettings next;
            try {
                next = settings(stores.listenerName(), props);
            } catch (ConfigException e) {
                return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(SslFactory.refusal(
                        e.getMessage())));
            }
            // Kafka checks a listener only when its settings change; a file changed in place is checked on apply
            if (!next.sameValues(stores.factory().current().settings())) {
                Optional<String> refused = stores.factory().validateReconfiguration(next);
                if (refused.isPresent()) {
                    return Optional.of(DynamicBrokerConfigs.invalidDynamicConfiguration(refused.get()));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Applies the stores {@code image} gives this broker's listeners (at start, for the values kept in metadata), then
     * to the clients of each listener that took them or kept its engines; the clients of a listener that refused
     * them keep theirs too.
     */
    public void apply(MetadataImage image) {
        Map<String, String> dynamic = image.configs(ConfigResource.broker(brokerId));
        Set<String> failed = new HashSet<>();
        for (Stores stores : factories) {
            if (stores.client() && failed.contains(stores.listenerName())) {
                continue;
            }
            try {
                if (stores.factory().reconfigure(settings(stores.listenerName(), dynamic)) && stores.client()) {
                    LOGGER.info("Inter-broker clients connect to listener {} with its new SSL stores",
                            stores.listenerName());
                }
            } catch (ConfigException | SslFactory.ReconfigurationException e) {
                failed.add(stores.listenerName());
                LOGGER.error("Failed to update the SSL stores of {} {} with the broker configs of metadata "
                        + "offset {}; it keeps its current ones: {}", stores.client() ? "the clients of listener"
                        : "listener", stores.listenerName(), image.offset(), e.getMessage());
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

    /** The listener's settings: {@code server.properties} with this broker's dynamic {@code ssl.*} keys of it. */
    private SslSettings settings(String listenerName, Map<String, String> dynamic) {
        Map<String, String> props = new HashMap<>(staticProps);
        String prefix = SslSettings.listenerPrefix(listenerName);
        boolean onlyStores = storesOnly.contains(listenerName);
        dynamic.forEach((key, value) -> {
            String base = key.startsWith(prefix) ? key.substring(prefix.length()) : "";
            if (value != null && SslSettings.isSslKey(base)
                    && (!onlyStores || SslSettings.RECONFIGURABLE.contains(base))) {
                props.put(key, value);
            }
        });
        return SslSettings.forListener(props, listenerName);
    }
}
