package io.cairn.testkit;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which test is running (so each broker's log lands in {@code broker-logs/<test>/}) and which broker processes
 * were started during it (so {@link BrokerLogsExtension} can print their log tails when it fails); also kills any
 * broker still alive when the test JVM exits, so no broker outlives the build.
 *
 * <p>Thread-safe: the current test name is volatile (written by the JUnit thread, read by harness code on the same
 * thread), the journal is a synchronized list.
 */
public final class BrokerLogs {

    /** The test name used before any test announced itself. */
    static final String NO_TEST = "no-test";

    private static volatile String currentTest = NO_TEST;
    private static final List<BrokerProcess> STARTED = new ArrayList<>();
    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(BrokerLogs::killLeftovers, "cairn-testkit-reaper"));
    }

    private BrokerLogs() {
    }

    /** Announces the test that is about to run; called by {@link BrokerLogsExtension}. */
    public static void setCurrentTest(String testName) {
        currentTest = testName;
    }

    /** The test announced last. */
    public static String currentTest() {
        return currentTest;
    }

    /** The directory for logs of brokers started by the current test. */
    static Path currentLogDirectory() {
        return TestDirectories.logDirectory(currentTest);
    }

    /** The number of processes started so far: a mark for {@link #startedSince(int)}. */
    public static int mark() {
        synchronized (STARTED) {
            return STARTED.size();
        }
    }

    /** The processes whose start was recorded after {@code mark}. */
    public static List<BrokerProcess> startedSince(int mark) {
        synchronized (STARTED) {
            return new ArrayList<>(STARTED.subList(Math.min(mark, STARTED.size()), STARTED.size()));
        }
    }

    static void recordStart(BrokerProcess broker, Process process) {
        synchronized (STARTED) {
            if (!STARTED.contains(broker)) {
                STARTED.add(broker);
            }
        }
        LIVE.add(process);
    }

    static void recordExit(Process process) {
        LIVE.remove(process);
    }

    private static void killLeftovers() {
        for (Process process : LIVE) {
            process.destroyForcibly();
        }
    }
}
