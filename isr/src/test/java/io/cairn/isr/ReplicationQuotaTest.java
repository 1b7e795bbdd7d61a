package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplicationQuotaTest {

    /** A clock the test moves by hand. */
    private static final class ManualTime implements Time {
        private long nowMs = 1_000_000L;

        @Override
        public long milliseconds() {
            return nowMs;
        }

        @Override
        public long nanoseconds() {
            return nowMs * 1_000_000L;
        }

        @Override
        public void sleep(long ms) {
            nowMs += ms;
        }
    }

    private final ManualTime time = new ManualTime();
    private final ReplicationQuota quota = new ReplicationQuota(time);

    @Test
    void throttledReplicasNameThisBrokerOrEveryReplica() {
        // When
        quota.updateThrottled("a", "0:1,1:2,2:1", 1);
        quota.updateThrottled("b", "*", 1);
        quota.updateThrottled("c", "0:2", 1);

        // Then
        assertThat(quota.isThrottled(new TopicPartition("a", 0))).isTrue();
        assertThat(quota.isThrottled(new TopicPartition("a", 1))).isFalse();
        assertThat(quota.isThrottled(new TopicPartition("a", 2))).isTrue();
        assertThat(quota.isThrottled(new TopicPartition("b", 7))).isTrue();
        assertThat(quota.isThrottled(new TopicPartition("c", 0))).isFalse();
        quota.updateThrottled("a", "", 1);
        quota.removeTopic("b");
        assertThat(quota.isThrottled(new TopicPartition("a", 0))).isFalse();
        assertThat(quota.isThrottled(new TopicPartition("b", 7))).isFalse();
    }

    @Test
    void rateCountsAtLeastTenWholeWindowsAsKafkasDoes() {
        // Given a bound of 1000 B/s
        quota.updateBound(1_000);

        // When 10000 bytes arrive at once: 10000 B over (at least) 10 s is 1000 B/s, not above the bound
        quota.record(10_000);
        assertThat(quota.rate()).isEqualTo(1_000.0);
        assertThat(quota.isQuotaExceeded()).isFalse();

        // Then one more byte exceeds it, and the samples age out after 11 windows
        quota.record(1);
        assertThat(quota.isQuotaExceeded()).isTrue();
        time.sleep(12_000);
        assertThat(quota.rate()).isZero();
        assertThat(quota.isQuotaExceeded()).isFalse();
    }

    @Test
    void anUnboundedQuotaIsNeverExceeded() {
        // When
        quota.record(Long.MAX_VALUE / 4);

        // Then
        assertThat(quota.isQuotaExceeded()).isFalse();
    }

    @Test
    void theBrokersOwnRateWinsOverTheClusterDefault() {
        // Then
        assertThat(ReplicationQuota.boundOf(Map.of("leader.replication.throttled.rate", "10"),
                Map.of("leader.replication.throttled.rate", "20"), ReplicationQuota.LEADER_RATE)).isEqualTo(10);
        assertThat(ReplicationQuota.boundOf(Map.of(), Map.of("leader.replication.throttled.rate", "20"),
                ReplicationQuota.LEADER_RATE)).isEqualTo(20);
        assertThat(ReplicationQuota.boundOf(Map.of(), Map.of(), ReplicationQuota.LEADER_RATE))
                .isEqualTo(Long.MAX_VALUE);
    }
}
