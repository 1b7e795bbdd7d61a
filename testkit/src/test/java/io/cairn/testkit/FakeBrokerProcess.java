package io.cairn.testkit;

import java.time.Duration;
import java.util.List;

/** A {@link BrokerProcess} running {@link FakeBroker}, to test the shared lifecycle without a real broker. */
final class FakeBrokerProcess extends AbstractBrokerProcess {

    private final boolean failOnStart;

    FakeBrokerProcess(boolean failOnStart) {
        super("fake", FreePorts.freePort(), Duration.ofSeconds(30), Duration.ofSeconds(10));
        this.failOnStart = failOnStart;
    }

    @Override
    List<String> command() {
        return List.of(JavaTool.javaExecutable(), "-Xmx32m", "-XX:TieredStopAtLevel=1", "-cp",
                System.getProperty("java.class.path"), FakeBroker.class.getName(), Integer.toString(port()),
                failOnStart ? "fail" : "serve");
    }

    @Override
    void beforeStart() {
        appendToLog("preparing fake broker");
    }
}
