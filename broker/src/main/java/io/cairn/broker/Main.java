package io.cairn.broker;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.ConfigException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The broker process: {@code Main [server.properties] [--override key=value]*}, the command line of Kafka's
 * {@code kafka-server-start.sh}. Starts a {@link CairnServer}, stops it on SIGTERM/SIGINT, and exits with code 1 and
 * one ERROR line when the configuration is invalid or a listener cannot be bound.
 *
 * <p>Runs on the main thread; the shutdown hook runs on its own thread.
 */
public final class Main {

    private static final Logger LOGGER = LogManager.getLogger(Main.class);

    private Main() {
    }

    public static void main(String[] args) {
        CairnServer server;
        CountDownLatch stopped = new CountDownLatch(1);
        try {
            BrokerConfig config = parseArguments(args);
            logConfig(config);
            server = new CairnServer(config);
            // Registered before start: a SIGTERM during startup (registration with the controller) waits for start
            // to finish, then shuts down cleanly.
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                server.close();
                stopped.countDown();
                LogManager.shutdown();
            }, "cairn-shutdown"));
            server.start();
        } catch (ConfigException | IllegalArgumentException e) {
            exit("Invalid configuration: " + e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            exit("Interrupted while starting");
            return;
        } catch (Exception e) {
            exit("Cairn failed to start: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            return;
        }
        LOGGER.info("Cairn broker started (node.id={}) in {} ms", server.config().nodeId(),
                ManagementFactory.getRuntimeMXBean().getUptime());
        awaitUninterruptibly(stopped);
    }

    /** Parses {@code [server.properties] [--override k=v]*}; throws {@link ConfigException} on bad usage. */
    static BrokerConfig parseArguments(String[] args) throws IOException {
        Path file = null;
        Map<String, String> overrides = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if ("--override".equals(arg)) {
                if (i + 1 >= args.length) {
                    throw new ConfigException("--override needs a key=value argument");
                }
                String pair = args[++i];
                int eq = pair.indexOf('=');
                if (eq <= 0) {
                    throw new ConfigException("--override argument '" + pair + "' is not key=value");
                }
                overrides.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
            } else if (file == null && !arg.startsWith("--")) {
                file = Path.of(arg);
                if (!Files.isReadable(file)) {
                    throw new ConfigException("cannot read the properties file " + file.toAbsolutePath());
                }
            } else {
                throw new ConfigException("unexpected argument '" + arg + "'. Usage: cairn-server "
                        + "[server.properties] [--override key=value]...");
            }
        }
        return BrokerConfig.load(file, overrides);
    }

    private static void logConfig(BrokerConfig config) {
        StringBuilder values = new StringBuilder("CairnConfig values:");
        for (Map.Entry<String, String> entry : config.effectiveValues().entrySet()) {
            values.append(System.lineSeparator()).append('\t').append(entry.getKey()).append(" = ")
                    .append(entry.getValue());
        }
        LOGGER.info(values);
    }

    private static void exit(String message) {
        LOGGER.error(message);
        LogManager.shutdown();
        System.exit(1);
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
