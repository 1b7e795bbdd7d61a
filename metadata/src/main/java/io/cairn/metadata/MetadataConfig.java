package io.cairn.metadata;

import io.cairn.metadata.controller.ControllerSettings;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * The metadata settings of a node, read from {@code server.properties} with Kafka's key names:
 * {@code process.roles}, {@code node.id}, {@code controller.quorum.voters}, {@code controller.listener.names},
 * {@code metadata.log.dir} (falling back to the first of {@code log.dirs} / {@code log.dir}),
 * {@code broker.session.timeout.ms}, {@code broker.heartbeat.interval.ms}, {@code default.replication.factor},
 * {@code num.partitions}, {@code unclean.leader.election.enable}, {@code delete.topic.enable}, and the Raft tuning
 * keys {@code controller.quorum.election.timeout.ms} and {@code controller.quorum.request.timeout.ms}. A broker-only
 * node follows the log as a Ratis listener on {@code metadata.listener.port} (Cairn's own key, default: none, and
 * then the node reads through a client only). Immutable, thread-safe.
 *
 * @param roles                  the process roles ("broker", "controller")
 * @param nodeId                 node.id
 * @param voters                 the static controller quorum
 * @param controllerListenerNames controller.listener.names
 * @param metadataLogDir         where the metadata log, snapshots and meta.properties live
 * @param logDirs                log.dirs (formatted by the storage tool too)
 * @param controller             the settings the controller's decisions depend on
 * @param electionTimeoutMs      controller.quorum.election.timeout.ms (Kafka default 1000)
 * @param requestTimeoutMs       controller.quorum.request.timeout.ms (Kafka default 2000)
 * @param listenerHost           the host a broker-only node's metadata listener advertises
 * @param listenerPort           the port of a broker-only node's metadata listener, or -1
 * @param snapshotThreshold      entries between automatic snapshots (Cairn's metadata.snapshot.entries, 10000)
 */
public record MetadataConfig(Set<String> roles, int nodeId, List<QuorumVoter> voters,
                             List<String> controllerListenerNames, Path metadataLogDir, List<Path> logDirs,
                             ControllerSettings controller, long electionTimeoutMs, long requestTimeoutMs,
                             String listenerHost, int listenerPort, long snapshotThreshold) {

    public MetadataConfig {
        roles = Set.copyOf(roles);
        voters = List.copyOf(voters);
        controllerListenerNames = List.copyOf(controllerListenerNames);
        logDirs = List.copyOf(logDirs);
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

    public static MetadataConfig load(Path file) throws IOException {
        Properties props = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(reader);
        }
        return from(props);
    }

    public static MetadataConfig from(Map<?, ?> source) {
        Properties props = new Properties();
        props.putAll(source);
        Set<String> roles = new LinkedHashSet<>();
        for (String role : list(props.getProperty("process.roles", "broker,controller"))) {
            String normalized = role.toLowerCase(Locale.ROOT);
            if (!normalized.equals("broker") && !normalized.equals("controller")) {
                throw new IllegalArgumentException("Unknown process role '" + role + "' in process.roles");
            }
            roles.add(normalized);
        }
        if (roles.isEmpty()) {
            throw new IllegalArgumentException("process.roles must contain broker, controller or both");
        }
        int nodeId = Integer.parseInt(required(props, "node.id"));
        if (nodeId < 0) {
            throw new IllegalArgumentException("node.id must be >= 0, got " + nodeId);
        }
        List<QuorumVoter> voters = new ArrayList<>();
        for (String entry : list(required(props, "controller.quorum.voters"))) {
            voters.add(QuorumVoter.parse(entry));
        }
        if (roles.contains("controller") && voters.stream().noneMatch(v -> v.id() == nodeId)) {
            throw new IllegalArgumentException("A controller's node.id " + nodeId
                    + " must be one of controller.quorum.voters " + voters);
        }
        List<Path> logDirs = new ArrayList<>();
        for (String dir : list(props.getProperty("log.dirs", props.getProperty("log.dir", "/tmp/kafka-logs")))) {
            logDirs.add(Path.of(dir));
        }
        String metadataDir = props.getProperty("metadata.log.dir");
        Path metadataLogDir = metadataDir == null || metadataDir.isBlank() ? logDirs.get(0) : Path.of(metadataDir);
        ControllerSettings settings = new ControllerSettings(nodeId,
                Long.parseLong(props.getProperty("broker.session.timeout.ms", "9000")),
                Short.parseShort(props.getProperty("default.replication.factor", "1")),
                Integer.parseInt(props.getProperty("num.partitions", "1")),
                Boolean.parseBoolean(props.getProperty("unclean.leader.election.enable", "false")),
                Boolean.parseBoolean(props.getProperty("delete.topic.enable", "true")), 1000);
        return new MetadataConfig(roles, nodeId, voters,
                list(props.getProperty("controller.listener.names", "CONTROLLER")), metadataLogDir, logDirs,
                settings, Long.parseLong(props.getProperty("controller.quorum.election.timeout.ms", "1000")),
                Long.parseLong(props.getProperty("controller.quorum.request.timeout.ms", "2000")),
                props.getProperty("metadata.listener.host", "localhost"),
                Integer.parseInt(props.getProperty("metadata.listener.port", "-1")),
                Long.parseLong(props.getProperty("metadata.snapshot.entries", "10000")));
    }

    private static String required(Properties props, String key) {
        String value = props.getProperty(key);
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("Missing required configuration '" + key + "'");
        }
        return value.trim();
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
