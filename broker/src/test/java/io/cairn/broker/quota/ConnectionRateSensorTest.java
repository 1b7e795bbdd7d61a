package io.cairn.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Kafka's connection-accept rate (KIP-612) and its bounded throttle time, on explicit clock values. */
class ConnectionRateSensorTest {

    @Test
    void connectionsOverTheRateAreThrottledForAtMostOneWindow() {
        // Given: 11 samples of 1 s, so a first burst is spread over 10 s
        ConnectionRateSensor sensor = new ConnectionRateSensor(11, 1_000);
        long now = 5_000_000L;

        // When: 10 connections at 1 per second are within the rate, the 11th takes it to 1.1
        int throttled = 0;
        for (int i = 0; i < 10; i++) {
            throttled += sensor.recordAndGetThrottleTimeMs(1, now);
        }
        int eleventh = sensor.recordAndGetThrottleTimeMs(1, now);
        int twelfth = sensor.recordAndGetThrottleTimeMs(1, now);

        // Then: (1.1 - 1) / 1 × 10 s = 1 s, and 2 s capped at the window
        assertThat(throttled).isZero();
        assertThat(eleventh).isEqualTo(1_000);
        assertThat(twelfth).isEqualTo(1_000);
    }

    @Test
    void aThrottleIsProportionalToTheExcessAndATakenBackConnectionDoesNotCount() {
        // Given: 2 samples of 1 s, a rate of 4 per second
        ConnectionRateSensor sensor = new ConnectionRateSensor(2, 1_000);
        long now = 5_000_000L;
        for (int i = 0; i < 4; i++) {
            sensor.recordAndGetThrottleTimeMs(4, now);
        }

        // When: a fifth is counted (5 over 1 s) and taken back, then a fifth again
        int fifth = sensor.recordAndGetThrottleTimeMs(4, now);
        sensor.unrecord(now);
        double afterUnrecord = sensor.rate(now);
        int again = sensor.recordAndGetThrottleTimeMs(4, now);

        // Then: (5 - 4) / 4 × 1 s
        assertThat(fifth).isEqualTo(250);
        assertThat(afterUnrecord).isEqualTo(4.0);
        assertThat(again).isEqualTo(250);
    }

    @Test
    void withoutALimitNothingIsThrottledButTheRateIsMeasured() {
        // Given
        ConnectionRateSensor sensor = new ConnectionRateSensor(11, 1_000);

        // When
        int throttle = 0;
        for (int i = 0; i < 100; i++) {
            throttle += sensor.recordAndGetThrottleTimeMs(Integer.MAX_VALUE, 1_000L);
        }

        // Then
        assertThat(throttle).isZero();
        assertThat(sensor.rate(1_000L)).isEqualTo(10.0);
    }
}
