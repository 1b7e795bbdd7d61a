package io.cairn.log.cleaner;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.TestBatches;
import io.cairn.log.Time;
import java.util.Optional;
import java.util.Random;

/**
 * The child process of {@link CompactionCrashIT}: opens a compacted log as after a crash, then appends forever in
 * durable mode, one keyed record (a tombstone one time in ten) a batch, and cleans the log (throttled, so that a
 * cleaning lasts) after every {@value #CLEAN_EVERY} appends. Prints {@code ACK <offset> <key> <value>} for every
 * append that returned and {@code CLEANED <segments>} after each cleaning, until it is killed.
 */
public final class CrashCompactor {

    private static final int KEYS = 16;
    private static final int CLEAN_EVERY = 5;
    /** The cleaner's I/O limit: a cleaning takes tens of milliseconds, so that many kills land in one. */
    private static final double CLEANER_BYTES_PER_SECOND = 100_000;

    private CrashCompactor() {
    }

    /** Small segments so that each cleaning rewrites several; every dirty byte makes a log due. */
    static LogConfig config() {
        return LogConfig.builder().cleanupPolicy("compact").durable(true).segmentBytes(1024).indexIntervalBytes(128)
            .segmentIndexBytes(4096).minCleanableDirtyRatio(0.01).fileDeleteDelayMs(0).build();
    }

    public static void main(String[] args) {
        PartitionLog log = PartitionLog.open(java.nio.file.Path.of(args[0]), config(), LogEnvironment.of(Time.SYSTEM),
            false);
        String tag = args[1];
        Cleaner cleaner = new Cleaner(new Throttler(CLEANER_BYTES_PER_SECOND, Time.SYSTEM));
        System.out.println("READY " + log.logEndOffset());
        System.out.flush();
        Random random = new Random();
        for (long n = 0; ; n++) {
            String key = "k" + random.nextInt(KEYS);
            String value = random.nextInt(10) == 0 ? null : tag + "-" + n;
            LogAppendInfo info = log.appendAsLeader(TestBatches.keyed(System.currentTimeMillis(), key, value), 1,
                AppendOrigin.CLIENT);
            System.out.println("ACK " + info.firstOffset() + " " + key + " " + value);
            System.out.flush();
            if (n % CLEAN_EVERY == CLEAN_EVERY - 1) {
                Optional<Cleaner.CleanResult> result = cleaner.cleanIfNeeded(log);
                System.out.println("CLEANED " + result.map(Cleaner.CleanResult::segmentsCleaned).orElse(0));
                System.out.flush();
            }
        }
    }
}
