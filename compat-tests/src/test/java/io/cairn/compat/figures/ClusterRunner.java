package io.cairn.compat.figures;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerProcess;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A cluster for {@code bin/cairn-perf --brokers N}: starts {@code N} combined nodes with testkit's
 * {@link BrokerCluster} (Cairn, or the reference Kafka with {@code --kafka}), prints {@code bootstrap=host:port,...}
 * and {@code pids=pid,...} and then {@code ready} on stdout, and runs until its stdin ends, when it stops the nodes
 * (SIGTERM) and deletes their data.
 *
 * <p>Arguments: {@code [--kafka] [--brokers N] [--config key=value]... [--jvm-args "OPTIONS"]}; with
 * {@code --jvm-args} every node's JVM runs with exactly those (whitespace-separated) options instead of the test
 * harness's defaults, so that a cluster is measured as a single broker of {@code bin/cairn-perf} is. Single-threaded.
 */
public final class ClusterRunner {

    private ClusterRunner() {
    }

    public static void main(String[] args) throws IOException {
        BrokerKind kind = BrokerKind.CAIRN;
        int brokers = 3;
        Map<String, String> config = new LinkedHashMap<>();
        List<String> jvmArgs = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kafka" -> kind = BrokerKind.KAFKA;
                case "--brokers" -> brokers = Integer.parseInt(args[++i]);
                case "--config" -> {
                    String[] pair = args[++i].split("=", 2);
                    config.put(pair[0], pair.length > 1 ? pair[1] : "");
                }
                case "--jvm-args" -> jvmArgs = List.of(args[++i].trim().split("\\s+"));
                default -> throw new IllegalArgumentException("Unknown option " + args[i]
                        + "; usage: [--kafka] [--brokers N] [--config key=value]... [--jvm-args OPTIONS]");
            }
        }
        try (BrokerCluster cluster = jvmArgs == null ? BrokerCluster.create(kind, brokers, config)
                : BrokerCluster.createWithJvmArgs(kind, brokers, config, jvmArgs)) {
            cluster.start();
            System.out.println("bootstrap=" + cluster.bootstrapServers());
            System.out.println("pids=" + cluster.nodes().stream().map(BrokerProcess::pid).map(String::valueOf)
                    .collect(Collectors.joining(",")));
            System.out.println("ready");
            System.out.flush();
            InputStream in = System.in;
            while (in.read() >= 0) {
                // Runs until the caller closes stdin.
            }
        }
    }
}
