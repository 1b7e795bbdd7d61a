package io.cairn.log.retention;

import static io.cairn.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.LogInvariants;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.TestBatches;
import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.error.OffsetOutOfRangeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RetentionTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();

    private PartitionLog logWithSegments(LogConfig config, int batches) {
        PartitionLog log = PartitionLog.open(tmp.resolve("r-0"), config, LogEnvironment.of(time), true);
        for (int i = 0; i < batches; i++) {
            log.appendAsLeader(TestBatches.keyed(time.milliseconds(), "key-" + i, "value-" + i), 0,
                AppendOrigin.CLIENT);
            time.sleep(1000);
        }
        return log;
    }

    private static LogConfig.Builder small() {
        return LogConfig.builder().segmentBytes(160).fileDeleteDelayMs(0);
    }

    @Test
    void retentionMsShouldDeleteOldSegmentsAndMoveTheLogStartOffset() {
        // Given: one batch per segment, a second apart
        PartitionLog log = logWithSegments(small().retentionMs(3500).build(), 8);
        int before = log.numberOfSegments();

        // When
        int deleted = log.deleteOldSegments();

        // Then
        assertThat(before).isGreaterThan(3);
        assertThat(deleted).isPositive();
        long start = log.logStartOffset();
        assertThat(log.segments().iterator().next().baseOffset()).isEqualTo(start);
        assertThat(time.milliseconds() - log.segments().iterator().next().largestTimestamp())
            .isLessThanOrEqualTo(3500);
        assertThatThrownBy(() -> log.read(start - 1, 100, Long.MAX_VALUE, true))
            .isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(LogInvariants.verify(log)).hasSize((int) (8 - start));
        log.close();
        PartitionLog reopened = PartitionLog.open(log.dir(), log.config(), LogEnvironment.of(time), true);
        assertThat(reopened.logStartOffset()).isEqualTo(start);
        reopened.close();
    }

    @Test
    void retentionMsShouldRollAndDeleteWhenEverySegmentExpired() {
        // Given
        PartitionLog log = logWithSegments(small().retentionMs(1000).build(), 4);
        time.sleep(10_000);

        // When
        log.deleteOldSegments();

        // Then
        assertThat(log.numberOfSegments()).isEqualTo(1);
        assertThat(log.logStartOffset()).isEqualTo(4);
        assertThat(log.logEndOffset()).isEqualTo(4);
        log.close();
    }

    @Test
    void retentionBytesShouldKeepTheNewestSegmentsWithinTheLimit() {
        // Given
        PartitionLog log = logWithSegments(small().retentionMs(-1).retentionBytes(300).build(), 8);

        // When
        log.deleteOldSegments();

        // Then: Kafka's rule, a segment goes only if the log stays at or above retention.bytes without it
        long oldest = log.segments().iterator().next().size();
        assertThat(log.size() - oldest).isLessThan(300);
        assertThat(log.size()).isLessThan(640);
        assertThat(log.logEndOffset()).isEqualTo(8);
        assertThat(LogInvariants.verify(log)).last().isEqualTo("7:value-7");
        log.close();
    }

    @Test
    void retentionBytesCountsTheActiveSegmentAndRollsItAwayWhenItAloneBreachesTheLimit() {
        // Given: retention.bytes 0, so every byte is over the limit, the active segment's too
        PartitionLog log = logWithSegments(small().retentionMs(-1).retentionBytes(0).build(), 5);
        int before = log.numberOfSegments();

        // When
        int deleted = log.deleteOldSegments();

        // Then: Kafka's deleteRetentionSizeBreachedSegments counts the whole log and, when every segment goes,
        // rolls the active one first: one empty segment is left at the log end offset
        assertThat(deleted).isEqualTo(before);
        assertThat(log.numberOfSegments()).isEqualTo(1);
        assertThat(log.size()).isZero();
        assertThat(log.logStartOffset()).isEqualTo(5);
        assertThat(log.logEndOffset()).isEqualTo(5);
        assertThatThrownBy(() -> log.read(4, 100, Long.MAX_VALUE, true))
            .isInstanceOf(OffsetOutOfRangeException.class);

        // and a second pass over the empty active segment deletes nothing
        assertThat(log.deleteOldSegments()).isZero();
        assertThat(log.numberOfSegments()).isEqualTo(1);
        log.close();
    }

    @Test
    void retentionBytesKeepsTheActiveSegmentWhenItFitsTheLimit() {
        // Given: the active segment alone is below retention.bytes, the log as a whole above it
        PartitionLog log = logWithSegments(small().retentionMs(-1).build(), 5);
        long activeSize = log.segments().stream().reduce((a, b) -> b).orElseThrow().size();
        log.updateConfig(log.config().toBuilder().retentionBytes(activeSize).build());

        // When
        log.deleteOldSegments();

        // Then only the active segment is left, with its data
        assertThat(log.numberOfSegments()).isEqualTo(1);
        assertThat(log.size()).isEqualTo(activeSize);
        assertThat(LogInvariants.verify(log)).containsExactly("4:value-4");
        log.close();
    }

    @Test
    void compactOnlyTopicsShouldNotDeleteByTimeOrSize() {
        // Given
        PartitionLog log = logWithSegments(small().retentionMs(1).retentionBytes(1).cleanupPolicy("compact")
            .build(), 5);

        // When
        int deleted = log.deleteOldSegments();

        // Then
        assertThat(deleted).isZero();
        assertThat(log.logStartOffset()).isZero();
        log.close();
    }

    @Test
    void deleteRecordsShouldMoveTheStartOffsetAndLetRetentionDropWholeSegments() {
        // Given
        PartitionLog log = logWithSegments(small().retentionMs(-1).build(), 6);

        // When
        long start = log.deleteRecordsBefore(3);
        log.deleteOldSegments();

        // Then
        assertThat(start).isEqualTo(3);
        assertThat(log.logStartOffset()).isEqualTo(3);
        assertThat(log.segments().iterator().next().baseOffset()).isLessThanOrEqualTo(3);
        assertThatThrownBy(() -> log.read(2, 100, Long.MAX_VALUE, true))
            .isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(log.fetchOffsetByTimestamp(-2L)).map(t -> t.offset()).contains(3L);
        log.close();
        PartitionLog reopened = PartitionLog.open(log.dir(), log.config(), LogEnvironment.of(time), true);
        assertThat(reopened.logStartOffset()).isEqualTo(3);
        reopened.close();
    }

    @Test
    void aReaderHoldingASliceShouldStillReadADeletedSegment() throws Exception {
        // Given: deletes are delayed by file.delete.delay.ms
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
        LogEnvironment env = new LogEnvironment(time, FileLayer.DEFAULT, OpenResources.unbounded(),
            OpenResources.unbounded(), scheduler);
        LogConfig config = LogConfig.builder().segmentBytes(160).retentionMs(-1).fileDeleteDelayMs(60_000).build();
        PartitionLog log = PartitionLog.open(tmp.resolve("d-0"), config, env, true);
        for (int i = 0; i < 4; i++) {
            log.appendAsLeader(values(time.milliseconds(), "value-" + i), 0, AppendOrigin.CLIENT);
        }
        FetchDataInfo held = log.read(0, 1000, Long.MAX_VALUE, true);
        log.deleteRecordsBefore(2);

        // When
        log.deleteOldSegments();

        // Then
        try (Stream<Path> files = Files.list(log.dir())) {
            assertThat(files.map(p -> p.getFileName().toString()))
                .contains(LogSegment.fileName(0) + LogSegment.LOG_SUFFIX + LogSegment.DELETED_SUFFIX);
        }
        assertThat(TestBatches.offsetsAndValues(held.records().readBytes())).containsExactly("0:value-0", "1:value-1");
        held.close();
        scheduler.shutdownNow();
        log.close();
    }
}
