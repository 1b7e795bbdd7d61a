package io.cairn.log;

import static io.cairn.log.TestBatches.keyed;
import static io.cairn.log.TestBatches.offsetsAndValues;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.cleaner.Cleaner;
import io.cairn.log.cleaner.Throttler;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads whose published log end offset went stale while compaction ran: the snapshot is handed in, so what a reader
 * thread descheduled between taking it and walking the segments meets is played in order, deterministically.
 */
class LogReadsTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeLogs() {
        opened.forEach(PartitionLog::close);
    }

    private PartitionLog compacted() {
        LogConfig config = LogConfig.builder().cleanupPolicy("compact").build();
        PartitionLog log = PartitionLog.open(tmp.resolve("c-0"), config, LogEnvironment.of(time), true);
        opened.add(log);
        return log;
    }

    private void append(PartitionLog log, String key, String value) {
        log.appendAsLeader(keyed(time.milliseconds(), key, value), 0, AppendOrigin.CLIENT);
    }

    private static void clean(PartitionLog log) {
        new Cleaner(new Throttler(Double.MAX_VALUE, new MockTime())).clean(log, Cleaner.cleanable(log).orElseThrow());
    }

    private static List<String> readFrom(PartitionLog log, LogOffsetMetadata end, long offset) {
        try (FetchDataInfo info = LogReads.read(log, end, offset, Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            return offsetsAndValues(info.records().readBytes());
        }
    }

    @Test
    void aReadWhoseEndWasPublishedBeforeTheCleanerRemovedEverythingBelowItShouldReturnTheRecordsThatSupersededThem() {
        // Given a reader that took the log end offset (2, at the start of the empty active segment 2) and then
        // stalled while a and b were overwritten at 2 and 3, the log rolled and the cleaner emptied segment 0
        PartitionLog log = compacted();
        append(log, "a", "1");
        append(log, "b", "1");
        log.roll();
        LogOffsetMetadata stale = log.logEndOffsetMetadata();
        append(log, "a", "2");
        append(log, "b", "2");
        log.roll();
        clean(log);

        // When it reads from the log start with that end
        List<String> read = readFrom(log, stale, 0);

        // Then it gets the records that replaced what it would have seen, not an empty read below the log end
        assertThat(stale.messageOffset()).isEqualTo(2);
        assertThat(read).containsExactly("2:2", "3:2");
    }

    @Test
    void aReadWhoseEndSegmentWasCleanedShorterShouldStayInsideTheCleanedFile() {
        // Given a reader that took the log end offset inside segment 0 (offset 4, past its four batches) and stalled
        // while the segment rolled and was cleaned down to two batches
        PartitionLog log = compacted();
        append(log, "a", "1");
        append(log, "b", "1");
        append(log, "a", "2");
        append(log, "b", "2");
        LogOffsetMetadata stale = log.logEndOffsetMetadata();
        log.roll();
        clean(log);

        // When it reads from the log start with that end, whose position is past the cleaned file's end
        List<String> read = readFrom(log, stale, 0);

        // Then the slice ends at the file's end (a longer one would fail to read, or send a short zero-copy region)
        assertThat(stale.relativePositionInSegment()).isGreaterThan(log.segments().iterator().next().size());
        assertThat(read).containsExactly("2:2", "3:2");
    }
}
