package io.cairn.log.cleaner;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogEnvironment;
import io.cairn.log.LogInvariants;
import io.cairn.log.PartitionLog;
import io.cairn.log.ShmTempDirFactory;
import io.cairn.log.TestBatches;
import io.cairn.log.Time;
import io.cairn.log.recovery.ChildJvm;
import io.cairn.log.segment.LogSegment;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a child JVM that appends to a compacted log and cleans it ({@link CrashCompactor}) with SIGKILL at a random
 * moment, often in the middle of a cleaning (a {@code .cleaned} segment half written, a swap half done), and after
 * each kill checks the log as a restart opens it: every batch valid, offsets increasing, for every key the latest
 * record that was acknowledged (a value or a tombstone) still there at its offset unless a later record of the key
 * superseded it, and appending goes on.
 */
@Tag("faults")
class CompactionCrashIT {

    private static final int ROUNDS = Integer.getInteger("cairn.compaction.crash.rounds", 40);

    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    /** A key's latest acknowledged record. */
    private record Latest(long offset, String value) {
    }

    @Test
    @Timeout(value = 10, unit = TimeUnit.MINUTES)
    void theLatestAcknowledgedRecordOfEveryKeySurvivesSigkillDuringCompaction() throws Exception {
        // Given
        long seed = System.nanoTime();
        Random random = new Random(seed);
        Path dir = tmp.resolve("compacted-0");
        Map<String, Latest> latest = new HashMap<>();
        AtomicInteger cleanings = new AtomicInteger();
        int midCleaning = 0;
        for (int round = 0; round < ROUNDS; round++) {
            long killAfterMs = 50 + random.nextInt(1_000);

            // When: killed a random time after it opened the log
            Process child = ChildJvm.start(CrashCompactor.class, dir.toString(), "r" + round);
            Map<String, Latest> acks = new HashMap<>();
            CountDownLatch ready = new CountDownLatch(1);
            Thread reader = new Thread(() -> readAcks(child, acks, cleanings, ready));
            reader.start();
            boolean reached = ready.await(60, TimeUnit.SECONDS);
            Thread.sleep(killAfterMs);
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
            reader.join(10_000);
            assertThat(reached).as("seed %d round %d: the child opened the log", seed, round).isTrue();
            synchronized (acks) {
                latest.putAll(acks);
            }

            // Then: opened as a restart opens it, finishing or undoing what the kill interrupted
            if (interruptedCleaning(dir)) {
                midCleaning++;
            }
            PartitionLog log = PartitionLog.open(dir, CrashCompactor.config(), LogEnvironment.of(Time.SYSTEM), false);
            LogInvariants.verify(log);
            Map<String, List<String>> present = CleanerTest.byKey(log);
            for (Map.Entry<String, Latest> key : latest.entrySet()) {
                // the latest acknowledged record, or a later one of the key that the kill kept us from seeing
                // acknowledged (which compaction may have let supersede it)
                Latest last = key.getValue();
                assertThat(present.get(key.getKey())).as("seed %d round %d key %s", seed, round, key.getKey())
                    .isNotNull()
                    .anyMatch(r -> r.equals(last.offset() + "=" + last.value())
                        || Long.parseLong(r.substring(0, r.indexOf('='))) > last.offset());
            }
            String value = "parent-" + round;
            long offset = log.appendAsLeader(TestBatches.keyed(System.currentTimeMillis(), "k0", value), 1,
                AppendOrigin.CLIENT).firstOffset();
            assertThat(offset).isEqualTo(log.logEndOffset() - 1);
            latest.put("k0", new Latest(offset, value));
            log.close();
        }
        assertThat(cleanings.get()).as("cleanings that rewrote segments").isGreaterThan(ROUNDS / 2);
        System.out.println("compaction crash rounds: " + ROUNDS + ", cleanings: " + cleanings.get()
            + ", kills that left a cleaning's files behind: " + midCleaning + ", keys: " + latest.size() + ", seed "
            + seed);
    }

    /** Whether the kill left a cleaning's files: a {@code .cleaned} or {@code .swap} segment, or a deleted one. */
    private static boolean interruptedCleaning(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).anyMatch(name -> name.endsWith(LogSegment.CLEANED_SUFFIX)
                || name.endsWith(LogSegment.SWAP_SUFFIX) || name.endsWith(LogSegment.DELETED_SUFFIX));
        }
    }

    private static void readAcks(Process child, Map<String, Latest> acks, AtomicInteger cleanings,
                                 CountDownLatch ready) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(),
            StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("ACK ")) {
                    String[] parts = line.split(" ");
                    synchronized (acks) {
                        acks.put(parts[2], new Latest(Long.parseLong(parts[1]), parts[3]));
                    }
                } else if (line.startsWith("READY ")) {
                    ready.countDown();
                } else if (line.startsWith("CLEANED ") && !line.equals("CLEANED 0")) {
                    cleanings.incrementAndGet();
                }
            }
        } catch (IOException e) {
            // the child was killed mid-line: a partial line is not an acknowledgement
        }
    }
}
