package io.cairn.isr.fetcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.epoch.EpochEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Kafka's truncation offsets ({@code getOffsetTruncationState}), case by case. */
class TruncationPointTest {

    /** A follower with epoch 2 from offset 10 and epoch 5 from 30, its log ending at 42. */
    private static final List<EpochEntry> HISTORY = List.of(new EpochEntry(2, 10), new EpochEntry(5, 30));
    private static final long END = 42;

    @Test
    void theLeadersAnswerIsMetWithTheFollowersHistoryAndNeverPassesItsLogEnd() {
        // No end offset: the fetch offset
        assertThat(TruncationPoint.offset(7, END, HISTORY, -1, -1)).isEqualTo(7);
        // An end offset without epoch: as it is, bounded by the log end
        assertThat(TruncationPoint.offset(7, END, HISTORY, -1, 35)).isEqualTo(35);
        assertThat(TruncationPoint.offset(7, END, HISTORY, -1, 50)).isEqualTo(42);
        // An epoch both have: the smaller end
        assertThat(TruncationPoint.offset(7, END, HISTORY, 2, 25)).isEqualTo(25);
        assertThat(TruncationPoint.offset(7, END, HISTORY, 2, 33)).isEqualTo(30);
        assertThat(TruncationPoint.offset(7, END, HISTORY, 5, 60)).isEqualTo(42);
        // An epoch the follower lacks (4): where its epoch 2 ends
        assertThat(TruncationPoint.offset(7, END, HISTORY, 4, 38)).isEqualTo(30);
        // An epoch older than the follower's history: itself, ending where the history starts
        assertThat(TruncationPoint.offset(7, END, HISTORY, 1, 12)).isEqualTo(10);
        // A history that cannot place the epoch (none): the leader's end
        assertThat(TruncationPoint.offset(7, END, List.of(), 3, 20)).isEqualTo(20);
    }
}
