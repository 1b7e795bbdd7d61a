package io.cairn.testkit;

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
     * {@code logDirs} as {@code log.dirs}; the harness's own defaults and the scenario's overrides come after it.
     */
    String serverProperties(String host, String logDirs) {
        return String.join("\n",
                "process.roles=broker,controller",
                "node.id=" + nodeId,
                "controller.quorum.voters=" + voters,
                "listeners=PLAINTEXT://" + host + ":" + clientPort + ",CONTROLLER://" + host + ":" + controllerPort,
                "advertised.listeners=PLAINTEXT://" + host + ":" + clientPort,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                "log.dirs=" + logDirs, "");
    }
}
