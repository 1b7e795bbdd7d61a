package io.cairn.log;

import static io.cairn.log.TestBatches.keyed;
import static io.cairn.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.cleaner.Cleaner;
import io.cairn.log.cleaner.Throttler;
import io.cairn.log.io.OpenResources;
import io.cairn.log.segment.LogSegment;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every file the log renames into place is durable once the call returns: the rename goes through the file layer's
 * {@code atomicMove}, and the partition directory is fsynced after the rename (Kafka's
 * {@code Utils.atomicMoveWithFallback}, {@code LocalLog.replaceSegments}).
 */
class DurableRenamesTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();
    private final RecordingFileLayer layer = new RecordingFileLayer();
    private final List<PartitionLog> opened = new ArrayList<>();

    @AfterEach
    void closeLogs() {
        opened.forEach(PartitionLog::closeWithoutFlush);
    }

    private PartitionLog open(LogConfig config) {
        LogEnvironment env = new LogEnvironment(time, layer, OpenResources.unbounded(), OpenResources.unbounded(),
            null);
        PartitionLog log = PartitionLog.open(tmp.resolve("topic-0"), config, env, true);
        opened.add(log);
        return log;
    }

    /**
     * Asserts that {@code target} was renamed into place from {@code target.tmp} and that the very next thing the
     * layer saw was the fsync of the directory, holding the target and no longer the temp file.
     */
    private void assertDurablyRenamed(String target) {
        List<String> events = layer.events();
        int move = events.lastIndexOf("atomicMove " + target + ".tmp " + target);
        assertThat(move).as("rename of %s through the layer in %s", target, events).isNotNegative();
        assertThat(events.get(move - 1)).as("temp file fsynced before the rename").isEqualTo("force " + target + ".tmp");
        assertThat(events).hasSizeGreaterThan(move + 1);
        String sync = events.get(move + 1);
        assertThat(sync).startsWith("fsyncDirectory topic-0 ");
        List<String> entries = List.of(sync.substring(sync.indexOf('[') + 1, sync.length() - 1).split(", "));
        assertThat(entries).contains(target).doesNotContain(target + ".tmp");
    }

    @Test
    void everyCheckpointShouldBeRenamedIntoPlaceAndItsDirectoryFsyncedBeforeTheCallReturns() {
        // Given
        PartitionLog log = open(LogConfig.defaults());

        // When: the topic id, a new leader epoch, a roll (producer snapshot) and a flush (offsets checkpoint)
        log.writeTopicId(new Uuid(12L, 34L));
        assertDurablyRenamed(PartitionMetadataFile.FILE_NAME);
        log.appendAsLeader(values(time.milliseconds(), "a", "b"), 3, AppendOrigin.CLIENT);
        assertDurablyRenamed("leader-epoch-checkpoint");
        log.roll();
        assertDurablyRenamed(String.format("%020d", 2) + ".snapshot");
        log.flush(log.logEndOffset());

        // Then
        assertDurablyRenamed("log-offsets-checkpoint");
    }

    @Test
    void aCompactionSwapShouldFsyncTheDirectoryWithTheSwapNamesThenAfterTheCleanedSegmentTookItsName() {
        // Given
        PartitionLog log = open(LogConfig.builder().cleanupPolicy("compact").segmentBytes(600).fileDeleteDelayMs(0)
            .build());
        for (int i = 0; i < 200; i++) {
            log.appendAsLeader(keyed(time.milliseconds(), "k" + (i % 3), "v" + i), 0, AppendOrigin.CLIENT);
        }
        log.roll();
        layer.clear();

        // When
        new Cleaner(new Throttler(Double.MAX_VALUE, time)).cleanIfNeeded(log).orElseThrow();

        // Then: a directory fsync saw the cleaned segment as .swap beside the old one still in place (a power cut
        // after it leaves the swap for the loader to complete), before the old one was renamed .deleted
        String first = LogSegment.fileName(0);
        assertThat(layer.events()).anySatisfy(e -> assertThat(e)
            .startsWith("fsyncDirectory topic-0 ")
            .contains(first + LogSegment.LOG_SUFFIX + LogSegment.SWAP_SUFFIX)
            .contains(first + LogSegment.LOG_SUFFIX + ", ")
            .doesNotContain(LogSegment.DELETED_SUFFIX));
        // and one saw the swapped-in segment and the old one renamed .deleted, no .swap left
        assertThat(layer.events()).anySatisfy(e -> assertThat(e)
            .startsWith("fsyncDirectory topic-0 ")
            .contains(first + LogSegment.LOG_SUFFIX + ", ")
            .contains(first + LogSegment.LOG_SUFFIX + LogSegment.DELETED_SUFFIX)
            .doesNotContain(LogSegment.SWAP_SUFFIX));
    }

    @Test
    void aSwapCompletedByTheLoaderShouldBeRenamedIntoPlaceDurably() throws Exception {
        // Given: a crash left a cleaned segment's log as .swap next to the old one
        PartitionLog log = open(LogConfig.defaults());
        log.appendAsLeader(values(time.milliseconds(), "a", "b"), 0, AppendOrigin.CLIENT);
        log.close();
        opened.clear();
        Path dir = tmp.resolve("topic-0");
        String segment = LogSegment.fileName(0) + LogSegment.LOG_SUFFIX;
        Files.copy(dir.resolve(segment), dir.resolve(segment + LogSegment.SWAP_SUFFIX));
        layer.clear();

        // When
        open(LogConfig.defaults());

        // Then
        List<String> events = layer.events();
        int move = events.indexOf("atomicMove " + segment + LogSegment.SWAP_SUFFIX + " " + segment);
        assertThat(move).as("%s", events).isNotNegative();
        assertThat(events.get(move + 1)).startsWith("fsyncDirectory topic-0 ").contains(segment)
            .doesNotContain(LogSegment.SWAP_SUFFIX);
    }

    @Test
    void aSwapCutShortShouldKeepTheCleanedLogAndRebuildItsIndexes() throws Exception {
        // Given: a compacted log, its first segment's files kept as they were before a cleaning
        LogConfig config = LogConfig.builder().cleanupPolicy("compact").segmentBytes(600).fileDeleteDelayMs(0).build();
        PartitionLog log = open(config);
        for (int i = 0; i < 200; i++) {
            log.appendAsLeader(keyed(time.milliseconds() + i, "k" + (i % 3), "v" + i), 0, AppendOrigin.CLIENT);
        }
        log.roll();
        Path dir = tmp.resolve("topic-0");
        Path before = Files.createDirectories(tmp.resolve("before"));
        String stem = LogSegment.fileName(0);
        List<String> files = List.of(LogSegment.LOG_SUFFIX, LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX,
            LogSegment.TXN_INDEX_SUFFIX);
        for (String suffix : files) {
            if (Files.exists(dir.resolve(stem + suffix))) {
                Files.copy(dir.resolve(stem + suffix), before.resolve(stem + suffix));
            }
        }
        new Cleaner(new Throttler(Double.MAX_VALUE, time)).cleanIfNeeded(log).orElseThrow();
        List<String> cleaned = LogInvariants.verify(log);
        log.close();
        opened.clear();

        // When: a crash had cut the swap short: the cleaned log and offset index renamed .swap, the old segment's
        // files still in place (its time index among them)
        Files.move(dir.resolve(stem + LogSegment.LOG_SUFFIX), dir.resolve(stem + LogSegment.LOG_SUFFIX
            + LogSegment.SWAP_SUFFIX));
        Files.move(dir.resolve(stem + LogSegment.INDEX_SUFFIX), dir.resolve(stem + LogSegment.INDEX_SUFFIX
            + LogSegment.SWAP_SUFFIX));
        for (String suffix : files) {
            if (Files.exists(before.resolve(stem + suffix))) {
                Files.copy(before.resolve(stem + suffix), dir.resolve(stem + suffix),
                    StandardCopyOption.REPLACE_EXISTING);
            }
        }
        PartitionLog reopened = open(config);

        // Then: the cleaned log, with indexes that are its own
        assertThat(LogInvariants.verify(reopened)).isEqualTo(cleaned);
    }
}
