package io.cairn.broker.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.MockClock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The idle fraction of a thread pool between two reads, from its busy time and a hand-driven clock. */
class IdleRatioTest {

    private final MockClock clock = new MockClock();
    private final AtomicLong busyNanos = new AtomicLong();

    @Test
    void idleShouldBeTheShareOfThreadTimeNotBusySinceThePreviousRead() {
        // Given: two threads, 1 s of wall time, 0.5 s busy in all
        IdleRatio ratio = new IdleRatio(clock, busyNanos::get, () -> 2);
        clock.add(1, TimeUnit.SECONDS);
        busyNanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));

        // When
        double idle = ratio.read();

        // Then
        assertThat(idle).isEqualTo(0.75);
    }

    @Test
    void eachReadShouldCoverOnlyTheTimeSinceThePreviousOne() {
        // Given
        IdleRatio ratio = new IdleRatio(clock, busyNanos::get, () -> 1);
        clock.add(1, TimeUnit.SECONDS);
        busyNanos.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertThat(ratio.read()).isZero();
        clock.add(1, TimeUnit.SECONDS);

        // When
        double idle = ratio.read();

        // Then
        assertThat(idle).isEqualTo(1.0);
    }

    @Test
    void aReadWithNoTimePassedShouldRepeatThePreviousAnswer() {
        // Given
        IdleRatio ratio = new IdleRatio(clock, busyNanos::get, () -> 1);
        clock.add(1, TimeUnit.SECONDS);
        busyNanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(250));
        double first = ratio.read();

        // When
        double second = ratio.read();

        // Then
        assertThat(second).isEqualTo(first).isEqualTo(0.75);
    }
}
