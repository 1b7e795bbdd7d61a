package io.cairn.testkit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.util.EnumMap;
import java.util.Map;

/**
 * One started broker per {@link BrokerKind} for the whole test JVM (Failsafe runs every IT of a module in one fork),
 * so read-only scenarios do not each pay a broker start (~3 s for the reference Kafka here). Brokers are started
 * lazily, restarted if a test left one dead, and closed by a shutdown hook; their logs go to
 * {@code broker-logs/shared/}.
 *
 * <p>Thread-safe: access is synchronized on the class.
 */
final class SharedBrokers {

    private static final Logger LOGGER = LogManager.getLogger(SharedBrokers.class);
    private static final Map<BrokerKind, BrokerProcess> BROKERS = new EnumMap<>(BrokerKind.class);

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(SharedBrokers::closeAll, "cairn-testkit-shared-brokers"));
    }

    private SharedBrokers() {
    }

    static synchronized BrokerProcess get(BrokerKind kind) {
        BrokerProcess broker = BROKERS.get(kind);
        if (broker != null && broker.isRunning()) {
            return broker;
        }
        if (broker != null) {
            LOGGER.warn("The shared {} broker is not running any more; starting it again", kind);
            broker.start();
            return broker;
        }
        String test = BrokerLogs.currentTest();
        BrokerLogs.setCurrentTest("shared");
        try {
            broker = kind.start();
        } finally {
            BrokerLogs.setCurrentTest(test);
        }
        BROKERS.put(kind, broker);
        return broker;
    }

    private static synchronized void closeAll() {
        for (BrokerProcess broker : BROKERS.values()) {
            try {
                broker.close();
            } catch (RuntimeException e) {
                LOGGER.warn("Could not close the shared {} broker", broker, e);
            }
        }
        BROKERS.clear();
    }
}
