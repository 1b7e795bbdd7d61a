package io.cairn.testkit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

import java.util.List;

/**
 * JUnit 5 extension for tests that start brokers: names each broker's log directory after the running test
 * ({@code broker-logs/<TestClass>/<test>}), and when a test fails prints the last lines of the log of every broker
 * it started (the whole logs stay on disk).
 *
 * <p>Register with {@code @ExtendWith(BrokerLogsExtension.class)}. Stateless apart from a mark kept in the JUnit
 * store; thread-safe as far as JUnit's sequential execution needs.
 */
public final class BrokerLogsExtension implements BeforeAllCallback, BeforeEachCallback, TestWatcher {

    private static final Logger LOGGER = LogManager.getLogger(BrokerLogsExtension.class);
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(
            BrokerLogsExtension.class);
    private static final String CLASS_MARK = "classMark";
    private static final int TAIL_LINES = 60;

    @Override
    public void beforeAll(ExtensionContext context) {
        BrokerLogs.setCurrentTest(context.getRequiredTestClass().getSimpleName());
        context.getStore(NAMESPACE).put(CLASS_MARK, BrokerLogs.mark());
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        String method = context.getRequiredTestMethod().getName();
        String display = context.getDisplayName();
        // Parameterized and repeated tests show "[n] args": keep it, so each invocation gets its own directory.
        String invocation = display.startsWith("[") ? "-" + display : "";
        BrokerLogs.setCurrentTest(context.getRequiredTestClass().getSimpleName() + "/" + method + invocation);
    }

    @Override
    public void testFailed(ExtensionContext context, Throwable cause) {
        // Stores are hierarchical: the method's store sees the mark its class put there.
        Integer classMark = context.getStore(NAMESPACE).get(CLASS_MARK, Integer.class);
        for (BrokerProcess broker : BrokerLogs.startedSince(classMark == null ? 0 : classMark)) {
            List<String> tail = broker.logTail(TAIL_LINES);
            LOGGER.error("{} failed; last {} lines of the {} log {}:\n{}", context.getDisplayName(), tail.size(),
                    broker.name(), broker.logFile(), String.join("\n", tail));
        }
    }
}
