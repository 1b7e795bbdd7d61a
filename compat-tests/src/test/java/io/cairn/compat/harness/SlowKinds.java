package io.cairn.compat.harness;

import io.cairn.testkit.BrokerKind;
import java.util.Arrays;
import java.util.stream.Stream;

/** The broker kinds of the {@link KafkaHalfInFaults} scenarios in this JVM. */
public final class SlowKinds {

    /** {@code CAIRN} in the default build, {@code KAFKA} under {@code -Pfaults} (the poms); both when unset. */
    public static final String PROPERTY = "cairn.slow.kinds";

    private SlowKinds() {
    }

    /** The kinds named by {@value #PROPERTY}, comma-separated, or every kind when it is blank or unset. */
    public static Stream<BrokerKind> kinds() {
        String names = System.getProperty(PROPERTY, "");
        if (names.isBlank()) {
            return Arrays.stream(BrokerKind.values());
        }
        return Arrays.stream(names.split(",")).map(String::trim).filter(name -> !name.isEmpty())
                .map(BrokerKind::valueOf);
    }
}
