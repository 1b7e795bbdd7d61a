package io.cairn.testkit;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One combined (broker and controller) node of a KRaft cluster as {@link BrokerCluster} lays it out: its id, its client
 * (PLAINTEXT) and controller ports on loopback, the static {@code controller.quorum.voters} of the whole cluster, and
 * the cluster id every node is formatted with.
 *
 * @param nodeId         node.id
 * @param clientPort     the PLAINTEXT listener's port
 * @param controllerPort the CONTROLLER listener's port, where the quorum is reached
 * @param voters         controller.quorum.voters, {@code id@host:port,...}
 * @param clusterId      the cluster id of {@code format}
 */
public record ClusterNode(int nodeId, int clientPort, int controllerPort, String voters, String clusterId) {

    /**
     * The node's {@code server.properties} as Kafka's KRaft documentation writes a combined node, with
     * {@code logDirs} as {@code log.dirs}, in file order; the harness's own defaults and the scenario's overrides are
     * put over it.
     */
    Map<String, String> serverProperties(String host, String logDirs) {
        Map<String, String> config = new LinkedHashMap<>();
        config.put("process.roles", "broker,controller");
        config.put("node.id", Integer.toString(nodeId));
        config.put("controller.quorum.voters", voters);
        config.put("listeners", "PLAINTEXT://" + host + ":" + clientPort + ",CONTROLLER://" + host + ":"
                + controllerPort);
        config.put("advertised.listeners", "PLAINTEXT://" + host + ":" + clientPort);
        config.put("controller.listener.names", "CONTROLLER");
        config.put("inter.broker.listener.name", "PLAINTEXT");
        config.put("listener.security.protocol.map", "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT");
        config.put("log.dirs", logDirs);
        return config;
    }
}
