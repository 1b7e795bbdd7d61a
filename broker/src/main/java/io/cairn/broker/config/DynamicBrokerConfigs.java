package io.cairn.broker.config;

import io.cairn.isr.LogConfigs;
import io.cairn.isr.ReplicationQuota;
import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The broker configs that may change at run time (KIP-226 dynamic configs, per broker or cluster-wide): the keys
 * Cairn applies live (the replication throttle rates, the thread pools of {@link DynamicThreadPools}, the connection
 * limits of {@link DynamicConnectionLimits}, the listeners of {@link DynamicListeners}, each listener's network
 * threads of {@link DynamicNetworkThreads} ({@code listener.name.<listener>.num.network.threads}), the cleaner
 * threads and buffers of {@link DynamicLogCleaner}, {@code transaction.partition.verification.enable} (read at each
 * transactional write) and the
 * topic defaults of {@link LogConfigs#isLiveDefault},
 * {@code log.retention.ms}, {@code log.segment.bytes}, {@code message.max.bytes}, {@code log.preallocate},
 * {@code log.cleaner.max.compaction.lag.ms}, {@code unclean.leader.election.enable} (which the controller reads),
 * {@code producer.id.expiration.ms}, ..., and a listener's key and trust
 * stores, {@code listener.name.<listener>.ssl.keystore.location} and the other {@link SslSettings#RECONFIGURABLE}
 * keys, with its other {@code ssl.*} keys ({@link #isListenerSslKey}, per broker; the controller listener's stores
 * included), and its SASL keys of {@link SaslSettings#isListenerKey}, with the unprefixed
 * {@code sasl.enabled.mechanisms} and {@code sasl.mechanism.inter.broker.protocol} of {@link DynamicSaslSettings},
 * per broker as Kafka allows them), and the rest of the keys Kafka's {@code DynamicBrokerConfig} lets change (the
 * dynamic rows of {@link ConfigTable}), which Cairn refuses rather than store without honouring them: tiered storage,
 * plugin classes, the Kerberos and login-refresh {@code sasl.*} keys (Cairn has no GSSAPI and its brokers hold no
 * expiring login credential) and a {@code sasl.jaas.config} without a mechanism prefix (which a broker listener
 * ignores, in Kafka too). Validates a broker resource's resulting dynamic configs as Kafka's
 * {@code DynamicBrokerConfig.validateConfigs} does, in its order: a key that is not dynamic gets INVALID_REQUEST with
 * Kafka's "Cannot update these configs dynamically: Set(...)", a store key without a listener prefix INVALID_REQUEST
 * with Kafka's text, a bad value INVALID_REQUEST with Kafka's {@code ConfigException} text (the table's type and
 * rule), a per-broker key set for the cluster default INVALID_REQUEST with Kafka's text; Cairn's own refusals come
 * after Kafka's. Stateless, thread-safe.
 */
public final class DynamicBrokerConfigs {

    /** KIP-73: the bytes per second a leader sends to throttled followers (Long.MAX_VALUE when unset). */
    public static final String LEADER_REPLICATION_THROTTLED_RATE = ReplicationQuota.LEADER_RATE;
    /** KIP-73: the bytes per second a follower fetches for throttled partitions (Long.MAX_VALUE when unset). */
    public static final String FOLLOWER_REPLICATION_THROTTLED_RATE = ReplicationQuota.FOLLOWER_RATE;
    /** The bytes per second replica moves between log directories copy (Long.MAX_VALUE when unset). */
    public static final String ALTER_LOG_DIRS_RATE = ReplicationQuota.ALTER_LOG_DIRS_RATE;

    /** The keys besides the topic defaults that Cairn applies without a restart; the table gives their rule. */
    private static final Set<String> LIVE = Set.of(LEADER_REPLICATION_THROTTLED_RATE,
            FOLLOWER_REPLICATION_THROTTLED_RATE, ALTER_LOG_DIRS_RATE, DynamicThreadPools.NUM_IO_THREADS,
            DynamicNetworkThreads.KEY, DynamicThreadPools.NUM_REPLICA_FETCHERS,
            DynamicThreadPools.BACKGROUND_THREADS, CleanerSettings.THREADS,
            CleanerSettings.BACKOFF_MS, BrokerConfig.LISTENERS, ListenerProtocols.KEY,
            CleanerSettings.IO_MAX_BYTES_PER_SECOND, CleanerSettings.DEDUPE_BUFFER_SIZE, CleanerSettings.LOAD_FACTOR,
            CleanerSettings.IO_BUFFER_SIZE, DynamicThreadPools.NUM_RECOVERY_THREADS_PER_DATA_DIR,
            BrokerConfig.TRANSACTION_PARTITION_VERIFICATION_ENABLE);

    /** Prefixes of Kafka's dynamic per-listener keys ({@code listener.name.<listener>.ssl.keystore.location}). */
    private static final List<String> KAFKA_DYNAMIC_PREFIXES = List.of("listener.name.");

    /** Kafka's {@code ListenerConfigRegex}: a per-listener key and the key it overrides. */
    private static final Pattern LISTENER_KEY = Pattern.compile("listener\\.name\\.[^.]*\\.(.*)");

    /**
     * The listener keys Kafka lets change only per broker (its {@code DynamicListenerConfig.ReconfigurableConfigs}
     * and the reconfigurable {@code ssl.*} keys, less the cluster-wide connection keys): refused for the cluster
     * default, with or without a listener prefix.
     */
    private static final Set<String> PER_BROKER = Set.of("advertised.listeners", "listeners",
            "listener.security.protocol.map", "principal.builder.class", SslSettings.PROTOCOL, SslSettings.PROVIDER,
            SslSettings.CIPHER_SUITES, SslSettings.ENABLED_PROTOCOLS, SslSettings.KEYSTORE_TYPE,
            SslSettings.KEYSTORE_LOCATION, SslSettings.KEYSTORE_PASSWORD, SslSettings.KEY_PASSWORD,
            SslSettings.TRUSTSTORE_TYPE, SslSettings.TRUSTSTORE_LOCATION, SslSettings.TRUSTSTORE_PASSWORD,
            SslSettings.KEYMANAGER_ALGORITHM, SslSettings.TRUSTMANAGER_ALGORITHM,
            SslSettings.ENDPOINT_IDENTIFICATION_ALGORITHM, SslSettings.SECURE_RANDOM_IMPLEMENTATION,
            SslSettings.CLIENT_AUTH, SslSettings.ENGINE_FACTORY_CLASS, SslSettings.KEYSTORE_CERTIFICATE_CHAIN,
            SslSettings.KEYSTORE_KEY, SslSettings.TRUSTSTORE_CERTIFICATES, "sasl.mechanism.inter.broker.protocol",
            "sasl.jaas.config", "sasl.enabled.mechanisms", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
            "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
            "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.principal.to.local.rules",
            "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
            "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds");

    /** The listener keys Kafka lets change cluster-wide ({@code ClusterLevelListenerConfigs}). */
    private static final Set<String> CLUSTER_LEVEL_LISTENER_KEYS = Set.of(ConnectionLimits.MAX_CONNECTIONS,
            "max.connection.creation.rate", "num.network.threads");

    /**
     * The dynamic keys that name plugin classes implementing kafka-clients interfaces ({@code MetricsReporter},
     * {@code KafkaPrincipalBuilder}), which Kafka loads and Cairn cannot: kafka-clients is never on its classpath.
     */
    private static final Set<String> PLUGIN_CLASS_KEYS = Set.of("metric.reporters", "principal.builder.class");
    private static final String PLUGIN_CLASSES_REFUSED = "Cairn cannot load these plugin classes: they implement "
            + "kafka-clients interfaces (MetricsReporter, KafkaPrincipalBuilder) and kafka-clients is not on Cairn's "
            + "classpath; Cairn serves its metrics on its Prometheus endpoint (metrics.port) and builds principals as "
            + "Kafka's DefaultKafkaPrincipalBuilder does (ssl.principal.mapping.rules): ";

    /**
     * The SASL keys Kafka accepts per broker (unprefixed or with a listener prefix) that act only on a login Cairn
     * never makes: Kerberos (GSSAPI) and the refresh of an expiring login credential (a broker's own OAUTHBEARER token
     * or Kerberos ticket; Cairn's brokers authenticate to each other with PLAIN or SCRAM, which do not expire).
     */
    private static final Set<String> KERBEROS_AND_LOGIN_REFRESH = Set.of("sasl.kerberos.service.name",
            "sasl.kerberos.kinit.cmd", "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
            "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.principal.to.local.rules",
            "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
            "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds");
    private static final String KERBEROS_AND_LOGIN_REFRESH_REFUSED = "Cairn has no GSSAPI (Kerberos) and its brokers "
            + "never log in with an expiring credential (they authenticate to each other with PLAIN or SCRAM, and "
            + "hold no OAUTHBEARER token nor Kerberos ticket to refresh), so these configs have nothing to act on: ";
    private static final String BARE_JAAS_REFUSED = "A broker listener ignores a sasl.jaas.config without a mechanism "
            + "prefix, as Kafka's JaasContext.loadServerContext ignores it (it names no SASL mechanism), so Cairn "
            + "does not store one: set listener.name.<listener>.<mechanism>.sasl.jaas.config (for example "
            + "listener.name.sasl_plaintext.plain.sasl.jaas.config) instead: ";

    /** A refused change: {@code invalidRequest} selects INVALID_REQUEST, else INVALID_CONFIG. */
    public record Refusal(boolean invalidRequest, String message) {
    }

    private DynamicBrokerConfigs() {
    }

    /** Whether {@code key} is applied live when set for this broker (or cluster-wide, where Kafka allows it). */
    public static boolean isLive(String key) {
        return LIVE.contains(key) || LogConfigs.isLiveDefault(key) || ConnectionLimits.isKey(key)
                || isListenerSslKey(key) || DynamicSaslSettings.isKey(key) || DynamicNetworkThreads.isListenerKey(key);
    }

    /**
     * Whether {@code key} is {@code listener.name.<listener>.<key>} of one of the {@code ssl.*} keys of a listener
     * ({@link SslSettings#isSslKey}), which {@code io.cairn.broker.security.DynamicSslStores} applies to its new
     * connections.
     */
    public static boolean isListenerSslKey(String key) {
        Matcher m = LISTENER_KEY.matcher(key);
        return m.matches() && SslSettings.isSslKey(m.group(1));
    }

    /**
     * Whether {@code key} is {@code listener.name.<listener>.<key>} of one of the {@code ssl.*} keys a listener's
     * stores are reloaded with ({@link SslSettings#RECONFIGURABLE}).
     */
    public static boolean isListenerStoreKey(String key) {
        Matcher m = LISTENER_KEY.matcher(key);
        return m.matches() && SslSettings.RECONFIGURABLE.contains(m.group(1));
    }

    /**
     * Kafka's checks of a broker resource's dynamic configs after the change ({@code props}: key to value, deleted
     * keys absent), or empty when they are accepted.
     *
     * @param perBroker whether the resource is a broker's ({@code false}: the cluster default)
     */
    public static Optional<Refusal> validate(Map<String, String> props, boolean perBroker) {
        Set<String> notDynamic = new TreeSet<>();
        Set<String> notLive = new TreeSet<>();
        for (String key : props.keySet()) {
            if (isLive(key)) {
                continue;
            }
            if (ConfigTable.get().broker(key).filter(ConfigKey::dynamic).isPresent()
                    || KAFKA_DYNAMIC_PREFIXES.stream().anyMatch(key::startsWith)) {
                notLive.add(key);
            } else {
                notDynamic.add(key);
            }
        }
        if (!notDynamic.isEmpty()) {
            return Optional.of(new Refusal(true, "Cannot update these configs dynamically: "
                    + scalaSet(notDynamic)));
        }
        Set<String> withoutPrefix = new TreeSet<>(props.keySet());
        withoutPrefix.retainAll(SslSettings.RECONFIGURABLE);
        if (!withoutPrefix.isEmpty()) {
            return Optional.of(new Refusal(true, "These security configs can be dynamically updated only "
                    + "per-listener using the listener prefix: " + scalaSet(withoutPrefix)));
        }
        Optional<Refusal> badValue = badValue(props);
        if (badValue.isPresent()) {
            return badValue; // Kafka's validateConfigTypes comes before its per-broker check
        }
        Set<String> perBrokerOnly = new TreeSet<>();
        if (!perBroker) {
            props.keySet().stream().filter(DynamicBrokerConfigs::isPerBrokerOnly).forEach(perBrokerOnly::add);
        }
        if (!perBrokerOnly.isEmpty()) {
            return Optional.of(new Refusal(true, "Cannot update these configs at default cluster level, broker id "
                    + "must be specified: " + scalaSet(perBrokerOnly)));
        }
        Set<String> plugins = new TreeSet<>();
        notLive.stream().filter(key -> PLUGIN_CLASS_KEYS.contains(BrokerConfig.withoutListenerPrefix(key)))
                .forEach(plugins::add);
        if (!plugins.isEmpty()) {
            // INVALID_REQUEST, as Kafka answers a plugin class it cannot load
            return Optional.of(new Refusal(true, PLUGIN_CLASSES_REFUSED + scalaSet(plugins)));
        }
        Set<String> tiered = new TreeSet<>();
        notLive.stream().filter(DynamicBrokerConfigs::isTieredStorageKey).forEach(tiered::add);
        if (!tiered.isEmpty()) {
            return Optional.of(new Refusal(false, "Cairn has no tiered storage (remote.log.storage.system.enable), so "
                    + "these configs have nothing to act on: " + scalaSet(tiered)));
        }
        for (Map.Entry<Set<String>, String> sasl : List.of(Map.entry(KERBEROS_AND_LOGIN_REFRESH,
                KERBEROS_AND_LOGIN_REFRESH_REFUSED), Map.entry(Set.of(SaslSettings.JAAS_CONFIG), BARE_JAAS_REFUSED))) {
            Set<String> refused = new TreeSet<>();
            notLive.stream().filter(key -> sasl.getKey().contains(BrokerConfig.withoutListenerPrefix(key)))
                    .forEach(refused::add);
            if (!refused.isEmpty()) {
                return Optional.of(new Refusal(false, sasl.getValue() + scalaSet(refused)));
            }
        }
        if (!notLive.isEmpty()) {
            return Optional.of(new Refusal(false, "Cairn applies these configs only at start, set them in "
                    + "server.properties: " + scalaSet(notLive)));
        }
        return Optional.empty();
    }

    /** Kafka's check of each value against its key's type and rule ({@code ConfigException}'s text), or empty. */
    private static Optional<Refusal> badValue(Map<String, String> props) {
        for (Map.Entry<String, String> e : new TreeMap<>(props).entrySet()) {
            if (isListenerStoreKey(e.getKey())) {
                continue; // strings and passwords; the listener's SslFactory checks them
            }
            String tableKey = ConnectionLimits.isListenerKey(e.getKey())
                    ? ConnectionLimits.listenerBaseKey(e.getKey()) : e.getKey();
            if (DynamicNetworkThreads.isListenerKey(tableKey) || isListenerSslKey(tableKey)
                    || SaslSettings.isListenerKey(tableKey)) {
                tableKey = BrokerConfig.withoutListenerPrefix(tableKey); // Kafka checks it as the key it overrides
            }
            if (ConfigTable.get().broker(tableKey).isEmpty()) {
                continue; // a listener's key Kafka's table does not type (its owner checks it)
            }
            Optional<String> invalid = ConfigTable.get().broker(tableKey).orElseThrow().validate(e.getValue());
            if (invalid.isPresent()) {
                return Optional.of(new Refusal(true, invalid.get()));
            }
        }
        return Optional.empty();
    }

    /**
     * The message Kafka's clients see when a component refuses a dynamic change in its {@code
     * validateReconfiguration} (a thread pool, a listener's connection limit): {@code DynamicBrokerConfig} wraps the
     * refusal in {@code new ConfigException("Invalid dynamic configuration", e)}, whose two-argument form is
     * (name, value), so the text is "Invalid value <the refusal> for configuration Invalid dynamic configuration".
     */
    public static String invalidDynamicConfiguration(String refusal) {
        return "Invalid value org.apache.kafka.common.config.ConfigException: " + refusal
                + " for configuration Invalid dynamic configuration";
    }

    /** A key of Kafka's tiered storage (KIP-405): the remote log manager's, and the local retention defaults. */
    private static boolean isTieredStorageKey(String key) {
        return key.startsWith("remote.") || key.startsWith("log.local.retention.");
    }

    /** Kafka's {@code perBrokerConfigs}: a per-broker listener key, or any listener key but the cluster-wide ones. */
    private static boolean isPerBrokerOnly(String key) {
        Matcher m = LISTENER_KEY.matcher(key);
        if (m.matches()) {
            return !CLUSTER_LEVEL_LISTENER_KEYS.contains(m.group(1));
        }
        return PER_BROKER.contains(key);
    }

    private static String scalaSet(Set<String> keys) {
        return "Set(" + String.join(", ", keys) + ")";
    }
}
