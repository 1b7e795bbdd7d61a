package io.cairn.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.MockClock;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The millisecond summaries' quantiles, window and buckets, on a hand-driven clock. */
class MillisSummaryTest {

    private static final double[] QUANTILES = {0.5, 0.99};

    private final MockClock clock = new MockClock();
    private final MillisSummary summary = new MillisSummary(clock);

    @Test
    void quantilesShouldBeWithinABucketOfTheTrueValues() {
        // Given
        for (int ms = 1; ms <= 1000; ms++) {
            summary.record(ms);
        }

        // When
        double[] values = summary.quantilesAndMax(QUANTILES);

        // Then
        assertThat(values[0]).isCloseTo(500, within(500.0 / MillisSummary.SUB_BUCKETS));
        assertThat(values[1]).isCloseTo(990, within(990.0 / MillisSummary.SUB_BUCKETS));
        assertThat(values[2]).isEqualTo(1000);
        assertThat(summary.count()).isEqualTo(1000);
        assertThat(summary.sum()).isEqualTo(500_500);
    }

    @Test
    void valuesOlderThanTwoWindowsShouldLeaveTheQuantilesButNotTheCountAndSum() {
        // Given
        summary.record(250);
        clock.add(2L * MillisSummary.WINDOW_SECONDS, TimeUnit.SECONDS);
        summary.record(0.5);

        // When
        double[] values = summary.quantilesAndMax(QUANTILES);

        // Then
        assertThat(values[1]).isEqualTo(0.5);
        assertThat(values[2]).isEqualTo(0.5);
        assertThat(summary.count()).isEqualTo(2);
        assertThat(summary.sum()).isEqualTo(250.5);
    }

    @Test
    void theValuesOfThePreviousWindowShouldStillCount() {
        // Given
        summary.record(250);
        clock.add(MillisSummary.WINDOW_SECONDS, TimeUnit.SECONDS);
        summary.record(1);

        // When
        double[] values = summary.quantilesAndMax(QUANTILES);

        // Then
        assertThat(values[2]).isEqualTo(250);
        assertThat(values[1]).isCloseTo(250, within(250.0 / MillisSummary.SUB_BUCKETS));
    }

    @Test
    void bucketsShouldCoverEveryValueInOrder() {
        // When / Then
        int previous = -1;
        for (long units = 0; units < 1_000_000; units += 7) {
            int bucket = MillisSummary.bucket(units);
            assertThat(bucket).isGreaterThanOrEqualTo(previous);
            assertThat(MillisSummary.middle(bucket)).isCloseTo(units, within(Math.max(1, units / 16.0)));
            previous = bucket;
        }
        assertThat(MillisSummary.bucket(Long.MAX_VALUE)).isEqualTo(MillisSummary.BUCKETS - 1);
    }

    @Test
    void noValuesShouldGiveZeroQuantiles() {
        // When
        double[] values = summary.quantilesAndMax(QUANTILES);

        // Then
        assertThat(values).containsExactly(0, 0, 0);
    }
}
