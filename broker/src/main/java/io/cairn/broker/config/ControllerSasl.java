package io.cairn.broker.config;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The settings of a controller listener that {@code listener.security.protocol.map} maps to SASL_PLAINTEXT or
 * SASL_SSL, read from Kafka's keys as a KRaft node reads them: every node authenticates to the quorum with {@code
 * sasl.mechanism.controller.protocol} (Kafka's default GSSAPI) and the {@code username} and {@code password} options
 * of that mechanism's login module on the controller listener ({@code listener.name.<controller>.<mechanism>.
 * sasl.jaas.config}), and checks the credentials of the nodes that reach it with the same module (PLAIN's {@code
 * user_<name>} options). Cairn's quorum authenticates with PLAIN: SCRAM credentials live in the metadata the quorum
 * has to form first, and its nodes have no OAUTHBEARER token source. Every node serves one mechanism there, the
 * controller protocol's; a broker-only node needs the same login module, since it serves the metadata log on its
 * metadata listener and the active controller authenticates to it. With SASL_SSL the listener's {@code ssl.*}
 * settings secure the links too (a key store on every node). Immutable.
 *
 * @param listenerName the controller listener (the first of {@code controller.listener.names})
 * @param server       what the node's quorum address accepts (the controller mechanism alone)
 * @param client       what the node authenticates to its peers with
 * @param ssl          the listener's TLS settings for SASL_SSL, null for SASL_PLAINTEXT
 * @param superUsers   with an authorizer set, the principals (Kafka's {@code super.users}) that may reach the quorum;
 *                     null without an authorizer, when every authenticated principal may
 */
public record ControllerSasl(String listenerName, SaslSettings server, SaslSettings.ClientCredentials client,
                             SslSettings ssl, List<String> superUsers) {

    /** Kafka's key for the mechanism every node authenticates to the controller listener with. */
    public static final String MECHANISM_CONTROLLER_PROTOCOL = "sasl.mechanism.controller.protocol";

    /**
     * The settings of the controller listener {@code name} mapped to {@code protocol}, or null when it is not SASL.
     *
     * @throws ConfigException naming the key whose value Cairn cannot serve
     */
    public static ControllerSasl of(Map<String, String> props, String name, SecurityProtocol protocol,
            AuthorizerSettings authorizer) {
        if (protocol != SecurityProtocol.SASL_PLAINTEXT && protocol != SecurityProtocol.SASL_SSL) {
            return null;
        }
        String mechanism = props.getOrDefault(MECHANISM_CONTROLLER_PROTOCOL, "GSSAPI").trim();
        if (!SaslSettings.PLAIN.equals(mechanism)) {
            throw ConfigException.invalid(MECHANISM_CONTROLLER_PROTOCOL, mechanism, "the controller listener " + name
                    + " maps to " + protocol + ", and Cairn's metadata quorum authenticates with PLAIN only (SCRAM "
                    + "credentials are kept in the metadata the quorum must form first; Kafka's default is GSSAPI):"
                    + " set " + MECHANISM_CONTROLLER_PROTOCOL + "=PLAIN and the listener's "
                    + SslSettings.listenerPrefix(name) + "plain." + SaslSettings.JAAS_CONFIG);
        }
        Map<String, String> served = new HashMap<>(props);
        served.put(SslSettings.listenerPrefix(name) + SaslSettings.ENABLED_MECHANISMS, mechanism);
        SaslSettings server = SaslSettings.forListener(served, name);
        SaslSettings.ClientCredentials client = SaslSettings.client(props, server, mechanism,
                MECHANISM_CONTROLLER_PROTOCOL);
        SslSettings ssl = null;
        if (protocol == SecurityProtocol.SASL_SSL) {
            ssl = SslSettings.forListener(props, name);
            if (!ssl.hasKeystore()) {
                throw ConfigException.invalid(ssl.keyOf(SslSettings.KEYSTORE_LOCATION), null, "the SASL_SSL "
                        + "controller listener " + name + " needs a key store on every node (a broker-only node "
                        + "serves the metadata log to the controllers over TLS too): set "
                        + SslSettings.KEYSTORE_LOCATION + " and " + SslSettings.KEYSTORE_PASSWORD
                        + ", globally or with the prefix " + SslSettings.listenerPrefix(name));
            }
        }
        return new ControllerSasl(name, server, client, ssl,
                authorizer == null ? null : List.copyOf(authorizer.superUsers()));
    }

    /** Whether {@code principal} ({@code User:name}) may reach the quorum. */
    public boolean admits(String principal) {
        return superUsers == null || superUsers.contains(principal);
    }

    @Override
    public String toString() {
        return (ssl == null ? "SASL_PLAINTEXT" : "SASL_SSL") + " with SASL/" + client.mechanism() + " as "
                + client.username() + " (listener " + listenerName + ")";
    }
}
