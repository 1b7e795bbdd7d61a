package io.cairn.testkit.faults;

import static io.cairn.testkit.faults.History.dataValue;
import static io.cairn.testkit.faults.History.txnValue;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HistoryCheckerTest {

    private final History history = new History();

    private History.Outcome committedTxn(long txn, int records) {
        history.began(txn, java.util.stream.IntStream.range(0, records).mapToObj(i -> txnValue(txn, i)).toList());
        return History.Outcome.COMMITTED;
    }

    @Test
    void aCleanHistoryShouldHaveNoFindings() {
        // Given
        history.acked(dataValue("a", 0, 0));
        history.acked(dataValue("a", 0, 1));
        history.ended(1, committedTxn(1, 2));
        history.began(2, List.of(txnValue(2, 0)));
        history.ended(2, History.Outcome.ABORTED);
        history.acknowledgedCommit(0, 5, 1);
        history.committedOffset(0, 5, 2);
        history.acknowledgedCommit(0, 7, 3);
        history.committedOffset(0, 7, 4);
        // A read may show a commit not acknowledged (yet, or ever) and a later read the acknowledged one
        history.committedOffset(0, 9, 5);
        history.committedOffset(0, 7, 6);
        // A read sent before the acknowledgement of 12 may still show 7
        history.committedOffset(0, 7, 7);
        history.acknowledgedCommit(0, 12, 8);

        // When
        HistoryChecker.Findings findings = HistoryChecker.check(history,
            Map.of(0, List.of(dataValue("a", 0, 0), dataValue("b", 0, 0), dataValue("a", 0, 1))),
            List.of(txnValue(1, 0), txnValue(1, 1)));

        // Then
        assertThat(findings.clean()).as(findings.summary()).isTrue();
    }

    @Test
    void everyKindOfAnomalyShouldBeFoundAndCounted() {
        // Given: a lost ack, a duplicate, a reorder, an aborted record visible (at the end and while running), a
        // committed transaction half visible and another not at all, and a committed offset read back below an
        // acknowledged commit
        history.acked(dataValue("a", 0, 0));
        history.acked(dataValue("a", 0, 1));
        history.acked(dataValue("a", 0, 2));
        history.acked(dataValue("a", 1, 9));
        history.began(3, List.of(txnValue(3, 0)));
        history.ended(3, History.Outcome.ABORTED);
        history.seenCommitted(txnValue(3, 0));
        history.ended(4, committedTxn(4, 2));
        history.ended(5, committedTxn(5, 1));
        history.ended(6, History.Outcome.UNKNOWN);
        history.began(6, List.of(txnValue(6, 0)));
        history.acknowledgedCommit(1, 9, 1);
        history.committedOffset(1, 4, 2);

        // When
        HistoryChecker.Findings findings = HistoryChecker.check(history,
            Map.of(0, List.of(dataValue("a", 0, 0), dataValue("a", 0, 2), dataValue("a", 0, 1), dataValue("a", 0, 1))),
            List.of(txnValue(3, 0), txnValue(4, 0), txnValue(6, 0)));

        // Then
        assertThat(findings.counts()).containsEntry("lost", 1).containsEntry("duplicated", 1)
            .containsEntry("reordered", 1).containsEntry("abortedVisible", 2).containsEntry("partialTxns", 2)
            .containsEntry("offsetsBackwards", 1);
        assertThat(findings.anomalies().get("lost")).containsExactly("a:1:9");
        assertThat(findings.anomalies().get("partialTxns")).containsExactlyInAnyOrder("t4 (COMMITTED): 1 of 2",
            "t5 (COMMITTED): 0 of 1");
        assertThat(findings.clean()).isFalse();
        assertThat(findings.summary()).contains("lost=1").contains("offsetsBackwards=1");
    }

    @Test
    void theSameSeedShouldDrawTheSameScheduleAndAnotherSeedAnother() {
        assertThat(FaultSchedule.draw(42, 6, 3)).isEqualTo(FaultSchedule.draw(42, 6, 3));
        assertThat(FaultSchedule.draw(42, 6, 3)).isNotEqualTo(FaultSchedule.draw(43, 6, 3));
        assertThat(FaultSchedule.draw(7, 200, 3).faults()).extracting(FaultSchedule.Fault::kind)
            .contains(FaultSchedule.Kind.KILL, FaultSchedule.Kind.PAUSE, FaultSchedule.Kind.BOUNCE,
                FaultSchedule.Kind.PARTITION)
            .doesNotContain(FaultSchedule.Kind.POWER);
        assertThat(FaultSchedule.draw(7, 200, 3).faults()).allSatisfy(f -> {
            assertThat(f.durationMs()).isBetween(1_000L, 8_000L);
            assertThat(f.partition()).isBetween(0, 2);
        });
    }
}
