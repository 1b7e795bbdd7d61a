package io.cairn.compat.harness;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * testkit's {@code InProcessTool}, by which {@link KafkaDistribution#tool} runs Kafka's admin commands in the test
 * JVM, against the child JVM a user's shell would start: the same exit code, stdout and error lines for a failure
 * inside the tool, a usage error ({@code Exit.exit} deep in the option parsing) and a Scala tool printing
 * through {@code scala.Console}. The tool's log lines are the one difference (a child JVM logs WARN to stderr, the
 * test JVM to its own log), so stderr is compared without them.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class InProcessToolIT {

    private static final String TOPICS = "org.apache.kafka.tools.TopicCommand";
    private static final String CONFIGS = "kafka.admin.ConfigCommand";
    private static final String DUMP = "kafka.tools.DumpLogSegments";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Pattern LOG_ENTRY_START = Pattern.compile("^\\[\\d{4}-\\d{2}-\\d{2} [\\d:,]+] [A-Z]+ ");
    private static final Pattern LOG_ENTRY_END = Pattern.compile(" \\([\\w.$]+\\)$");

    @Test
    void anAdminCommandPrintsAndExitsInTheTestJvmAsInItsOwn() {
        // Given
        BrokerProcess broker = BrokerKind.CAIRN.shared();
        String topic = "in-process-" + UUID.randomUUID().toString().substring(0, 8);
        JavaTool.Result created = KafkaDistribution.tool(TOPICS).args("--bootstrap-server", broker.bootstrapServers(),
                "--create", "--topic", topic, "--partitions", "2", "--replication-factor", "1").timeout(TIMEOUT)
                .build().run();
        assertThat(created.exitCode()).as("%s", created).isZero();
        assertThat(created.stdout()).as("%s", created).isEqualTo("Created topic " + topic + ".\n");

        // When / Then: a failure the tool catches, a usage error
        same(both(TOPICS, "--bootstrap-server", broker.bootstrapServers(), "--describe", "--topic", topic + "-no"), 1);
        same(both(CONFIGS, "--bootstrap-server", broker.bootstrapServers(), "--describe"), 1);

        // And a Scala tool (scala.Console) reading the topic's first segment
        Path segment = broker.dataDir().resolve(topic + "-0").resolve("00000000000000000000.log");
        same(both(DUMP, "--files", segment.toString()), 0);
    }

    /** The in-process result and the child JVM's, after checking which ran where. */
    private static List<JavaTool.Result> both(String mainClass, String... args) {
        JavaTool inProcess = KafkaDistribution.tool(mainClass).args(args).timeout(TIMEOUT).build();
        JavaTool child = KafkaDistribution.tool(mainClass).args(args).timeout(TIMEOUT).inChildJvm().build();
        assertThat(inProcess.inProcess()).as(mainClass).isTrue();
        assertThat(child.inProcess()).as(mainClass).isFalse();
        return List.of(inProcess.run(), child.run());
    }

    private static void same(List<JavaTool.Result> results, int exitCode) {
        JavaTool.Result inProcess = results.get(0);
        JavaTool.Result child = results.get(1);
        assertThat(child.exitCode()).as("child JVM: %s", child).isEqualTo(exitCode);
        assertThat(inProcess.exitCode()).as("in process: %s%nchild JVM: %s", inProcess, child).isEqualTo(exitCode);
        assertThat(inProcess.stdout()).as("in process: %s%nchild JVM: %s", inProcess, child)
                .isEqualTo(child.stdout());
        assertThat(withoutLogLines(inProcess.stderr())).as("in process: %s%nchild JVM: %s", inProcess, child)
                .isEqualTo(withoutLogLines(child.stderr()));
    }

    /**
     * stderr without the entries of log4j's pattern {@code [%d] %p %m (%c)%n} (a message may span lines up to the one
     * ending with the logger's name) and without stack frames (the bottom ones name the launcher or the test JVM's
     * thread).
     */
    private static List<String> withoutLogLines(String stderr) {
        List<String> kept = new ArrayList<>();
        boolean inEntry = false;
        for (String line : stderr.lines().toList()) {
            if (!inEntry && LOG_ENTRY_START.matcher(line).find()) {
                inEntry = true;
            }
            if (inEntry) {
                inEntry = !LOG_ENTRY_END.matcher(line).find();
                continue;
            }
            if (!line.startsWith("\tat ") && !line.startsWith("\t... ")) {
                kept.add(line);
            }
        }
        return kept;
    }
}
