package io.cairn.broker.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.MockTime;
import io.cairn.metadata.controller.ControllerMutationQuotas.MutationQuota;
import io.cairn.metadata.image.ClientQuotaEntity;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Kafka's controller mutation quota (KIP-599) on explicit clock values: a token bucket of 11 samples of 1 s, so a
 * quota of 2 partitions per second allows a burst of 22 and refills at 2 per second.
 */
class ControllerMutationQuotaManagerTest {

    private final MockTime clock = new MockTime(1_000_000L);

    private ControllerMutationQuotaManager manager(double rate) {
        ControllerMutationQuotaManager manager = new ControllerMutationQuotaManager(11, 1, clock);
        manager.sensors().update(Map.of(ClientQuotaEntity.of(ClientQuotaEntity.CLIENT_ID, "app"),
                Map.of(ControllerMutationQuotaManager.KEY, rate)));
        return manager;
    }

    @Test
    void aStrictQuotaTakesABurstWholeThenRefusesUntilTheBucketRefills() {
        // Given: 2 partitions per second, a burst of 22
        ControllerMutationQuotaManager manager = manager(2.0);
        MutationQuota first = manager.newQuota("ANONYMOUS", "app", true);

        // When: 30 partitions (the bucket goes to -8), then one more in the same request and in a later one
        boolean accepted = first.record(30);
        boolean secondTopic = first.record(1);
        MutationQuota later = manager.newQuota("ANONYMOUS", "app", true);
        clock.sleep(3_000);
        boolean afterThreeSeconds = later.record(1);
        clock.sleep(1_000);
        boolean afterFourSeconds = later.record(1);

        // Then: the burst is taken without a throttle; the next topics are refused with the time to get back to 0
        assertThat(accepted).isTrue();
        assertThat(secondTopic).isFalse();
        assertThat(first.throttleTimeMs()).isEqualTo(4_000);
        assertThat(afterThreeSeconds).isFalse();
        assertThat(later.throttleTimeMs()).isEqualTo(1_000);
        assertThat(afterFourSeconds).isTrue();
    }

    @Test
    void aPermissiveQuotaAcceptsEverythingAndThrottlesOnceTheBucketIsBelowZero() {
        // Given
        ControllerMutationQuotaManager manager = manager(2.0);
        MutationQuota quota = manager.newQuota("ANONYMOUS", "app", false);

        // When
        boolean withinBurst = quota.record(20);
        int throttleWithinBurst = quota.throttleTimeMs();
        boolean overBurst = quota.record(10);

        // Then: 22 - 30 = -8 credits, 4 s at 2 per second
        assertThat(withinBurst).isTrue();
        assertThat(throttleWithinBurst).isZero();
        assertThat(overBurst).isTrue();
        assertThat(quota.throttleTimeMs()).isEqualTo(4_000);
    }

    @Test
    void clientsWithoutAQuotaAreNeverCountedOrThrottled() {
        // Given
        ControllerMutationQuotaManager manager = manager(1.0);
        MutationQuota other = manager.newQuota("ANONYMOUS", "other", true);
        MutationQuota none = new ControllerMutationQuotaManager(11, 1, clock).newQuota("ANONYMOUS", "app", true);

        // When
        boolean otherAccepted = other.record(1_000) && other.record(1_000);
        boolean noneAccepted = none.record(1_000) && none.record(1_000);

        // Then
        assertThat(otherAccepted).isTrue();
        assertThat(noneAccepted).isTrue();
        assertThat(other.throttleTimeMs()).isZero();
        assertThat(none).isSameAs(MutationQuota.UNBOUNDED);
    }
}
