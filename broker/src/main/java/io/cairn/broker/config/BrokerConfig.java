package io.cairn.broker.config;

import io.cairn.broker.coordinator.CoordinatorRuntimeSettings;
import io.cairn.broker.group.GroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupConfig;
import io.cairn.broker.group.consumer.ConsumerGroupMigrationPolicy;
import io.cairn.broker.group.share.ShareGroupConfig;
import io.cairn.broker.group.share.ShareGroupConfigs;
import io.cairn.broker.share.ShareCoordinatorConfig;
import io.cairn.broker.share.partition.SharePartitionConfig;
import io.cairn.broker.txn.TransactionConfig;
import io.cairn.isr.RackAwareReplicaSelector;
import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import io.cairn.metadata.config.ServerProperties;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The broker's configuration, read from a {@code server.properties} file by the one reader of it
 * ({@link ServerProperties}, which the metadata node's config and the storage tool read too) with Kafka's key names
 * and defaults (except Cairn's own in {@link ConfigTable#cairnDefaults}: {@code log.dir} is {@code ./data}). Every
 * value is parsed and validated when the object is built, so a bad value fails startup with one
 * {@link ConfigException} naming the key and the rule: first every key of {@link ConfigTable} against its type and
 * rule, then the rules between keys.
 *
 * <p>Keys neither Kafka nor Cairn knows are accepted and reported by {@link #unknownKeys()} (Kafka logs each at
 * WARN); Kafka's keys that Cairn accepts without acting on them by {@link #notActedOnKeys()}.
 * Immutable and thread-safe.
 */
public final class BrokerConfig {

    public static final String LISTENERS = "listeners";
    public static final String ADVERTISED_LISTENERS = "advertised.listeners";
    public static final String CONTROLLER_LISTENER_NAMES = "controller.listener.names";
    public static final String NODE_ID = "node.id";
    public static final String PROCESS_ROLES = "process.roles";
    public static final String LOG_DIRS = "log.dirs";
    public static final String LOG_DIR = "log.dir";
    public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
    public static final String SOCKET_SEND_BUFFER_BYTES = "socket.send.buffer.bytes";
    public static final String SOCKET_RECEIVE_BUFFER_BYTES = "socket.receive.buffer.bytes";
    public static final String SOCKET_LISTEN_BACKLOG_SIZE = "socket.listen.backlog.size";
    public static final String QUOTA_WINDOW_NUM = "quota.window.num";
    public static final String QUOTA_WINDOW_SIZE_SECONDS = "quota.window.size.seconds";
    public static final String CONTROLLER_QUOTA_WINDOW_NUM = "controller.quota.window.num";
    public static final String CONTROLLER_QUOTA_WINDOW_SIZE_SECONDS = "controller.quota.window.size.seconds";
    public static final String NUM_NETWORK_THREADS = "num.network.threads";
    public static final String NUM_IO_THREADS = "num.io.threads";
    public static final String BACKGROUND_THREADS = "background.threads";
    public static final String NUM_RECOVERY_THREADS_PER_DATA_DIR = "num.recovery.threads.per.data.dir";
    public static final String PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = "producer.id.expiration.check.interval.ms";
    public static final String QUEUED_MAX_REQUESTS = "queued.max.requests";
    public static final String QUEUED_MAX_REQUEST_BYTES = "queued.max.request.bytes";
    public static final String CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms";
    public static final String CONTROLLER_QUORUM_VOTERS = "controller.quorum.voters";
    public static final String CONTROLLER_QUORUM_BOOTSTRAP_SERVERS = "controller.quorum.bootstrap.servers";
    public static final String BROKER_RACK = "broker.rack";
    public static final String AUTO_CREATE_TOPICS_ENABLE = "auto.create.topics.enable";
    public static final String TRANSACTION_PARTITION_VERIFICATION_ENABLE = "transaction.partition.verification.enable";
    public static final String BROKER_HEARTBEAT_INTERVAL_MS = "broker.heartbeat.interval.ms";
    public static final String FETCH_MAX_BYTES = "fetch.max.bytes";
    public static final String FETCH_SESSION_CACHE_SLOTS = "max.incremental.fetch.session.cache.slots";
    public static final String REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS =
            "replica.high.watermark.checkpoint.interval.ms";
    public static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";
    public static final String REPLICA_SELECTOR_CLASS = "replica.selector.class";
    public static final String OFFSETS_TOPIC_NUM_PARTITIONS = "offsets.topic.num.partitions";
    public static final String OFFSETS_TOPIC_REPLICATION_FACTOR = "offsets.topic.replication.factor";
    public static final String TRANSACTION_STATE_LOG_NUM_PARTITIONS = "transaction.state.log.num.partitions";
    public static final String TRANSACTION_STATE_LOG_REPLICATION_FACTOR = "transaction.state.log.replication.factor";
    public static final String TRANSACTION_STATE_LOG_MIN_ISR = "transaction.state.log.min.isr";
    public static final String GROUP_SHARE_ENABLE = "group.share.enable";
    public static final String SHARE_STATE_TOPIC_NUM_PARTITIONS = "share.coordinator.state.topic.num.partitions";
    public static final String SHARE_STATE_TOPIC_REPLICATION_FACTOR =
            "share.coordinator.state.topic.replication.factor";
    public static final String SHARE_STATE_TOPIC_MIN_ISR = "share.coordinator.state.topic.min.isr";
    public static final String SHARE_STATE_TOPIC_SEGMENT_BYTES = "share.coordinator.state.topic.segment.bytes";
    public static final String SHARE_SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT =
            "share.coordinator.snapshot.update.records.per.snapshot";
    public static final String SHARE_COORDINATOR_LOAD_BUFFER_SIZE = "share.coordinator.load.buffer.size";
    public static final String SHARE_COORDINATOR_THREADS = "share.coordinator.threads";
    public static final String SHARE_COORDINATOR_APPEND_LINGER_MS = "share.coordinator.append.linger.ms";
    public static final String SHARE_COORDINATOR_WRITE_TIMEOUT_MS = "share.coordinator.write.timeout.ms";
    public static final String GROUP_SHARE_RECORD_LOCK_DURATION_MS = "group.share.record.lock.duration.ms";
    public static final String GROUP_SHARE_MIN_RECORD_LOCK_DURATION_MS = "group.share.min.record.lock.duration.ms";
    public static final String GROUP_SHARE_MAX_RECORD_LOCK_DURATION_MS = "group.share.max.record.lock.duration.ms";
    public static final String GROUP_SHARE_DELIVERY_COUNT_LIMIT = "group.share.delivery.count.limit";
    public static final String GROUP_SHARE_PARTITION_MAX_RECORD_LOCKS = "group.share.partition.max.record.locks";
    public static final String GROUP_SHARE_MAX_SHARE_SESSIONS = "group.share.max.share.sessions";
    public static final String TRANSACTION_STATE_LOG_SEGMENT_BYTES = "transaction.state.log.segment.bytes";
    public static final String TRANSACTION_MAX_TIMEOUT_MS = "transaction.max.timeout.ms";
    public static final String TRANSACTIONAL_ID_EXPIRATION_MS = "transactional.id.expiration.ms";
    public static final String TRANSACTION_STATE_LOG_LOAD_BUFFER_SIZE = "transaction.state.log.load.buffer.size";
    public static final String TRANSACTION_ABORT_TIMED_OUT_CLEANUP_INTERVAL_MS =
            "transaction.abort.timed.out.transaction.cleanup.interval.ms";
    public static final String TRANSACTION_REMOVE_EXPIRED_CLEANUP_INTERVAL_MS =
            "transaction.remove.expired.transaction.cleanup.interval.ms";
    public static final String GROUP_MIN_SESSION_TIMEOUT_MS = "group.min.session.timeout.ms";
    public static final String GROUP_MAX_SESSION_TIMEOUT_MS = "group.max.session.timeout.ms";
    public static final String GROUP_INITIAL_REBALANCE_DELAY_MS = "group.initial.rebalance.delay.ms";
    public static final String GROUP_MAX_SIZE = "group.max.size";
    public static final String GROUP_COORDINATOR_THREADS = "group.coordinator.threads";
    public static final String GROUP_COORDINATOR_APPEND_LINGER_MS = "group.coordinator.append.linger.ms";
    public static final String OFFSETS_COMMIT_TIMEOUT_MS = "offsets.commit.timeout.ms";
    public static final String OFFSETS_RETENTION_MINUTES = "offsets.retention.minutes";
    public static final String OFFSETS_RETENTION_CHECK_INTERVAL_MS = "offsets.retention.check.interval.ms";
    public static final String OFFSET_METADATA_MAX_BYTES = "offset.metadata.max.bytes";
    public static final String LOG_RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms";
    public static final String LOG_FLUSH_SCHEDULER_INTERVAL_MS = "log.flush.scheduler.interval.ms";
    public static final String LOG_FLUSH_INTERVAL_MESSAGES = "log.flush.interval.messages";
    public static final String LOG_FLUSH_INTERVAL_MS = "log.flush.interval.ms";
    /** Cairn's own: whether metrics are recorded and served (Kafka needs a JMX exporter agent for them). */
    public static final String AUTHORIZER_CLASS_NAME = "authorizer.class.name";
    /** The one authorizer Cairn has, named as Kafka names its own (KRaft's standard authorizer). */
    public static final String STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";
    /** The standard authorizer's own keys (not in Kafka's broker ConfigDef, so not in the config table). */
    public static final String SUPER_USERS = "super.users";
    public static final String ALLOW_EVERYONE_IF_NO_ACL_FOUND = "allow.everyone.if.no.acl.found";
    public static final String METRICS_ENABLED = "metrics.enabled";
    /** Cairn's own: the host the Prometheus endpoint binds, empty for every interface (as a listener's host). */
    public static final String METRICS_HOST = "metrics.host";
    /** Cairn's own: the port of the Prometheus endpoint, 9404 as Strimzi's; 0 picks a free one. */
    public static final String METRICS_PORT = "metrics.port";

    private final Map<String, String> originals;
    private final Map<String, String> topicDefaults;
    private final long logRetentionCheckIntervalMs;
    private final long logFlushSchedulerIntervalMs;
    private final long logFlushIntervalMessages;
    private final List<Endpoint> listeners;
    private final List<Endpoint> advertisedListeners;
    private final List<String> controllerListenerNames;
    private final int nodeId;
    private final Set<ProcessRole> processRoles;
    private final List<Path> logDirs;
    private final int socketRequestMaxBytes;
    private final int socketSendBufferBytes;
    private final int socketReceiveBufferBytes;
    private final int socketListenBacklogSize;
    /** {@code quota.window.num}, {@code quota.window.size.seconds} and their {@code controller.} forms. */
    private final int[] quotaWindow;
    private final int numNetworkThreads;
    private final int numIoThreads;
    private final int backgroundThreads;
    private final int numRecoveryThreadsPerDataDir;
    private final int producerIdExpirationCheckIntervalMs;
    private final int queuedMaxRequests;
    private final long queuedMaxRequestBytes;
    private final long connectionsMaxIdleMs;
    private final ConnectionLimits connectionLimits;
    private final CleanerSettings cleaner;
    private final String brokerRack;
    private final boolean autoCreateTopicsEnable;
    private final boolean transactionPartitionVerificationEnable;
    private final long brokerHeartbeatIntervalMs;
    private final int fetchMaxBytes;
    private final int fetchSessionCacheSlots;
    private final long replicaHighWatermarkCheckpointIntervalMs;
    private final long replicaLagTimeMaxMs;
    private final boolean rackAwareReplicaSelector;
    private final InternalTopicDefaults internalTopics;
    private final GroupConfig groupConfig;
    private final ConsumerGroupConfig consumerGroupConfig;
    private final ShareGroupConfig shareGroupConfig;
    private final CoordinatorRuntimeSettings groupCoordinatorRuntime;
    private final TransactionConfig transactionConfig;
    private final ShareCoordinatorConfig shareCoordinatorConfig;
    private final SharePartitionConfig sharePartitionConfig;
    /** Made on first use from the checked settings (the same every time). */
    private volatile ShareGroupConfigs shareGroupConfigs;
    private final boolean metricsEnabled;
    private final String metricsHost;
    private final int metricsPort;
    private final boolean metricsPortSet;
    private final ReplicaFetchSettings replicaFetch;
    /** The resolved {@code ssl.*} settings of each SSL listener, by listener name. */
    private final Map<String, SslSettings> listenerSsl;
    /** The {@code ssl.*} settings of the controller listener when it maps to SSL (the quorum's TLS), else null. */
    private final SslSettings controllerSsl;
    /** The resolved SASL settings of each SASL_PLAINTEXT or SASL_SSL listener, by listener name. */
    private final Map<String, SaslSettings> listenerSasl;
    /** The credentials the inter-broker clients authenticate with, or null when that listener is not SASL. */
    private final SaslSettings.ClientCredentials interBrokerSasl;
    private final ControllerSasl controllerSasl;
    /** The standard authorizer's settings, or null without {@code authorizer.class.name}. */
    private final AuthorizerSettings authorizer;

    private BrokerConfig(Map<String, String> props) {
        this.originals = Collections.unmodifiableMap(new TreeMap<>(props));
        ServerProperties server = checked(props);
        ValueParser values = new ValueParser(props);
        this.nodeId = values.intValue(NODE_ID, Integer.parseInt(server.value(NODE_ID)), 0);
        this.processRoles = ProcessRole.parse(PROCESS_ROLES, server.value(PROCESS_ROLES));
        this.controllerListenerNames = values.list(CONTROLLER_LISTENER_NAMES, "").stream()
                .map(name -> name.toUpperCase(Locale.ROOT)).toList();
        ListenerProtocols protocols = ListenerProtocols.parse(
                values.string(ListenerProtocols.KEY, ListenerProtocols.DEFAULT),
                props.containsKey(ListenerProtocols.KEY), controllerListenerNames);
        this.listeners = parseListeners(LISTENERS, values.string(LISTENERS), protocols);
        if (listeners.isEmpty()) {
            throw ConfigException.invalid(LISTENERS, props.get(LISTENERS), "at least one listener is required");
        }
        // What the broker registers and clients are told: checked, but without the quorum's controller listeners.
        String advertised = props.get(ADVERTISED_LISTENERS);
        List<Endpoint> advertisedAll = advertised == null || advertised.isBlank() ? listeners
                : parseListeners(ADVERTISED_LISTENERS, advertised, protocols);
        validateAdvertised(advertisedAll);
        this.listenerSsl = securityOf(props, listeners, protocols, controllerListenerNames);
        this.controllerSsl = controllerSslOf(props, protocols, controllerListenerNames);
        this.listenerSasl = saslOf(props, listeners);
        this.advertisedListeners = advertisedAll.stream()
                .filter(l -> !controllerListenerNames.contains(l.listenerName())).toList();
        this.logDirs = logDirs(server);
        this.socketRequestMaxBytes = values.intValue(SOCKET_REQUEST_MAX_BYTES, 1);
        this.socketSendBufferBytes = values.intValue(SOCKET_SEND_BUFFER_BYTES, -1);
        this.socketReceiveBufferBytes = values.intValue(SOCKET_RECEIVE_BUFFER_BYTES, -1);
        this.socketListenBacklogSize = values.intValue(SOCKET_LISTEN_BACKLOG_SIZE, 1);
        this.quotaWindow = quotaWindow(values);
        this.numNetworkThreads = values.intValue(NUM_NETWORK_THREADS, 1);
        this.numIoThreads = values.intValue(NUM_IO_THREADS, 1);
        this.backgroundThreads = values.intValue(BACKGROUND_THREADS, 1);
        this.numRecoveryThreadsPerDataDir = values.intValue(NUM_RECOVERY_THREADS_PER_DATA_DIR, 1);
        this.producerIdExpirationCheckIntervalMs = values.intValue(PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, 1);
        this.queuedMaxRequests = values.intValue(QUEUED_MAX_REQUESTS, 1);
        this.queuedMaxRequestBytes = values.longValue(QUEUED_MAX_REQUEST_BYTES, -1L);
        this.connectionsMaxIdleMs = values.longValue(CONNECTIONS_MAX_IDLE_MS, -1L);
        this.connectionLimits = connectionLimits(props, listeners);
        this.cleaner = CleanerSettings.parse(values);
        String rack = values.string(BROKER_RACK);
        this.brokerRack = rack.isEmpty() ? null : rack;
        this.autoCreateTopicsEnable = values.booleanValue(AUTO_CREATE_TOPICS_ENABLE);
        this.transactionPartitionVerificationEnable = values.booleanValue(TRANSACTION_PARTITION_VERIFICATION_ENABLE);
        this.topicDefaults = LogDefaults.topicDefaults(props);
        this.logRetentionCheckIntervalMs = values.longValue(LOG_RETENTION_CHECK_INTERVAL_MS, 1L);
        this.logFlushSchedulerIntervalMs = values.longValue(LOG_FLUSH_SCHEDULER_INTERVAL_MS, Long.MIN_VALUE);
        this.logFlushIntervalMessages = values.longValue(LOG_FLUSH_INTERVAL_MESSAGES, 1L);
        if (props.get(LOG_FLUSH_INTERVAL_MS) != null) {
            values.longValue(LOG_FLUSH_INTERVAL_MS, Long.MAX_VALUE, 0L);
        }
        this.brokerHeartbeatIntervalMs = values.longValue(BROKER_HEARTBEAT_INTERVAL_MS, 1L);
        this.fetchMaxBytes = values.intValue(FETCH_MAX_BYTES, 1024);
        this.fetchSessionCacheSlots = values.intValue(FETCH_SESSION_CACHE_SLOTS, 0);
        this.replicaHighWatermarkCheckpointIntervalMs = values.longValue(
                REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, 5000L, 1L);
        this.replicaLagTimeMaxMs = values.longValue(REPLICA_LAG_TIME_MAX_MS, 1L);
        this.rackAwareReplicaSelector = parseReplicaSelector(values.string(REPLICA_SELECTOR_CLASS));
        this.internalTopics = new InternalTopicDefaults(values.intValue(OFFSETS_TOPIC_NUM_PARTITIONS, 1),
                (short) values.intValue(OFFSETS_TOPIC_REPLICATION_FACTOR, 1),
                values.intValue(TRANSACTION_STATE_LOG_NUM_PARTITIONS, 1),
                (short) values.intValue(TRANSACTION_STATE_LOG_REPLICATION_FACTOR, 1));
        this.groupConfig = groupConfig(values);
        this.consumerGroupConfig = consumerGroupConfig(values);
        this.groupCoordinatorRuntime = new CoordinatorRuntimeSettings(values.intValue(GROUP_COORDINATOR_THREADS, 1),
                values.intValue(GROUP_COORDINATOR_APPEND_LINGER_MS, 0),
                values.intValue(OFFSETS_COMMIT_TIMEOUT_MS, 1));
        this.shareGroupConfig = shareGroupConfig(values, groupCoordinatorRuntime.writeTimeoutMs());
        this.transactionConfig = new TransactionConfig(
                values.longValue(TRANSACTIONAL_ID_EXPIRATION_MS, 1L),
                values.intValue(TRANSACTION_MAX_TIMEOUT_MS, 1), internalTopics.transactionPartitions(),
                internalTopics.transactionReplication(),
                values.intValue(TRANSACTION_STATE_LOG_SEGMENT_BYTES, 1),
                values.intValue(TRANSACTION_STATE_LOG_LOAD_BUFFER_SIZE, 1),
                values.intValue(TRANSACTION_STATE_LOG_MIN_ISR, 1),
                values.longValue(TRANSACTION_ABORT_TIMED_OUT_CLEANUP_INTERVAL_MS, 1L),
                values.longValue(TRANSACTION_REMOVE_EXPIRED_CLEANUP_INTERVAL_MS, 1L));
        this.shareCoordinatorConfig = shareCoordinatorConfig(values);
        this.sharePartitionConfig = sharePartitionConfig(values);
        this.metricsEnabled = values.booleanValue(METRICS_ENABLED);
        this.metricsHost = values.string(METRICS_HOST);
        this.metricsPort = values.intValue(METRICS_PORT, 0);
        this.metricsPortSet = props.get(METRICS_PORT) != null && !props.get(METRICS_PORT).isBlank();
        if (metricsPort > 65535) {
            throw ConfigException.invalid(METRICS_PORT, props.get(METRICS_PORT), "must be at most 65535");
        }
        this.replicaFetch = ReplicaFetchSettings.parse(props, values, advertisedListeners,
                processRoles.contains(ProcessRole.BROKER));
        this.interBrokerSasl = SaslSettings.interBrokerClient(props,
                listenerSasl.get(replicaFetch.interBrokerListenerName()));
        this.authorizer = AuthorizerSettings.parse(props);
        this.controllerSasl = controllerListenerNames.isEmpty() ? null : ControllerSasl.of(props,
                controllerListenerNames.get(0), protocols.find(controllerListenerNames.get(0)), authorizer);
        if (groupConfig.minSessionTimeoutMs() > groupConfig.maxSessionTimeoutMs()) {
            throw ConfigException.invalid(GROUP_MIN_SESSION_TIMEOUT_MS, props.get(GROUP_MIN_SESSION_TIMEOUT_MS),
                    "must not be larger than " + GROUP_MAX_SESSION_TIMEOUT_MS + " (" + groupConfig.maxSessionTimeoutMs()
                    + ")");
        }
    }

    /** Builds a config from key/value pairs (an in-memory {@code server.properties}). */
    public static BrokerConfig fromMap(Map<String, String> props) {
        return new BrokerConfig(props);
    }

    /**
     * Reads {@code file} (when not null) and applies {@code overrides} on top, as {@code kafka-server-start.sh
     * server.properties --override k=v} does.
     */
    public static BrokerConfig load(Path file, Map<String, String> overrides) throws IOException {
        return new BrokerConfig(ServerProperties.load(file, overrides).originals());
    }

    /**
     * Checks what each listener's security protocol needs and resolves the {@code ssl.*} settings of the SSL ones:
     * the controller listeners must all map to one protocol (one Raft server serves them), and an SSL or SASL_SSL
     * listener needs a key store.
     */
    private static Map<String, SslSettings> securityOf(Map<String, String> props, List<Endpoint> listeners,
            ListenerProtocols protocols, List<String> controllerListenerNames) {
        SecurityProtocol first = null;
        for (String controller : controllerListenerNames) {
            SecurityProtocol protocol = protocols.find(controller);
            SecurityProtocol effective = protocol == null ? SecurityProtocol.PLAINTEXT : protocol;
            if (first != null && effective != first) {
                throw ConfigException.invalid(ListenerProtocols.KEY, controller + ":" + effective, "Cairn's "
                        + "metadata quorum serves every controller listener with one Raft server, so the controller "
                        + "listeners " + controllerListenerNames + " must all map to the same security protocol");
            }
            first = effective;
        }
        Map<String, SslSettings> ssl = new LinkedHashMap<>();
        for (Endpoint endpoint : listeners) {
            switch (endpoint.securityProtocol()) {
                case PLAINTEXT, SASL_PLAINTEXT -> {
                }
                case SSL, SASL_SSL -> {
                    SslSettings settings = SslSettings.forListener(props, endpoint.listenerName());
                    if (!settings.hasKeystore()) {
                        throw ConfigException.invalid(settings.keyOf(SslSettings.KEYSTORE_LOCATION), null,
                                "the " + endpoint.securityProtocol() + " listener " + endpoint.listenerName()
                                + " needs a key store: set "
                                + SslSettings.KEYSTORE_LOCATION + " and " + SslSettings.KEYSTORE_PASSWORD
                                + " (or PEM " + SslSettings.KEYSTORE_KEY + " and "
                                + SslSettings.KEYSTORE_CERTIFICATE_CHAIN + "), globally or with the prefix "
                                + SslSettings.listenerPrefix(endpoint.listenerName()));
                    }
                    ssl.put(endpoint.listenerName(), settings);
                }
                default -> throw new IllegalStateException("Unknown security protocol "
                        + endpoint.securityProtocol());
            }
        }
        return Collections.unmodifiableMap(ssl);
    }

    /**
     * The {@code ssl.*} settings of the first controller listener when it maps to SSL, on every node (a broker-only
     * node reaches the controllers with them and serves its own metadata listener with them), else null. The quorum's
     * Raft servers need a key store, and Ratis' gRPC server either requires a client certificate or asks for none, so
     * {@code ssl.client.auth=requested} is refused with one line.
     */
    private static SslSettings controllerSslOf(Map<String, String> props, ListenerProtocols protocols,
            List<String> controllerListenerNames) {
        if (controllerListenerNames.isEmpty()
                || protocols.find(controllerListenerNames.get(0)) != SecurityProtocol.SSL) {
            return null;
        }
        String name = controllerListenerNames.get(0);
        SslSettings settings = SslSettings.forListener(props, name);
        if (!settings.hasKeystore()) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.KEYSTORE_LOCATION), null, "the SSL controller "
                    + "listener " + name + " needs a key store on every node (a broker-only node serves the metadata "
                    + "log to the controllers over TLS too): set " + SslSettings.KEYSTORE_LOCATION + " and "
                    + SslSettings.KEYSTORE_PASSWORD + " (or PEM " + SslSettings.KEYSTORE_KEY + " and "
                    + SslSettings.KEYSTORE_CERTIFICATE_CHAIN + "), globally or with the prefix "
                    + SslSettings.listenerPrefix(name));
        }
        if (settings.clientAuth() == SslSettings.ClientAuth.REQUESTED) {
            throw ConfigException.invalid(settings.keyOf(SslSettings.CLIENT_AUTH), "requested", "Cairn's metadata "
                    + "quorum (gRPC) can require a client certificate on the controller listener " + name
                    + " or ask for none: set " + SslSettings.listenerPrefix(name) + SslSettings.CLIENT_AUTH
                    + " to required (mutual TLS) or none");
        }
        return settings;
    }

    /** The {@link SaslSettings} of every SASL_PLAINTEXT and SASL_SSL listener. */
    private static Map<String, SaslSettings> saslOf(Map<String, String> props, List<Endpoint> listeners) {
        Map<String, SaslSettings> sasl = new LinkedHashMap<>();
        for (Endpoint endpoint : listeners) {
            SecurityProtocol protocol = endpoint.securityProtocol();
            if (protocol == SecurityProtocol.SASL_PLAINTEXT || protocol == SecurityProtocol.SASL_SSL) {
                sasl.put(endpoint.listenerName(), SaslSettings.forListener(props, endpoint.listenerName()));
            }
        }
        return Collections.unmodifiableMap(sasl);
    }

    private static List<Endpoint> parseListeners(String key, String value, ListenerProtocols protocols) {
        List<Endpoint> endpoints = new ArrayList<>();
        Set<String> names = new TreeSet<>();
        for (String entry : value.split(",")) {
            if (entry.isBlank()) {
                continue;
            }
            Endpoint endpoint = Endpoint.parse(key, entry, protocols);
            if (!names.add(endpoint.listenerName())) {
                throw ConfigException.invalid(key, value, "each listener must have a different name, "
                        + endpoint.listenerName() + " appears twice");
            }
            endpoints.add(endpoint);
        }
        return List.copyOf(endpoints);
    }

    /** Kafka's rules: advertised names must be listener names, and 0.0.0.0 cannot be advertised. */
    private void validateAdvertised(List<Endpoint> advertisedListeners) {
        for (Endpoint advertised : advertisedListeners) {
            if (listeners.stream().noneMatch(l -> l.listenerName().equals(advertised.listenerName()))) {
                throw ConfigException.invalid(ADVERTISED_LISTENERS, advertised, "listener name "
                        + advertised.listenerName() + " is not one of the listeners " + joined(listeners));
            }
            if ("0.0.0.0".equals(advertised.host()) || "::".equals(advertised.host())) {
                throw ConfigException.invalid(ADVERTISED_LISTENERS, advertised, "advertised.listeners cannot use "
                        + "the nonroutable meta-address " + advertised.host() + ". Use a routable IP address.");
            }
        }
    }

    /**
     * {@code replica.selector.class}: unset means consumers read from leaders only; Kafka's rack-aware selector is
     * Cairn's own implementation of its rule; any other class would be a plugin Cairn cannot load.
     */
    private static boolean parseReplicaSelector(String className) {
        if (className.isEmpty()) {
            return false;
        }
        if (!className.equals(RackAwareReplicaSelector.KAFKA_CLASS_NAME)) {
            throw ConfigException.invalid(REPLICA_SELECTOR_CLASS, className, "Cairn cannot load replica selector "
                    + "plugins; the supported value is " + RackAwareReplicaSelector.KAFKA_CLASS_NAME
                    + " (or leave it unset to read from leaders only)");
        }
        return true;
    }

    /**
     * The parsed properties, once every value set for a key of {@link ConfigTable} has the key's type and passes
     * its rule, as Kafka's {@code ConfigDef} checks them: the first that does not fails startup with Kafka's message.
     */
    private static ServerProperties checked(Map<String, String> props) {
        ServerProperties server = ServerProperties.of(props);
        server.firstInvalid().ifPresent(message -> {
            throw new ConfigException(message);
        });
        return server;
    }

    private static List<Path> logDirs(ServerProperties server) {
        try {
            return server.logDirs();
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    private static ShareCoordinatorConfig shareCoordinatorConfig(ValueParser values) {
        return new ShareCoordinatorConfig(values.intValue(SHARE_STATE_TOPIC_NUM_PARTITIONS, 1),
                (short) values.intValue(SHARE_STATE_TOPIC_REPLICATION_FACTOR, 1),
                values.intValue(SHARE_STATE_TOPIC_MIN_ISR, 1), values.intValue(SHARE_STATE_TOPIC_SEGMENT_BYTES, 1),
                values.intValue(SHARE_SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT, 0),
                values.intValue(SHARE_COORDINATOR_LOAD_BUFFER_SIZE, 1),
                new CoordinatorRuntimeSettings(values.intValue(SHARE_COORDINATOR_THREADS, 1),
                        values.intValue(SHARE_COORDINATOR_APPEND_LINGER_MS, 0),
                        values.intValue(SHARE_COORDINATOR_WRITE_TIMEOUT_MS, 1)));
    }

    /**
     * The share-partition leader's settings, with Kafka's {@code ShareGroupConfig} checks: the record lock duration
     * between its min and max, the delivery count limit 2-10, the record locks 100-10000.
     */
    private static SharePartitionConfig sharePartitionConfig(ValueParser values) {
        int lock = values.intValue(GROUP_SHARE_RECORD_LOCK_DURATION_MS, 1000);
        int minLock = values.intValue(GROUP_SHARE_MIN_RECORD_LOCK_DURATION_MS, 1000);
        int maxLock = values.intValue(GROUP_SHARE_MAX_RECORD_LOCK_DURATION_MS, 1000);
        if (lock < minLock) {
            throw ConfigException.invalid(GROUP_SHARE_RECORD_LOCK_DURATION_MS, Integer.toString(lock),
                    GROUP_SHARE_RECORD_LOCK_DURATION_MS + " must be greater than or equal to "
                            + GROUP_SHARE_MIN_RECORD_LOCK_DURATION_MS);
        }
        if (lock > maxLock) {
            throw ConfigException.invalid(GROUP_SHARE_RECORD_LOCK_DURATION_MS, Integer.toString(lock),
                    GROUP_SHARE_RECORD_LOCK_DURATION_MS + " must be less than or equal to "
                            + GROUP_SHARE_MAX_RECORD_LOCK_DURATION_MS);
        }
        int deliveries = values.intValue(GROUP_SHARE_DELIVERY_COUNT_LIMIT, 2);
        if (deliveries > 10) {
            throw ConfigException.invalid(GROUP_SHARE_DELIVERY_COUNT_LIMIT, Integer.toString(deliveries),
                    "value must be at most 10");
        }
        int locks = values.intValue(GROUP_SHARE_PARTITION_MAX_RECORD_LOCKS, 100);
        if (locks > 10_000) {
            throw ConfigException.invalid(GROUP_SHARE_PARTITION_MAX_RECORD_LOCKS, Integer.toString(locks),
                    "value must be at most 10000");
        }
        return new SharePartitionConfig(lock, deliveries, locks, values.intValue(GROUP_SHARE_MAX_SHARE_SESSIONS, 1));
    }

    private static GroupConfig groupConfig(ValueParser values) {
        return new GroupConfig(values.intValue(GROUP_MIN_SESSION_TIMEOUT_MS, 0),
                values.intValue(GROUP_MAX_SESSION_TIMEOUT_MS, 0),
                values.intValue(GROUP_INITIAL_REBALANCE_DELAY_MS, 0),
                values.intValue(GROUP_MAX_SIZE, 1),
                values.intValue(OFFSETS_RETENTION_MINUTES, 1) * 60_000L,
                values.longValue(OFFSETS_RETENTION_CHECK_INTERVAL_MS, 1L),
                values.intValue(OFFSET_METADATA_MAX_BYTES, 0));
    }

    /** Kafka's {@code group.consumer.*} keys: their ranges, and an assignor's name or Kafka's class name. */
    private static ConsumerGroupConfig consumerGroupConfig(ValueParser values) {
        List<String> assignors = new ArrayList<>();
        for (String raw : values.string(ConsumerGroupConfig.ASSIGNORS).split(",")) {
            String name = raw.trim();
            if (name.isEmpty()) {
                continue;
            }
            String shortName = switch (name) {
                case "uniform", "org.apache.kafka.coordinator.group.assignor.UniformAssignor" -> "uniform";
                case "range", "org.apache.kafka.coordinator.group.assignor.RangeAssignor" -> "range";
                default -> throw ConfigException.invalid(ConsumerGroupConfig.ASSIGNORS, name,
                    "Cairn's server-side assignors are uniform and range");
            };
            if (!assignors.contains(shortName)) {
                assignors.add(shortName);
            }
        }
        try {
            return new ConsumerGroupConfig(values.intValue(ConsumerGroupConfig.SESSION_TIMEOUT_MS, 1),
                values.intValue(ConsumerGroupConfig.MIN_SESSION_TIMEOUT_MS, 1),
                values.intValue(ConsumerGroupConfig.MAX_SESSION_TIMEOUT_MS, 1),
                values.intValue(ConsumerGroupConfig.HEARTBEAT_INTERVAL_MS, 1),
                values.intValue(ConsumerGroupConfig.MIN_HEARTBEAT_INTERVAL_MS, 1),
                values.intValue(ConsumerGroupConfig.MAX_HEARTBEAT_INTERVAL_MS, 1),
                values.intValue(ConsumerGroupConfig.MAX_SIZE, 1), assignors,
                ConsumerGroupMigrationPolicy.parse(values.string(ConsumerGroupMigrationPolicy.KEY)),
                values.intValue(GROUP_MAX_SIZE, 1));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    /** Kafka's {@code group.share.*} keys of the group coordinator: their ranges, and the simple assignor only. */
    private static ShareGroupConfig shareGroupConfig(ValueParser values, long offsetsCommitTimeoutMs) {
        List<String> assignors = new ArrayList<>();
        for (String raw : values.string(ShareGroupConfig.ASSIGNORS).split(",")) {
            String name = raw.trim();
            if (name.isEmpty()) {
                continue;
            }
            if (!name.equals("simple") && !name.equals("org.apache.kafka.coordinator.group.assignor.SimpleAssignor")) {
                throw ConfigException.invalid(ShareGroupConfig.ASSIGNORS, name, "the only share group assignor is"
                    + " simple");
            }
            assignors.add("simple");
        }
        try {
            return new ShareGroupConfig(values.intValue(ShareGroupConfig.SESSION_TIMEOUT_MS, 1),
                values.intValue(ShareGroupConfig.MIN_SESSION_TIMEOUT_MS, 1),
                values.intValue(ShareGroupConfig.MAX_SESSION_TIMEOUT_MS, 1),
                values.intValue(ShareGroupConfig.HEARTBEAT_INTERVAL_MS, 1),
                values.intValue(ShareGroupConfig.MIN_HEARTBEAT_INTERVAL_MS, 1),
                values.intValue(ShareGroupConfig.MAX_HEARTBEAT_INTERVAL_MS, 1),
                values.intValue(ShareGroupConfig.MAX_SIZE, 1), assignors, 2 * offsetsCommitTimeoutMs,
                values.booleanValue(GROUP_SHARE_ENABLE));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    private static ConnectionLimits connectionLimits(Map<String, String> props, List<Endpoint> listeners) {
        try {
            return ConnectionLimits.parse(props, listeners.stream().map(Endpoint::listenerName).toList());
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    /** Keys present in the file or overrides that neither Kafka nor Cairn knows, sorted (Kafka WARNs each). */
    public Set<String> unknownKeys() {
        Set<String> unknown = new TreeSet<>();
        for (String key : originals.keySet()) {
            boolean authorizerKey = key.equals(SUPER_USERS) || key.equals(ALLOW_EVERYONE_IF_NO_ACL_FOUND);
            if (ConfigTable.get().broker(withoutListenerPrefix(key)).isEmpty()
                    && !(authorizer != null && authorizerKey)) {
                unknown.add(key);
            }
        }
        return unknown;
    }

    /** Keys present in the file or overrides that Kafka knows but Cairn does not act on, sorted. */
    public Set<String> notActedOnKeys() {
        Set<String> ignored = new TreeSet<>();
        for (String key : originals.keySet()) {
            ConfigTable.get().broker(withoutListenerPrefix(key)).filter(k -> k.support() == ConfigKey.Support.KNOWN)
                    .ifPresent(k -> ignored.add(key));
        }
        return ignored;
    }

    /**
     * {@code listener.name.<listener>.<key>} without its prefix (Kafka's per-listener override of {@code <key>}),
     * any other key as it is.
     */
    public static String withoutListenerPrefix(String key) {
        String prefix = "listener.name.";
        if (!key.startsWith(prefix)) {
            return key;
        }
        int dot = key.indexOf('.', prefix.length());
        if (dot < 0) {
            return key;
        }
        String rest = key.substring(dot + 1);
        // listener.name.<l>.<mechanism>.sasl.jaas.config, listener.name.<l>.<mechanism>.connections.max.reauth.ms:
        // a secondary prefix, stripped too when the rest is not a key itself (Kafka's valuesWithPrefixOverride).
        int mechanismDot = rest.indexOf('.');
        if (mechanismDot > 0 && ConfigTable.get().broker(rest).isEmpty()) {
            String withoutMechanism = rest.substring(mechanismDot + 1);
            if (ConfigTable.get().broker(withoutMechanism).isPresent()) {
                return withoutMechanism;
            }
        }
        return rest;
    }

    /** The effective value of every known key, for the startup log (Kafka logs "KafkaConfig values:"). */
    public Map<String, String> effectiveValues() {
        Map<String, String> values = new LinkedHashMap<>();
        values.put(ADVERTISED_LISTENERS, joined(advertisedListeners));
        values.put(BACKGROUND_THREADS, Integer.toString(backgroundThreads));
        values.put(NUM_RECOVERY_THREADS_PER_DATA_DIR, Integer.toString(numRecoveryThreadsPerDataDir));
        values.put(PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, Integer.toString(producerIdExpirationCheckIntervalMs));
        values.put(AUTO_CREATE_TOPICS_ENABLE, Boolean.toString(autoCreateTopicsEnable));
        values.put(TRANSACTION_PARTITION_VERIFICATION_ENABLE, Boolean.toString(transactionPartitionVerificationEnable));
        values.put(GROUP_SHARE_ENABLE, Boolean.toString(shareGroupConfig.enable()));
        values.put(BROKER_HEARTBEAT_INTERVAL_MS, Long.toString(brokerHeartbeatIntervalMs));
        values.put(BROKER_RACK, brokerRack == null ? "null" : brokerRack);
        values.put(CONNECTIONS_MAX_IDLE_MS, Long.toString(connectionsMaxIdleMs));
        values.put(CONTROLLER_LISTENER_NAMES, String.join(",", controllerListenerNames));
        values.put(FETCH_MAX_BYTES, Integer.toString(fetchMaxBytes));
        values.put(GROUP_COORDINATOR_APPEND_LINGER_MS, Integer.toString(groupCoordinatorRuntime.appendLingerMs()));
        values.put(GROUP_COORDINATOR_THREADS, Integer.toString(groupCoordinatorRuntime.threads()));
        values.put(GROUP_INITIAL_REBALANCE_DELAY_MS, Integer.toString(groupConfig.initialRebalanceDelayMs()));
        values.put(GROUP_MAX_SESSION_TIMEOUT_MS, Integer.toString(groupConfig.maxSessionTimeoutMs()));
        values.put(GROUP_MAX_SIZE, Integer.toString(groupConfig.maxGroupSize()));
        values.put(GROUP_MIN_SESSION_TIMEOUT_MS, Integer.toString(groupConfig.minSessionTimeoutMs()));
        values.put(LISTENERS, joined(listeners));
        values.put(LOG_FLUSH_INTERVAL_MESSAGES, Long.toString(logFlushIntervalMessages));
        if (originals.get(LOG_FLUSH_INTERVAL_MS) != null) {
            values.put(LOG_FLUSH_INTERVAL_MS, topicDefaults.get("flush.ms"));
        }
        values.put(LOG_FLUSH_SCHEDULER_INTERVAL_MS, Long.toString(logFlushSchedulerIntervalMs));
        values.put(LOG_RETENTION_CHECK_INTERVAL_MS, Long.toString(logRetentionCheckIntervalMs));
        values.put(LOG_DIRS, String.join(",", logDirs.stream().map(Path::toString).toList()));
        values.put(FETCH_SESSION_CACHE_SLOTS, Integer.toString(fetchSessionCacheSlots));
        values.put(REPLICA_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS,
                Long.toString(replicaHighWatermarkCheckpointIntervalMs));
        values.put(METRICS_ENABLED, Boolean.toString(metricsEnabled));
        values.put(METRICS_HOST, metricsHost);
        values.put(METRICS_PORT, Integer.toString(metricsPort));
        values.put(REPLICA_LAG_TIME_MAX_MS, Long.toString(replicaLagTimeMaxMs));
        values.put(REPLICA_SELECTOR_CLASS, rackAwareReplicaSelector ? RackAwareReplicaSelector.KAFKA_CLASS_NAME
                : "null");
        values.put(NODE_ID, Integer.toString(nodeId));
        values.put(NUM_IO_THREADS, Integer.toString(numIoThreads));
        values.put(NUM_NETWORK_THREADS, Integer.toString(numNetworkThreads));
        values.put(OFFSETS_COMMIT_TIMEOUT_MS, Long.toString(groupCoordinatorRuntime.writeTimeoutMs()));
        values.put(OFFSET_METADATA_MAX_BYTES, Integer.toString(groupConfig.offsetMetadataMaxBytes()));
        values.put(OFFSETS_RETENTION_CHECK_INTERVAL_MS, Long.toString(groupConfig.offsetsRetentionCheckIntervalMs()));
        values.put(OFFSETS_RETENTION_MINUTES, Long.toString(groupConfig.offsetsRetentionMs() / 60_000L));
        values.put(OFFSETS_TOPIC_NUM_PARTITIONS, Integer.toString(internalTopics.offsetsPartitions()));
        values.put(OFFSETS_TOPIC_REPLICATION_FACTOR, Integer.toString(internalTopics.offsetsReplication()));
        values.put(PROCESS_ROLES, String.join(",", processRoles.stream().map(ProcessRole::configName).toList()));
        values.put(QUEUED_MAX_REQUEST_BYTES, Long.toString(queuedMaxRequestBytes));
        values.put(QUEUED_MAX_REQUESTS, Integer.toString(queuedMaxRequests));
        values.put(SOCKET_LISTEN_BACKLOG_SIZE, Integer.toString(socketListenBacklogSize));
        values.put(QUOTA_WINDOW_NUM, Integer.toString(quotaWindow[0]));
        values.put(QUOTA_WINDOW_SIZE_SECONDS, Integer.toString(quotaWindow[1]));
        values.put(CONTROLLER_QUOTA_WINDOW_NUM, Integer.toString(quotaWindow[2]));
        values.put(CONTROLLER_QUOTA_WINDOW_SIZE_SECONDS, Integer.toString(quotaWindow[3]));
        values.put(SOCKET_RECEIVE_BUFFER_BYTES, Integer.toString(socketReceiveBufferBytes));
        values.put(SOCKET_REQUEST_MAX_BYTES, Integer.toString(socketRequestMaxBytes));
        values.put(SOCKET_SEND_BUFFER_BYTES, Integer.toString(socketSendBufferBytes));
        values.put(TRANSACTION_MAX_TIMEOUT_MS, Integer.toString(transactionConfig.maxTimeoutMs()));
        values.put(TRANSACTION_STATE_LOG_MIN_ISR, Integer.toString(transactionConfig.logMinIsr()));
        values.put(TRANSACTION_STATE_LOG_SEGMENT_BYTES, Integer.toString(transactionConfig.logSegmentBytes()));
        values.put(TRANSACTION_STATE_LOG_LOAD_BUFFER_SIZE, Integer.toString(transactionConfig.loadBufferSize()));
        values.put(TRANSACTION_ABORT_TIMED_OUT_CLEANUP_INTERVAL_MS,
                Long.toString(transactionConfig.abortTimedOutIntervalMs()));
        values.put(TRANSACTION_REMOVE_EXPIRED_CLEANUP_INTERVAL_MS,
                Long.toString(transactionConfig.removeExpiredIntervalMs()));
        values.put(TRANSACTIONAL_ID_EXPIRATION_MS, Long.toString(transactionConfig.transactionalIdExpirationMs()));
        ShareCoordinatorConfig share = shareCoordinatorConfig;
        values.put(SHARE_STATE_TOPIC_NUM_PARTITIONS, Integer.toString(share.numPartitions()));
        values.put(SHARE_STATE_TOPIC_REPLICATION_FACTOR, Short.toString(share.replicationFactor()));
        values.put(SHARE_STATE_TOPIC_MIN_ISR, Integer.toString(share.minIsr()));
        values.put(SHARE_STATE_TOPIC_SEGMENT_BYTES, Integer.toString(share.segmentBytes()));
        values.put(SHARE_SNAPSHOT_UPDATE_RECORDS_PER_SNAPSHOT, Integer.toString(share.updatesPerSnapshot()));
        values.put(SHARE_COORDINATOR_LOAD_BUFFER_SIZE, Integer.toString(share.loadBufferSize()));
        values.put(SHARE_COORDINATOR_THREADS, Integer.toString(share.runtime().threads()));
        values.put(SHARE_COORDINATOR_APPEND_LINGER_MS, Integer.toString(share.runtime().appendLingerMs()));
        values.put(SHARE_COORDINATOR_WRITE_TIMEOUT_MS, Long.toString(share.runtime().writeTimeoutMs()));
        values.put(GROUP_SHARE_RECORD_LOCK_DURATION_MS, Integer.toString(sharePartitionConfig.lockDurationMs()));
        values.put(GROUP_SHARE_DELIVERY_COUNT_LIMIT, Integer.toString(sharePartitionConfig.deliveryCountLimit()));
        values.put(GROUP_SHARE_PARTITION_MAX_RECORD_LOCKS, Integer.toString(sharePartitionConfig.maxRecordLocks()));
        values.put(GROUP_SHARE_MAX_SHARE_SESSIONS, Integer.toString(sharePartitionConfig.maxShareSessions()));
        replicaFetch.addTo(values);
        return values;
    }

    private static String joined(List<Endpoint> endpoints) {
        return String.join(",", endpoints.stream().map(Endpoint::toString).toList());
    }

    /**
     * Topic-config defaults set in this file through their broker synonyms ({@code log.segment.bytes},
     * {@code log.retention.hours}, {@code message.max.bytes}, ...), keyed by topic config name.
     */
    public Map<String, String> topicDefaults() {
        return topicDefaults;
    }

    /** {@code metrics.enabled}: whether the Prometheus endpoint is served (default true). */
    public boolean metricsEnabled() {
        return metricsEnabled;
    }

    /** {@code metrics.host}: the endpoint's bind host; empty (the default) for every interface. */
    public String metricsHost() {
        return metricsHost;
    }

    /** {@code metrics.port}: the endpoint's port (default 9404, Strimzi's); 0 picks a free port. */
    public int metricsPort() {
        return metricsPort;
    }

    /** Whether {@code metrics.port} was set, rather than left at Cairn's own default. */
    public boolean metricsPortSet() {
        return metricsPortSet;
    }

    /** {@code log.retention.check.interval.ms}: how often the retention pass runs (Kafka: 5 minutes). */
    public long logRetentionCheckIntervalMs() {
        return logRetentionCheckIntervalMs;
    }

    /**
     * {@code log.flush.scheduler.interval.ms}: how often the flusher looks for logs whose {@code flush.ms} has
     * passed; Kafka's default {@code Long.MAX_VALUE} never runs it.
     */
    public long logFlushSchedulerIntervalMs() {
        return logFlushSchedulerIntervalMs;
    }

    public Map<String, String> originals() {
        return originals;
    }

    public List<Endpoint> listeners() {
        return listeners;
    }

    /**
     * The listeners that speak the Kafka protocol: every entry of {@code listeners} except, on a controller, its
     * controller listeners, where the metadata quorum's Raft server listens (as KRaft's controller listener is where
     * the quorum is reached).
     */
    public List<Endpoint> kafkaListeners() {
        if (!processRoles.contains(ProcessRole.CONTROLLER)) {
            return listeners;
        }
        return listeners.stream().filter(endpoint -> !isControllerListener(endpoint.listenerName())).toList();
    }

    /**
     * The {@code ssl.*} settings of the controller listener (the first of {@code controller.listener.names}) when it
     * maps to SSL: the metadata quorum's TLS on every node, controller or broker-only; null when it is PLAINTEXT.
     */
    public SslSettings controllerSsl() {
        return controllerSsl;
    }

    /**
     * The SASL settings of the controller listener when it maps to SASL_PLAINTEXT or SASL_SSL (the quorum's links are
     * authenticated by the node's quorum front), else null.
     */
    public ControllerSasl controllerSasl() {
        return controllerSasl;
    }

    /** The resolved {@code ssl.*} settings of listener {@code listenerName}, or null when it is not an SSL one. */
    public SslSettings sslSettings(String listenerName) {
        return listenerSsl.get(listenerName);
    }

    /**
     * The SASL mechanism and credentials the inter-broker clients authenticate with ({@code
     * sasl.mechanism.inter.broker.protocol}, the inter-broker listener's JAAS {@code username}/{@code password}), or
     * null when the inter-broker listener is not a SASL one.
     */
    public SaslSettings.ClientCredentials interBrokerSasl() {
        return interBrokerSasl;
    }

    /** The resolved SASL settings of listener {@code listenerName}, or null when it is not a SASL one. */
    public SaslSettings saslSettings(String listenerName) {
        return listenerSasl.get(listenerName);
    }

    /**
     * The {@code ssl.*} settings the broker's own inter-broker clients (followers, marker sender, verifier) connect
     * with, as Kafka's: the inter-broker listener's, overrides included; null when that listener is not SSL.
     */
    public SslSettings interBrokerSsl() {
        return listenerSsl.get(replicaFetch.interBrokerListenerName());
    }

    public List<Endpoint> advertisedListeners() {
        return advertisedListeners;
    }

    public List<String> controllerListenerNames() {
        return controllerListenerNames;
    }

    /** True when {@code listenerName} serves the controller APIs ({@code controller.listener.names}). */
    public boolean isControllerListener(String listenerName) {
        return controllerListenerNames.contains(listenerName);
    }

    public int nodeId() {
        return nodeId;
    }

    public Set<ProcessRole> processRoles() {
        return processRoles;
    }

    public List<Path> logDirs() {
        return logDirs;
    }

    public int socketRequestMaxBytes() {
        return socketRequestMaxBytes;
    }

    /** SO_SNDBUF, or -1 for the operating system's default. */
    public int socketSendBufferBytes() {
        return socketSendBufferBytes;
    }

    /** SO_RCVBUF, or -1 for the operating system's default. */
    public int socketReceiveBufferBytes() {
        return socketReceiveBufferBytes;
    }

    public int socketListenBacklogSize() {
        return socketListenBacklogSize;
    }

    private static int[] quotaWindow(ValueParser values) {
        return new int[] {values.intValue(QUOTA_WINDOW_NUM, 1), values.intValue(QUOTA_WINDOW_SIZE_SECONDS, 1),
            values.intValue(CONTROLLER_QUOTA_WINDOW_NUM, 1), values.intValue(CONTROLLER_QUOTA_WINDOW_SIZE_SECONDS, 1)};
    }

    /** {@code controller.quota.window.num}: the samples of the controller mutation quota's burst (Kafka's 11). */
    public int controllerQuotaWindowNum() {
        return quotaWindow[2];
    }

    /** {@code controller.quota.window.size.seconds}: the length of one of those samples (Kafka's 1). */
    public int controllerQuotaWindowSizeSeconds() {
        return quotaWindow[3];
    }

    /** {@code quota.window.num}: the samples a client quota's rate keeps (Kafka's 11). */
    public int quotaWindowNum() {
        return quotaWindow[0];
    }

    /** {@code quota.window.size.seconds}: the length of one sample of a client quota's rate (Kafka's 1). */
    public int quotaWindowSizeSeconds() {
        return quotaWindow[1];
    }

    public int numNetworkThreads() {
        return numNetworkThreads;
    }

    /**
     * The network threads of listener {@code listenerName}: {@code listener.name.<l>.num.network.threads} where set
     * (Kafka sizes each listener's processors with its prefixed value), else {@code num.network.threads}.
     *
     * @throws ConfigException when the listener's value is not a number of at least 1
     */
    public int numNetworkThreads(String listenerName) {
        String key = SslSettings.listenerPrefix(listenerName) + NUM_NETWORK_THREADS;
        String value = originals.get(key);
        if (value == null || value.isBlank()) {
            return numNetworkThreads;
        }
        try {
            int threads = Integer.parseInt(value.trim());
            if (threads < 1) {
                throw ConfigException.invalid(key, value, "Value must be at least 1");
            }
            return threads;
        } catch (NumberFormatException e) {
            throw ConfigException.invalid(key, value, "Not a number of type INT");
        }
    }

    public int numIoThreads() {
        return numIoThreads;
    }

    /** {@code background.threads}: the threads of the broker's periodic and delayed tasks (Kafka's default 10). */
    public int backgroundThreads() {
        return backgroundThreads;
    }

    /**
     * {@code num.recovery.threads.per.data.dir}: the threads per log directory that load the logs at start and close
     * them at shutdown (Kafka's default 2).
     */
    public int numRecoveryThreadsPerDataDir() {
        return numRecoveryThreadsPerDataDir;
    }

    /**
     * {@code producer.id.expiration.check.interval.ms}: how often the logs drop producers idle for longer than
     * {@code producer.id.expiration.ms} (Kafka's default 10 minutes).
     */
    public int producerIdExpirationCheckIntervalMs() {
        return producerIdExpirationCheckIntervalMs;
    }

    public int queuedMaxRequests() {
        return queuedMaxRequests;
    }

    /** The bound on bytes of requests queued for handlers, or -1 for no bound (Kafka's default). */
    public long queuedMaxRequestBytes() {
        return queuedMaxRequestBytes;
    }

    /** Idle connections are closed after this many milliseconds; -1 disables it. */
    /** {@code log.cleaner.enable}, {@code .threads}, {@code .backoff.ms}, {@code .io.max.bytes.per.second}. */
    public CleanerSettings cleaner() {
        return cleaner;
    }

    /** {@code max.connections}, {@code max.connections.per.ip} (and overrides), per listener limits. */
    public ConnectionLimits connectionLimits() {
        return connectionLimits;
    }

    public long connectionsMaxIdleMs() {
        return connectionsMaxIdleMs;
    }

    /** broker.rack, or null when not set. */
    public String brokerRack() {
        return brokerRack;
    }

    /**
     * transaction.partition.verification.enable (Kafka default true): leaders ask the transaction coordinator whether
     * a transactional batch's partition is in the producer's transaction before appending it (KIP-890).
     */
    public boolean transactionPartitionVerificationEnable() {
        return transactionPartitionVerificationEnable;
    }

    /** The authorizer's settings, or null when {@code authorizer.class.name} is empty (every request allowed). */
    public AuthorizerSettings authorizer() {
        return authorizer;
    }

    /** auto.create.topics.enable (Kafka default true). */
    public boolean autoCreateTopicsEnable() {
        return autoCreateTopicsEnable;
    }

    /**
     * group.share.enable (internal, Kafka default false): share groups are served even while {@code share.version}
     * is 0 (see {@code io.cairn.broker.share.ShareGroupsGate}).
     */
    public boolean groupShareEnable() {
        return shareGroupConfig.enable();
    }

    /** broker.heartbeat.interval.ms (Kafka default 2000). */
    /** {@code fetch.max.bytes}: the most a consumer's fetch response may carry (55 MiB, at least 1024). */
    public int fetchMaxBytes() {
        return fetchMaxBytes;
    }

    /** {@code max.incremental.fetch.session.cache.slots}: how many fetch sessions the broker keeps (1000). */
    public int fetchSessionCacheSlots() {
        return fetchSessionCacheSlots;
    }

    /** {@code replica.high.watermark.checkpoint.interval.ms}: how often high watermarks are checkpointed (5000). */
    public long replicaHighWatermarkCheckpointIntervalMs() {
        return replicaHighWatermarkCheckpointIntervalMs;
    }

    /**
     * {@code replica.lag.time.max.ms}: how long an in-sync follower may go without catching up with the leader before
     * the leader removes it from the ISR (30000).
     */
    public long replicaLagTimeMaxMs() {
        return replicaLagTimeMaxMs;
    }

    /**
     * {@code replica.selector.class} names Kafka's {@code RackAwareReplicaSelector}: a leader sends consumers that name
     * a rack to an in-sync replica of that rack (KIP-392). False (unset) reads from leaders only.
     */
    public boolean rackAwareReplicaSelector() {
        return rackAwareReplicaSelector;
    }

    public long brokerHeartbeatIntervalMs() {
        return brokerHeartbeatIntervalMs;
    }

    /** The follower fetchers' settings ({@code num.replica.fetchers}, {@code replica.fetch.*}, the listener). */
    public ReplicaFetchSettings replicaFetch() {
        return replicaFetch;
    }

    /** The group coordinator's settings ({@code group.*}, {@code offsets.retention.*}, ...). */
    public GroupConfig groupConfig() {
        return groupConfig;
    }

    /** The KIP-848 consumer groups' settings ({@code group.consumer.*}). */
    public ConsumerGroupConfig consumerGroupConfig() {
        return consumerGroupConfig;
    }

    /** The share groups' settings on the group coordinator ({@code group.share.*} session, heartbeat, size). */
    public ShareGroupConfig shareGroupConfig() {
        return shareGroupConfig;
    }

    /** The group-level {@code share.*} configs (GROUP config resources): their defaults and checks. */
    public ShareGroupConfigs shareGroupConfigs() {
        ShareGroupConfigs made = shareGroupConfigs;
        if (made == null) {
            ValueParser values = new ValueParser(originals);
            made = new ShareGroupConfigs(shareGroupConfig, sharePartitionConfig,
                    values.intValue(GROUP_SHARE_MIN_RECORD_LOCK_DURATION_MS, 1000),
                    values.intValue(GROUP_SHARE_MAX_RECORD_LOCK_DURATION_MS, 1000));
            shareGroupConfigs = made;
        }
        return made;
    }

    /**
     * The group coordinator runtime's threads and batching ({@code group.coordinator.threads},
     * {@code group.coordinator.append.linger.ms}, {@code offsets.commit.timeout.ms}).
     */
    public CoordinatorRuntimeSettings groupCoordinatorRuntime() {
        return groupCoordinatorRuntime;
    }

    /** The transaction coordinator's settings. */
    public TransactionConfig transactionConfig() {
        return transactionConfig;
    }

    /** The share coordinator's settings ({@code share.coordinator.*}). */
    public ShareCoordinatorConfig shareCoordinatorConfig() {
        return shareCoordinatorConfig;
    }

    /** The share-partition leader's settings (group.share.record.lock.duration.ms and friends). */
    public SharePartitionConfig sharePartitionConfig() {
        return sharePartitionConfig;
    }

    /** Partitions and replication factor of the internal topics when Metadata auto-creates them. */
    public InternalTopicDefaults internalTopics() {
        return internalTopics;
    }

    /**
     * offsets.topic.num.partitions / offsets.topic.replication.factor and transaction.state.log.num.partitions /
     * transaction.state.log.replication.factor (Kafka defaults 50 and 3).
     *
     * @param offsetsPartitions       partitions of __consumer_offsets
     * @param offsetsReplication      replication factor of __consumer_offsets
     * @param transactionPartitions   partitions of __transaction_state
     * @param transactionReplication  replication factor of __transaction_state
     */
    public record InternalTopicDefaults(int offsetsPartitions, short offsetsReplication, int transactionPartitions,
                                        short transactionReplication) {
    }

    /** A role in {@code process.roles}. */
    public enum ProcessRole {
        BROKER,
        CONTROLLER;

        String configName() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Set<ProcessRole> parse(String key, String value) {
            Set<ProcessRole> roles = new TreeSet<>();
            for (String role : value.split(",")) {
                if (role.isBlank()) {
                    continue;
                }
                try {
                    roles.add(valueOf(role.trim().toUpperCase(Locale.ROOT)));
                } catch (IllegalArgumentException e) {
                    throw ConfigException.invalid(key, value, "roles must be broker and/or controller, got "
                            + role.trim() + " (valid: " + Arrays.toString(values()).toLowerCase(Locale.ROOT) + ")");
                }
            }
            if (roles.isEmpty()) {
                throw ConfigException.invalid(key, value, "at least one of broker, controller is required");
            }
            return Collections.unmodifiableSet(roles);
        }
    }
}
