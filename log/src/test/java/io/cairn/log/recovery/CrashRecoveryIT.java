package io.cairn.log.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.LogInvariants;
import io.cairn.log.PartitionLog;
import io.cairn.log.ShmTempDirFactory;
import io.cairn.log.TestBatches;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs a durable writer in a child JVM, kills it with SIGKILL at a random moment, and after each kill checks that
 * every append the child reported is present and identical, no corrupt batch is returned, and appending goes on.
 */
@Tag("faults")
class CrashRecoveryIT {

    /** The issue asks for at least 50 rounds. */
    private static final int ROUNDS = Integer.getInteger("cairn.crash.rounds", 50);

    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void everyAcknowledgedAppendShouldSurviveSigkill() throws Exception {
        // Given
        long seed = System.nanoTime();
        Random random = new Random(seed);
        Path dir = tmp.resolve("crash-0");
        Map<Long, String> acknowledged = new HashMap<>();
        int totalKillsMidAppend = 0;
        for (int round = 0; round < ROUNDS; round++) {
            int killAfter = random.nextInt(60);

            // When
            Process child = startChild(dir, "r" + round);
            Map<Long, String> acks = new HashMap<>();
            CountDownLatch enough = new CountDownLatch(1);
            AtomicInteger seen = new AtomicInteger();
            Thread reader = new Thread(() -> readAcks(child, acks, seen, killAfter, enough));
            reader.start();
            boolean reached = enough.await(60, TimeUnit.SECONDS);
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
            reader.join(10_000);
            assertThat(reached).as("seed %d round %d: child reached %d acks", seed, round, killAfter).isTrue();
            if (seen.get() > killAfter) {
                totalKillsMidAppend++;
            }
            synchronized (acks) {
                acknowledged.putAll(acks);
            }

            // Then
            PartitionLog log = PartitionLog.open(dir, CrashWriter.config(), LogEnvironment.of(io.cairn.log.Time.SYSTEM),
                false);
            List<String> records = LogInvariants.verify(log);
            Map<Long, String> present = new HashMap<>();
            for (String r : records) {
                int colon = r.indexOf(':');
                present.put(Long.parseLong(r.substring(0, colon)), r.substring(colon + 1));
            }
            for (Map.Entry<Long, String> ack : acknowledged.entrySet()) {
                assertThat(present.get(ack.getKey())).as("seed %d round %d offset %d", seed, round, ack.getKey())
                    .isEqualTo(ack.getValue());
            }
            long end = log.logEndOffset();
            assertThat(log.appendAsLeader(TestBatches.values(System.currentTimeMillis(), "parent-" + round), 1,
                AppendOrigin.CLIENT).firstOffset()).isEqualTo(end);
            acknowledged.put(end, "parent-" + round);
            log.close();
        }
        System.out.println("crash rounds: " + ROUNDS + ", acknowledged records: " + acknowledged.size()
            + ", kills with more output pending: " + totalKillsMidAppend + ", seed " + seed);
    }

    private static Process startChild(Path dir, String tag) throws Exception {
        return ChildJvm.start(CrashWriter.class, dir.toString(), tag);
    }

    private static void readAcks(Process child, Map<Long, String> acks, AtomicInteger seen, int killAfter,
                                 CountDownLatch enough) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    int space = line.indexOf(' ', 4);
                    synchronized (acks) {
                        acks.put(Long.parseLong(line.substring(4, space)), line.substring(space + 1));
                    }
                    if (seen.incrementAndGet() >= killAfter) {
                        enough.countDown();
                    }
                } else if (line.startsWith("READY") && killAfter == 0) {
                    enough.countDown();
                }
            }
        } catch (java.io.IOException e) {
            // the child was killed mid-line: a partial line is not an acknowledgement
        }
    }

    static LogConfig config() {
        return CrashWriter.config();
    }
}
