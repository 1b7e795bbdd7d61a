package io.cairn.log.recovery;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts a test's child JVM (a writer a crash test kills) with the few jars a log writer needs. */
public final class ChildJvm {

    private ChildJvm() {
    }

    /** Starts {@code main} with {@code args}; its standard output is the test's to read, its errors discarded. */
    public static Process start(Class<?> main, String... args) throws java.io.IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx128m", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
            "-XX:+UseSerialGC", "-XX:-UsePerfData", "-cp", classpath(), main.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.redirectError(ProcessBuilder.Redirect.DISCARD);
        return pb.start();
    }

    /** Only what the writer needs (the test classpath holds Scala and the Kafka server too): faster JVM starts. */
    private static String classpath() {
        String full = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        StringBuilder out = new StringBuilder();
        for (String entry : full.split(File.pathSeparator)) {
            String name = Path.of(entry).getFileName().toString();
            boolean needed = !entry.endsWith(".jar") || name.startsWith("kafka-clients")
                || name.startsWith("log4j-api") || name.startsWith("netty-") || name.startsWith("cairn-")
                || name.startsWith("snappy") || name.startsWith("lz4") || name.startsWith("zstd")
                || name.startsWith("slf4j");
            if (needed) {
                out.append(out.length() == 0 ? "" : File.pathSeparator).append(entry);
            }
        }
        return out.toString();
    }
}
