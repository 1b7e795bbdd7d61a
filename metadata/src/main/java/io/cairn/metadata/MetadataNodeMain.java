package io.cairn.metadata;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Runs one metadata node (a controller, or a broker-only listener) from a {@code server.properties} file until the
 * process is terminated: the process the multi-controller tests start and kill by PID. Prints
 * {@code STARTED <node.id>} once the node runs. Used from {@code main} only.
 */
public final class MetadataNodeMain {

    private static final Logger LOGGER = LogManager.getLogger(MetadataNodeMain.class);

    private MetadataNodeMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: MetadataNodeMain server.properties");
            System.exit(1);
        }
        MetadataConfig config = MetadataConfig.load(Path.of(args[0]));
        MetadataNode node;
        try {
            node = MetadataNode.start(config);
        } catch (IOException | RuntimeException e) {
            LOGGER.error("Metadata node {} failed to start: {}", config.nodeId(), e.toString());
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOGGER.info("Stopping metadata node {}", config.nodeId());
            node.close();
            stopped.countDown();
        }, "metadata-node-shutdown"));
        System.out.println("STARTED " + config.nodeId());
        System.out.flush();
        stopped.await();
    }
}
