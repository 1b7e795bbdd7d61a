package io.cairn.log.epoch;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.io.FileLayer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LeaderEpochCacheTest {

    @TempDir
    Path tmp;

    @Test
    void cacheShouldPersistInKafkasFormatAndAnswerEndOffsetQueries() throws Exception {
        // Given
        LeaderEpochCache cache = new LeaderEpochCache(FileLayer.DEFAULT, tmp);
        cache.assign(1, 0);
        cache.assign(1, 5);
        cache.assign(3, 10);
        cache.assign(2, 12);
        cache.assign(5, 20);

        // When
        LeaderEpochCache reloaded = new LeaderEpochCache(FileLayer.DEFAULT, tmp);

        // Then
        assertThat(Files.readAllLines(tmp.resolve("leader-epoch-checkpoint")))
            .containsExactly("0", "3", "1 0", "3 10", "5 20");
        assertThat(reloaded.epochEntries()).containsExactly(new EpochEntry(1, 0), new EpochEntry(3, 10),
            new EpochEntry(5, 20));
        assertThat(reloaded.endOffsetFor(1, 30)).isEqualTo(new EpochEntry(1, 10));
        assertThat(reloaded.endOffsetFor(2, 30)).isEqualTo(new EpochEntry(1, 10));
        assertThat(reloaded.endOffsetFor(5, 30)).isEqualTo(new EpochEntry(5, 30));
        assertThat(reloaded.endOffsetFor(0, 30)).isEqualTo(new EpochEntry(0, 0));
        assertThat(reloaded.epochForOffset(15)).isEqualTo(3);
    }

    @Test
    void endOffsetForFollowsKafkasLeaderEpochFileCacheOverAnyHistory() {
        // A history with epoch 2 from offset 10 and epoch 5 from 30, its log ending at 42
        List<EpochEntry> history = List.of(new EpochEntry(2, 10), new EpochEntry(5, 30));

        // The latest epoch ends at the log end; an unknown epoch between ends where the next known one starts
        assertThat(LeaderEpochCache.endOffsetFor(history, 5, 42)).isEqualTo(new EpochEntry(5, 42));
        assertThat(LeaderEpochCache.endOffsetFor(history, 4, 42)).isEqualTo(new EpochEntry(2, 30));
        // Older than the whole history: itself, ending where the history starts
        assertThat(LeaderEpochCache.endOffsetFor(history, 1, 42)).isEqualTo(new EpochEntry(1, 10));
        // Newer than the history, undefined, or no history at all
        assertThat(LeaderEpochCache.endOffsetFor(history, 6, 42)).isEqualTo(LeaderEpochCache.UNDEFINED);
        assertThat(LeaderEpochCache.endOffsetFor(history, -1, 42)).isEqualTo(LeaderEpochCache.UNDEFINED);
        assertThat(LeaderEpochCache.endOffsetFor(List.of(), 1, 42)).isEqualTo(LeaderEpochCache.UNDEFINED);
    }

    @Test
    void truncationShouldDropEpochsFromTheEndAndMoveTheStart() {
        // Given
        LeaderEpochCache cache = new LeaderEpochCache(FileLayer.DEFAULT, tmp);
        cache.assign(1, 0);
        cache.assign(2, 10);
        cache.assign(4, 20);

        // When
        cache.truncateFromEnd(20);
        cache.truncateFromStart(12);

        // Then
        assertThat(cache.epochEntries()).containsExactly(new EpochEntry(2, 12));
        assertThat(new LeaderEpochCache(FileLayer.DEFAULT, tmp).epochEntries())
            .containsExactly(new EpochEntry(2, 12));
    }
}
