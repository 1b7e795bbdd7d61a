package io.cairn.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A seeded random walk of appends, rolls, truncations, reads, DeleteRecords, retention, clean and unclean
 * restarts against a list model of the log (Redpanda's op-fuzz idea): after every step the log must hold exactly
 * the model's records from its start offset, with valid batches and indexes that point at real batches.
 */
class PartitionLogOpFuzzTest {

    private static final int SEEDS = 10;
    private static final int STEPS = 150;

    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    @Test
    void randomOperationsShouldKeepTheLogEqualToItsModel() {
        for (int seed = 0; seed < SEEDS; seed++) {
            runSeed(seed);
        }
    }

    private void runSeed(long seed) {
        // Given
        Random random = new Random(seed);
        MockTime time = new MockTime();
        LogConfig config = LogConfig.builder().segmentBytes(300 + random.nextInt(600))
            .indexIntervalBytes(1 + random.nextInt(200)).segmentIndexBytes(48 + 12 * random.nextInt(20))
            .retentionMs(-1).fileDeleteDelayMs(0).build();
        Path dir = tmp.resolve("fuzz" + seed + "-0");
        PartitionLog log = PartitionLog.open(dir, config, LogEnvironment.of(time), true);
        List<String> model = new ArrayList<>();
        long start = 0;

        // When / Then
        for (int step = 0; step < STEPS; step++) {
            int op = random.nextInt(100);
            String where = "seed " + seed + " step " + step + " op " + op;
            if (op < 55) {
                int n = 1 + random.nextInt(4);
                String[] values = new String[n];
                for (int i = 0; i < n; i++) {
                    values[i] = "s" + step + "-" + i + "-" + "x".repeat(random.nextInt(60));
                }
                time.sleep(random.nextInt(5));
                long first = log.appendAsLeader(TestBatches.values(time.milliseconds(), values), step / 10,
                    AppendOrigin.CLIENT).firstOffset();
                assertThat(first).as(where).isEqualTo(start + model.size());
                for (int i = 0; i < n; i++) {
                    model.add((first + i) + ":" + values[i]);
                }
            } else if (op < 62) {
                log.roll();
            } else if (op < 70 && !model.isEmpty()) {
                long target = start + random.nextInt(model.size());
                log.truncateTo(target);
                long end = log.logEndOffset();
                assertThat(end).as(where).isLessThanOrEqualTo(target);
                if (end < start) {
                    // the batch holding the target began below a DeleteRecords start offset: it went entirely
                    model.clear();
                    start = end;
                    assertThat(log.logStartOffset()).as(where).isEqualTo(end);
                } else {
                    model.subList((int) (end - start), model.size()).clear();
                }
            } else if (op < 75 && !model.isEmpty()) {
                long newStart = start + random.nextInt(model.size());
                log.deleteRecordsBefore(newStart);
                log.deleteOldSegments();
                int drop = (int) (log.logStartOffset() - start);
                model.subList(0, drop).clear();
                start = log.logStartOffset();
            } else if (op < 82) {
                boolean clean = random.nextBoolean();
                if (clean) {
                    log.close();
                } else {
                    log.closeWithoutFlush();
                }
                log = PartitionLog.open(dir, config, LogEnvironment.of(time), clean);
                assertThat(log.logStartOffset()).as(where).isEqualTo(start);
            } else if (!model.isEmpty()) {
                int index = random.nextInt(model.size());
                try (FetchDataInfo info = log.read(start + index, 1 + random.nextInt(400), Long.MAX_VALUE, true)) {
                    List<String> got = TestBatches.offsetsAndValues(info.records().readBytes());
                    assertThat(got).as(where).isNotEmpty();
                    assertThat(got).as(where).contains(model.get(index));
                }
            }
            List<String> actual = LogInvariants.verify(log);
            List<String> visible = actual.subList(Math.max(0, actual.size() - model.size()), actual.size());
            assertThat(visible).as(where).isEqualTo(model);
            assertThat(log.logEndOffset()).as(where).isEqualTo(start + model.size());
        }
        log.close();
    }
}
