package io.cairn.metadata;

import io.cairn.metadata.config.ConfigTable;
import io.cairn.metadata.config.ServerProperties;
import io.cairn.metadata.controller.ControllerSettings;
import io.cairn.metadata.controller.DelegationTokenSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The metadata settings of a node, built from the parsed {@code server.properties} the broker reads too
 * ({@link ServerProperties}) with Kafka's key names, types, rules and the defaults a Cairn node takes
 * ({@link ConfigTable#serverDefault}; a value that fails its key's rule is an IllegalArgumentException with Kafka's
 * message):
 * {@code process.roles}, {@code node.id}, {@code controller.quorum.voters} or
 * {@code controller.quorum.bootstrap.servers} (KIP-853: then the voters come from the storage formatted with
 * {@code --standalone} or {@code --initial-controllers}, see {@link BootstrapVoters}),
 * {@code controller.listener.names} with the controller's entries of {@code listeners} and
 * {@code advertised.listeners} (a controller's Raft server binds its controller listener, as KRaft's does),
 * {@code metadata.log.dir} (falling back to the first of {@code log.dirs} / {@code log.dir}),
 * {@code broker.session.timeout.ms}, {@code broker.heartbeat.interval.ms}, {@code default.replication.factor},
 * {@code num.partitions}, {@code unclean.leader.election.enable}, {@code delete.topic.enable},
 * {@code auto.leader.rebalance.enable}, {@code leader.imbalance.check.interval.seconds},
 * {@code unclean.leader.election.interval.ms}, and the Raft tuning
 * keys {@code controller.quorum.election.timeout.ms} and {@code controller.quorum.request.timeout.ms}. A broker-only
 * node follows the log as a Ratis listener on {@code metadata.listener.port} (Cairn's own key, default: none, and
 * then the node reads through a client only). The quorum speaks the protocol {@code listener.security.protocol.map}
 * gives the controller listener: PLAINTEXT, or SSL with the stores the broker loads and hands over with
 * {@link #withTls} (see {@link QuorumTls}). Immutable, thread-safe.
 *
 * @param roles                  the process roles ("broker", "controller")
 * @param nodeId                 node.id
 * @param voters                 the controller quorum: controller.quorum.voters, or empty until {@link #withVoters}
 *                               gives the formatted one
 * @param bootstrapServers       controller.quorum.bootstrap.servers, {@code host:port} entries
 * @param controllerBind         where a controller's Raft server binds: its controller listener in {@code listeners}
 *                               (host empty for every interface), or null to bind its voter port on every interface
 * @param controllerAdvertised   the address other nodes reach this controller at: its controller listener in
 *                               {@code advertised.listeners}, else in {@code listeners}; null when it has none
 * @param controllerListenerNames controller.listener.names
 * @param metadataLogDir         where the metadata log, snapshots and meta.properties live
 * @param logDirs                log.dirs (formatted by the storage tool too)
 * @param controller             the settings the controller's decisions depend on
 * @param electionTimeoutMs      controller.quorum.election.timeout.ms (Kafka default 1000)
 * @param requestTimeoutMs       controller.quorum.request.timeout.ms (Kafka default 2000)
 * @param listenerHost           the host a broker-only node's metadata listener advertises
 * @param listenerPort           the port of a broker-only node's metadata listener, or -1
 * @param snapshotThreshold      entries between automatic snapshots (Cairn's metadata.snapshot.entries, 10000)
 * @param logSegmentBytes        the metadata log's segment size when internal.metadata.log.segment.bytes sets it
 *                               (Kafka's test-only key, without metadata.log.segment.bytes' lower bound), else 0: the
 *                               Raft log's own (32 MiB)
 * @param controllerSecurityProtocol what listener.security.protocol.map maps the first controller listener name to
 *                               (PLAINTEXT when the map does not name it)
 * @param tls                    the stores of an SSL controller listener, or null until {@link #withTls} gives them
 */
public record MetadataConfig(Set<String> roles, int nodeId, List<QuorumVoter> voters, List<String> bootstrapServers,
                             Address controllerBind, Address controllerAdvertised,
                             List<String> controllerListenerNames, Path metadataLogDir, List<Path> logDirs,
                             ControllerSettings controller, long electionTimeoutMs, long requestTimeoutMs,
                             String listenerHost, int listenerPort, long snapshotThreshold, long logSegmentBytes,
                             String controllerSecurityProtocol, QuorumTls tls) {

    public MetadataConfig {
        roles = Set.copyOf(roles);
        voters = List.copyOf(voters);
        bootstrapServers = List.copyOf(bootstrapServers);
        controllerListenerNames = List.copyOf(controllerListenerNames);
        logDirs = List.copyOf(logDirs);
    }

    /** A host and port of a listener; the host is empty for "every interface". */
    public record Address(String host, int port) {

        /** The host to connect to: "localhost" for a wildcard host. */
        public String connectHost() {
            return host.isEmpty() || "0.0.0.0".equals(host) || "::".equals(host) ? "localhost" : host;
        }

        @Override
        public String toString() {
            return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** One entry of controller.quorum.voters. */
    public record QuorumVoter(int id, String host, int port) {

        /** Parses {@code id@host:port}. */
        public static QuorumVoter parse(String text) {
            String entry = text.trim();
            int at = entry.indexOf('@');
            int colon = entry.lastIndexOf(':');
            if (at <= 0 || colon < at) {
                throw new IllegalArgumentException("Invalid controller.quorum.voters entry '" + entry
                        + "': expected id@host:port");
            }
            try {
                String host = entry.substring(at + 1, colon);
                if (host.startsWith("[") && host.endsWith("]")) {
                    host = host.substring(1, host.length() - 1);
                }
                return new QuorumVoter(Integer.parseInt(entry.substring(0, at)), host,
                        Integer.parseInt(entry.substring(colon + 1)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("Invalid controller.quorum.voters entry '" + entry + "'", e);
            }
        }

        @Override
        public String toString() {
            return id + "@" + host + ":" + port;
        }
    }

    public boolean isController() {
        return roles.contains("controller");
    }

    public boolean isBroker() {
        return roles.contains("broker");
    }

    /** True when this node is a controller and the only voter: it may format itself on first start. */
    public boolean isSoleVoter() {
        return isController() && voters.size() == 1 && voters.get(0).id() == nodeId;
    }

    /**
     * True when this controller's only bootstrap server is its own controller listener (Kafka's sample single-node
     * {@code server.properties}): the quorum is this node alone, as {@code kafka-storage format --standalone} makes it.
     */
    public boolean isStandaloneBootstrap() {
        if (!isController() || !voters.isEmpty() || bootstrapServers.size() != 1 || controllerAdvertised == null) {
            return false;
        }
        String server = bootstrapServers.get(0);
        int colon = server.lastIndexOf(':');
        return colon > 0 && server.substring(colon + 1).equals(Integer.toString(controllerAdvertised.port()));
    }

    /** This node alone as the voter, at its advertised controller listener (kafka-storage format --standalone). */
    public QuorumVoter standaloneVoter() {
        if (!isController() || controllerAdvertised == null) {
            throw new IllegalArgumentException("--standalone needs a controller whose listeners include one of "
                    + "controller.listener.names " + controllerListenerNames);
        }
        return new QuorumVoter(nodeId, controllerAdvertised.connectHost(), controllerAdvertised.port());
    }

    /** The same settings with {@code quorum} as the voters (the formatted voter set of a bootstrap-servers node). */
    public MetadataConfig withVoters(List<QuorumVoter> quorum) {
        MetadataConfig config = new MetadataConfig(roles, nodeId, quorum, bootstrapServers, controllerBind,
                controllerAdvertised, controllerListenerNames, metadataLogDir, logDirs, controller, electionTimeoutMs,
                requestTimeoutMs, listenerHost, listenerPort, snapshotThreshold, logSegmentBytes,
                controllerSecurityProtocol, tls);
        config.validateVoters(true);
        return config;
    }

    /** The same settings with {@code quorumTls} securing the quorum's links (an SSL controller listener). */
    public MetadataConfig withTls(QuorumTls quorumTls) {
        return new MetadataConfig(roles, nodeId, voters, bootstrapServers, controllerBind, controllerAdvertised,
                controllerListenerNames, metadataLogDir, logDirs, controller, electionTimeoutMs, requestTimeoutMs,
                listenerHost, listenerPort, snapshotThreshold, logSegmentBytes, controllerSecurityProtocol, quorumTls);
    }

    /**
     * Checks that the quorum can speak the controller listener's protocol: PLAINTEXT, SSL with its stores given
     * ({@link #withTls}), or SASL_PLAINTEXT and SASL_SSL with a {@link QuorumFront} that authenticates the links (and
     * does their TLS: no stores are given to the transport then).
     *
     * @param fronted whether a front authenticates the quorum's links
     * @throws IllegalArgumentException naming listener.security.protocol.map when it cannot
     */
    public void checkControllerSecurity(boolean fronted) {
        String key = "listener.security.protocol.map";
        String name = controllerListenerNames.isEmpty() ? "CONTROLLER" : controllerListenerNames.get(0);
        switch (controllerSecurityProtocol) {
            case "PLAINTEXT" -> {
                if (tls != null) {
                    throw new IllegalArgumentException("TLS stores were given for the controller listener " + name
                            + ", which " + key + " maps to PLAINTEXT");
                }
            }
            case "SSL" -> {
                if (tls == null) {
                    throw new IllegalArgumentException(key + " maps the controller listener " + name + " to SSL, "
                            + "but no key and trust stores were given to the metadata node: cairn-server reads them "
                            + "from listener.name." + name.toLowerCase(Locale.ROOT) + ".ssl.* and ssl.*");
                }
            }
            case "SASL_PLAINTEXT", "SASL_SSL" -> {
                if (!fronted || tls != null) {
                    throw new IllegalArgumentException(key + " maps the controller listener " + name + " to "
                            + controllerSecurityProtocol + ", but the metadata node was given "
                            + (fronted ? "TLS stores for its transport" : "nothing to authenticate its links with"));
                }
            }
            default -> throw new IllegalArgumentException("Invalid value " + name + ":" + controllerSecurityProtocol
                    + " for configuration " + key + ": the controller listener speaks PLAINTEXT, SSL, SASL_PLAINTEXT "
                    + "or SASL_SSL");
        }
        if (fronted && !controllerSecurityProtocol.startsWith("SASL_")) {
            throw new IllegalArgumentException("A front authenticates the quorum's links, but " + key + " maps the "
                    + "controller listener " + name + " to " + controllerSecurityProtocol);
        }
    }

    /**
     * The port a controller's Raft server binds: its controller listener's, or its voter entry's when the listener
     * has none (or port 0). Only for a controller whose voters are known.
     */
    public int controllerBindPort() {
        if (controllerBind != null && controllerBind.port() != 0) {
            return controllerBind.port();
        }
        return voters.stream().filter(v -> v.id() == nodeId).findFirst().orElseThrow().port();
    }

    /**
     * Checks that a controller is one of the voters. The voter set formatted from {@code --initial-controllers} must
     * also name this controller at its controller listener's port, as the formatted set is what this controller
     * announces. A static {@code controller.quorum.voters} entry may name another address, as Kafka allows: it is
     * where the other nodes reach this controller (a proxy or a NAT in between), while the Raft server binds the
     * controller listener.
     */
    private void validateVoters(boolean formatted) {
        if (!isController() || voters.isEmpty()) {
            return;
        }
        QuorumVoter self = voters.stream().filter(v -> v.id() == nodeId).findFirst().orElseThrow(() ->
                new IllegalArgumentException("A controller's node.id " + nodeId + " must be one of the voters "
                        + voters));
        if (formatted && controllerBind != null && controllerBind.port() != 0
                && controllerBind.port() != self.port()) {
            throw new IllegalArgumentException("The voters give node " + nodeId + " the address " + self.host()
                    + ":" + self.port() + " but its controller listener binds port " + controllerBind.port()
                    + "; the formatted voters announce the controller listener, so the two must agree");
        }
    }

    /** Reads {@code file} with the one reader of server.properties ({@link ServerProperties}). */
    public static MetadataConfig load(Path file) throws IOException {
        return from(ServerProperties.load(file, Map.of()));
    }

    public static MetadataConfig from(Map<?, ?> source) {
        return from(ServerProperties.of(source));
    }

    /**
     * The metadata settings of the parsed {@code props}, with the defaults the broker takes
     * ({@link ConfigTable#serverDefault}: Cairn's {@code ./data} log directory, node 1, a combined node).
     */
    public static MetadataConfig from(ServerProperties props) {
        props.firstInvalid().ifPresent(message -> {
            throw new IllegalArgumentException(message);
        });
        Set<String> roles = new LinkedHashSet<>();
        for (String role : list(setting(props, "process.roles"))) {
            String normalized = role.toLowerCase(Locale.ROOT);
            if (!normalized.equals("broker") && !normalized.equals("controller")) {
                throw new IllegalArgumentException("Unknown process role '" + role + "' in process.roles");
            }
            roles.add(normalized);
        }
        if (roles.isEmpty()) {
            throw new IllegalArgumentException("process.roles must contain broker, controller or both");
        }
        int nodeId = Integer.parseInt(setting(props, "node.id"));
        if (nodeId < 0) {
            throw new IllegalArgumentException("node.id must be >= 0, got " + nodeId);
        }
        List<QuorumVoter> voters = new ArrayList<>();
        for (String entry : list(setting(props, "controller.quorum.voters"))) {
            voters.add(QuorumVoter.parse(entry));
        }
        List<String> bootstrapServers = list(setting(props, "controller.quorum.bootstrap.servers"));
        if (voters.isEmpty() && bootstrapServers.isEmpty()) {
            throw new IllegalArgumentException("Missing required configuration: controller.quorum.voters or "
                    + "controller.quorum.bootstrap.servers must name the controllers");
        }
        List<String> controllerListenerNames = list(setting(props, "controller.listener.names"))
                .stream().map(name -> name.toUpperCase(Locale.ROOT)).toList();
        Address bind = null;
        Address advertised = null;
        if (roles.contains("controller")) {
            bind = controllerAddress(setting(props, "listeners"), controllerListenerNames);
            advertised = controllerAddress(setting(props, "advertised.listeners"), controllerListenerNames);
            if (advertised == null) {
                advertised = bind;
            }
        }
        List<Path> logDirs = props.logDirs();
        String metadataDir = props.get("metadata.log.dir");
        Path metadataLogDir = metadataDir == null || metadataDir.isBlank() ? logDirs.get(0) : Path.of(metadataDir);
        ControllerSettings settings = new ControllerSettings(nodeId,
                Long.parseLong(setting(props, "broker.session.timeout.ms")),
                Short.parseShort(setting(props, "default.replication.factor")),
                Integer.parseInt(setting(props, "num.partitions")),
                Boolean.parseBoolean(setting(props, "unclean.leader.election.enable")),
                Boolean.parseBoolean(setting(props, "delete.topic.enable")), 1000,
                leaderImbalanceCheckIntervalMs(props), uncleanLeaderElectionIntervalMs(props),
                Integer.parseInt(setting(props, "min.insync.replicas")), delegationTokens(props));
        MetadataConfig config = new MetadataConfig(roles, nodeId, voters, bootstrapServers, bind, advertised,
                controllerListenerNames, metadataLogDir, logDirs,
                settings, Long.parseLong(setting(props, "controller.quorum.election.timeout.ms")),
                Long.parseLong(setting(props, "controller.quorum.request.timeout.ms")),
                setting(props, "metadata.listener.host"),
                Integer.parseInt(setting(props, "metadata.listener.port")),
                Long.parseLong(setting(props, "metadata.snapshot.entries")), logSegmentBytes(props),
                controllerSecurityProtocol(props, controllerListenerNames), null);
        config.validateVoters(false);
        return config;
    }

    /**
     * The {@code delegation.token.*} keys. Kafka 4.0 removed the old alias {@code delegation.token.master.key}, so
     * as in Kafka 4.1 it is an unknown key and does not enable tokens.
     */
    public static DelegationTokenSettings delegationTokens(Map<?, ?> source) {
        return delegationTokens(ServerProperties.of(source));
    }

    private static DelegationTokenSettings delegationTokens(ServerProperties props) {
        String secret = props.get("delegation.token.secret.key");
        return new DelegationTokenSettings(secret == null || secret.isEmpty() ? null : secret,
                Long.parseLong(setting(props, "delegation.token.max.lifetime.ms")),
                Long.parseLong(setting(props, "delegation.token.expiry.time.ms")),
                Long.parseLong(setting(props, "delegation.token.expiry.check.interval.ms")));
    }

    /**
     * {@code leader.imbalance.check.interval.seconds} (300, at least 1 as the table checks) in ms when
     * {@code auto.leader.rebalance.enable} (true), else -1.
     */
    private static long leaderImbalanceCheckIntervalMs(ServerProperties props) {
        if (!Boolean.parseBoolean(setting(props, "auto.leader.rebalance.enable"))) {
            return -1;
        }
        return Long.parseLong(setting(props, "leader.imbalance.check.interval.seconds")) * 1000;
    }

    /** {@code unclean.leader.election.interval.ms} (300000, at least 1 as the table checks). */
    private static long uncleanLeaderElectionIntervalMs(ServerProperties props) {
        return Long.parseLong(setting(props, "unclean.leader.election.interval.ms"));
    }

    /**
     * What listener.security.protocol.map maps the first controller listener name to, upper case; PLAINTEXT when the
     * map is not set (Kafka's KRaft default for controller listeners) or does not name it.
     */
    private static String controllerSecurityProtocol(ServerProperties props, List<String> controllerListenerNames) {
        String map = props.get("listener.security.protocol.map");
        if (map == null || controllerListenerNames.isEmpty()) {
            return "PLAINTEXT";
        }
        for (String entry : list(map)) {
            int colon = entry.indexOf(':');
            if (colon > 0 && entry.substring(0, colon).trim().equalsIgnoreCase(controllerListenerNames.get(0))) {
                return entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
            }
        }
        return "PLAINTEXT";
    }

    /** The first entry of a listeners list whose name is a controller listener name, or null. */
    private static Address controllerAddress(String listeners, List<String> controllerListenerNames) {
        for (String name : controllerListenerNames) {
            for (String entry : list(listeners)) {
                int scheme = entry.indexOf("://");
                int colon = entry.lastIndexOf(':');
                if (scheme <= 0 || colon <= scheme + 2 || !entry.substring(0, scheme).equalsIgnoreCase(name)) {
                    continue;
                }
                String host = entry.substring(scheme + 3, colon);
                if (host.startsWith("[") && host.endsWith("]")) {
                    host = host.substring(1, host.length() - 1);
                }
                try {
                    return new Address(host, Integer.parseInt(entry.substring(colon + 1)));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("Invalid listener '" + entry + "': the port is not a number", e);
                }
            }
        }
        return null;
    }

    /** internal.metadata.log.segment.bytes when set (at least 1), else 0. */
    private static long logSegmentBytes(ServerProperties props) {
        String value = setting(props, "internal.metadata.log.segment.bytes");
        if (value.isEmpty()) {
            return 0;
        }
        long bytes = Long.parseLong(value);
        if (bytes < 1) {
            throw new IllegalArgumentException("Invalid value " + value
                    + " for configuration internal.metadata.log.segment.bytes: it must be at least 1");
        }
        return bytes;
    }

    /** The value of {@code key}, trimmed, or the default a Cairn node takes ({@code ""} for a null default). */
    private static String setting(ServerProperties props, String key) {
        String value = props.value(key);
        return value == null ? "" : value;
    }

    private static List<String> list(String value) {
        List<String> items = new ArrayList<>();
        for (String item : value.split(",")) {
            if (!item.isBlank()) {
                items.add(item.trim());
            }
        }
        return items;
    }
}
