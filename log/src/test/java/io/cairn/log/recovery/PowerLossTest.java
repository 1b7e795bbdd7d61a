package io.cairn.log.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.LogInvariants;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.ShmTempDirFactory;
import io.cairn.log.PowerLossFileLayer;
import io.cairn.log.TestBatches;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Power cuts through a file layer that forgets (or garbles) every byte not fsynced: in durable mode no
 * acknowledged append is lost; in the default mode recovery yields a valid prefix with consistent indexes.
 */
class PowerLossTest {

    private static final int ROUNDS = 30;

    @TempDir(factory = ShmTempDirFactory.class)
    Path tmp;

    private final MockTime time = new MockTime();

    @Test
    void durableModeShouldLoseNoAcknowledgedAppendAcrossPowerCuts() {
        runRounds(true, PowerLossFileLayer.Mode.FORGET, 11L);
        runRounds(true, PowerLossFileLayer.Mode.GARBLE, 12L);
    }

    @Test
    void defaultModeShouldRecoverAValidPrefixWithConsistentIndexes() {
        runRounds(false, PowerLossFileLayer.Mode.FORGET, 21L);
        runRounds(false, PowerLossFileLayer.Mode.GARBLE, 22L);
    }

    private void runRounds(boolean durable, PowerLossFileLayer.Mode mode, long seed) {
        // Given
        Random random = new Random(seed);
        Path dir = tmp.resolve("p" + durable + mode + "-0");
        LogConfig config = LogConfig.builder().durable(durable).segmentBytes(2000).indexIntervalBytes(150)
            .segmentIndexBytes(4096).build();
        List<String> written = new ArrayList<>();
        List<String> acknowledged = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            PowerLossFileLayer layer = new PowerLossFileLayer();
            PartitionLog log = PartitionLog.open(dir, config, LogEnvironment.of(time).withLayer(layer), false);
            List<String> recovered = LogInvariants.verify(log);

            // Then (for the previous round)
            assertPrefix(recovered, written, "seed " + seed + " round " + round + ": recovered log is a prefix");
            if (durable) {
                assertPrefix(acknowledged, recovered, "seed " + seed + " round " + round + ": acknowledged survive");
            }
            written.subList(recovered.size(), written.size()).clear();
            acknowledged.clear();
            acknowledged.addAll(recovered);

            // When: appends, then a power cut at a random moment
            int appends = 1 + random.nextInt(30);
            for (int i = 0; i < appends; i++) {
                int n = 1 + random.nextInt(4);
                String[] values = new String[n];
                for (int v = 0; v < n; v++) {
                    values[v] = "r" + round + "-" + i + "-" + v + "-" + "x".repeat(random.nextInt(40));
                }
                time.sleep(random.nextInt(3));
                LogAppendInfo info = log.appendAsLeader(TestBatches.values(time.milliseconds(), values), round,
                    AppendOrigin.CLIENT);
                for (int v = 0; v < n; v++) {
                    written.add((info.firstOffset() + v) + ":" + values[v]);
                }
                if (durable || log.flushedOffset() > info.lastOffset()) {
                    acknowledged.clear();
                    acknowledged.addAll(written);
                }
            }
            log.closeWithoutFlush();
            layer.cut(mode, random);
        }
        PartitionLog last = PartitionLog.open(dir, config, LogEnvironment.of(time), false);
        assertPrefix(LogInvariants.verify(last), written, "final recovery");
        last.close();
    }

    private static void assertPrefix(List<String> prefix, List<String> of, String what) {
        assertThat(prefix.size()).as(what).isLessThanOrEqualTo(of.size());
        assertThat(of.subList(0, prefix.size())).as(what).isEqualTo(prefix);
    }
}
