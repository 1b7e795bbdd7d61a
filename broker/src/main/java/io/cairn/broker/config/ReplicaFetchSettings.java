package io.cairn.broker.config;

import io.cairn.isr.fetcher.ReplicaFetcherConfig;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The follower fetchers' keys of {@code server.properties} with Kafka's defaults and checks: {@code
 * num.replica.fetchers}, {@code replica.fetch.*}, {@code replica.socket.*}, and the inter-broker listener
 * ({@code inter.broker.listener.name}, or the listener named after {@code security.inter.broker.protocol},
 * PLAINTEXT by default; only one of the two may be set, and a broker must advertise it); as Kafka,
 * {@code replica.socket.timeout.ms} must be at least {@code replica.fetch.wait.max.ms}. Immutable.
 *
 * @param numFetchers              num.replica.fetchers (1)
 * @param fetchMaxBytes            replica.fetch.max.bytes (1048576)
 * @param fetchMinBytes            replica.fetch.min.bytes (1)
 * @param fetchWaitMaxMs           replica.fetch.wait.max.ms (500)
 * @param fetchBackoffMs           replica.fetch.backoff.ms (1000)
 * @param fetchResponseMaxBytes    replica.fetch.response.max.bytes (10485760)
 * @param socketTimeoutMs          replica.socket.timeout.ms (30000)
 * @param socketReceiveBufferBytes replica.socket.receive.buffer.bytes (65536; -1 for the OS default)
 * @param interBrokerListenerName  the listener followers fetch from
 */
public record ReplicaFetchSettings(int numFetchers, int fetchMaxBytes, int fetchMinBytes, int fetchWaitMaxMs,
                                   long fetchBackoffMs, int fetchResponseMaxBytes, int socketTimeoutMs,
                                   int socketReceiveBufferBytes, String interBrokerListenerName) {

    public static final String NUM_REPLICA_FETCHERS = "num.replica.fetchers";
    public static final String REPLICA_FETCH_MAX_BYTES = "replica.fetch.max.bytes";
    public static final String REPLICA_FETCH_MIN_BYTES = "replica.fetch.min.bytes";
    public static final String REPLICA_FETCH_WAIT_MAX_MS = "replica.fetch.wait.max.ms";
    public static final String REPLICA_FETCH_BACKOFF_MS = "replica.fetch.backoff.ms";
    public static final String REPLICA_FETCH_RESPONSE_MAX_BYTES = "replica.fetch.response.max.bytes";
    public static final String REPLICA_SOCKET_TIMEOUT_MS = "replica.socket.timeout.ms";
    public static final String REPLICA_SOCKET_RECEIVE_BUFFER_BYTES = "replica.socket.receive.buffer.bytes";
    public static final String INTER_BROKER_LISTENER_NAME = "inter.broker.listener.name";
    public static final String SECURITY_INTER_BROKER_PROTOCOL = "security.inter.broker.protocol";

    /**
     * Reads the keys; {@code advertised} are the broker's advertised listeners, checked to hold the inter-broker
     * listener when {@code broker} (Kafka's check).
     */
    static ReplicaFetchSettings parse(Map<String, String> props, ValueParser values, List<Endpoint> advertised,
                                      boolean broker) {
        String listener = props.get(INTER_BROKER_LISTENER_NAME);
        String protocol = props.get(SECURITY_INTER_BROKER_PROTOCOL);
        if (listener != null && !listener.isBlank() && protocol != null && !protocol.isBlank()) {
            throw ConfigException.invalid(INTER_BROKER_LISTENER_NAME, listener, "Only one of "
                    + INTER_BROKER_LISTENER_NAME + " and " + SECURITY_INTER_BROKER_PROTOCOL + " should be set.");
        }
        String name = listener != null && !listener.isBlank() ? listener.trim().toUpperCase(Locale.ROOT)
                : SecurityProtocol.parse(SECURITY_INTER_BROKER_PROTOCOL, protocol == null || protocol.isBlank()
                        ? "PLAINTEXT" : protocol).name();
        if (broker && advertised.stream().noneMatch(e -> e.listenerName().equals(name))) {
            throw ConfigException.invalid(INTER_BROKER_LISTENER_NAME, name, INTER_BROKER_LISTENER_NAME
                    + " must be a listener name defined in " + BrokerConfig.ADVERTISED_LISTENERS + ". The valid "
                    + "options based on currently configured listeners are "
                    + String.join(",", advertised.stream().map(Endpoint::listenerName).toList()));
        }
        int waitMaxMs = values.intValue(REPLICA_FETCH_WAIT_MAX_MS, 0);
        int socketTimeoutMs = values.intValue(REPLICA_SOCKET_TIMEOUT_MS, 0);
        if (waitMaxMs > socketTimeoutMs) {
            throw ConfigException.invalid(REPLICA_SOCKET_TIMEOUT_MS, socketTimeoutMs, REPLICA_SOCKET_TIMEOUT_MS
                    + " should always be at least " + REPLICA_FETCH_WAIT_MAX_MS
                    + " to prevent unnecessary socket timeouts");
        }
        return new ReplicaFetchSettings(values.intValue(NUM_REPLICA_FETCHERS, 1),
                values.intValue(REPLICA_FETCH_MAX_BYTES, 0),
                values.intValue(REPLICA_FETCH_MIN_BYTES, 0), waitMaxMs,
                values.longValue(REPLICA_FETCH_BACKOFF_MS, 0L),
                values.intValue(REPLICA_FETCH_RESPONSE_MAX_BYTES, 0), socketTimeoutMs,
                values.intValue(REPLICA_SOCKET_RECEIVE_BUFFER_BYTES, -1),
                name);
    }

    /** The fetchers' settings; {@code messageMaxBytes} (the broker's default) bounds a response's first batch. */
    public ReplicaFetcherConfig toFetcherConfig(int messageMaxBytes) {
        return ReplicaFetcherConfig.of(numFetchers, fetchMaxBytes, fetchMinBytes, fetchWaitMaxMs, fetchBackoffMs,
                fetchResponseMaxBytes, socketTimeoutMs, socketReceiveBufferBytes, messageMaxBytes);
    }

    /** The effective values, for the startup log. */
    void addTo(Map<String, String> values) {
        values.put(NUM_REPLICA_FETCHERS, Integer.toString(numFetchers));
        values.put(REPLICA_FETCH_MAX_BYTES, Integer.toString(fetchMaxBytes));
        values.put(REPLICA_FETCH_MIN_BYTES, Integer.toString(fetchMinBytes));
        values.put(REPLICA_FETCH_WAIT_MAX_MS, Integer.toString(fetchWaitMaxMs));
        values.put(REPLICA_FETCH_BACKOFF_MS, Long.toString(fetchBackoffMs));
        values.put(REPLICA_FETCH_RESPONSE_MAX_BYTES, Integer.toString(fetchResponseMaxBytes));
        values.put(REPLICA_SOCKET_TIMEOUT_MS, Integer.toString(socketTimeoutMs));
        values.put(REPLICA_SOCKET_RECEIVE_BUFFER_BYTES, Integer.toString(socketReceiveBufferBytes));
        values.put(INTER_BROKER_LISTENER_NAME, interBrokerListenerName);
    }
}
