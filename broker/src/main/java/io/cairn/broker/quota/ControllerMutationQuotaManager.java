package io.cairn.broker.quota;

import io.cairn.log.Time;
import io.cairn.metadata.controller.ControllerMutationQuotas;
import java.util.List;

/**
 * The controller mutation quota (KIP-599, {@code controller_mutation_rate}) as Kafka's
 * {@code ControllerMutationQuotaManager} keeps it: per sensor of Kafka's user/client-id resolution (the one
 * {@link ClientQuotaManager} of this key), a {@link TokenBucket} of {@code controller.quota.window.num} samples of
 * {@code controller.quota.window.size.seconds} that refills at the quota's rate; each topic's partitions created or
 * deleted take that many credits.
 * <ul>
 *   <li>strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): while the credits are below zero a topic is
 *   refused (THROTTLING_QUOTA_EXCEEDED) and the response carries the time to get back to zero; otherwise the topic
 *   takes its partitions, however many, and is not throttled;</li>
 *   <li>permissive (older versions): every topic takes its partitions; one that leaves the credits below zero throttles
 *   the response by the time to get back to zero.</li>
 * </ul>
 * The active controller calls it ({@link ControllerMutationQuotas}); the quotas follow the metadata image through
 * {@link ClientQuotas}. Each sensor also measures Kafka's {@code ControllerMutation} metrics ({@link #sensorMetrics}):
 * the accepted partitions' rate, the bucket's credits and the mean throttle time of the client's throttled responses.
 * Thread-safe: each bucket is guarded by itself, never held together with its sensor's lock.
 */
public final class ControllerMutationQuotaManager implements ControllerMutationQuotas {

    /** The quota key this manager enforces. */
    public static final String KEY = "controller_mutation_rate";

    private final ClientQuotaManager sensors;
    private final Time time;

    /**
     * @param samples           {@code controller.quota.window.num}
     * @param windowSizeSeconds {@code controller.quota.window.size.seconds}
     */
    public ControllerMutationQuotaManager(int samples, int windowSizeSeconds, Time time) {
        this.sensors = new ClientQuotaManager(KEY, samples, windowSizeSeconds * 1000L, Long.MAX_VALUE);
        this.time = time;
    }

    ClientQuotaManager sensors() {
        return sensors;
    }

    /**
     * What each client's sensor measures now: Kafka's {@code ControllerMutation} metrics {@code mutation-rate}
     * (partitions created or deleted per second over the quota window), {@code tokens} and {@code throttle-time}.
     */
    public List<QuotaSensorMetrics> sensorMetrics() {
        return sensors.sensorMetrics(time.milliseconds());
    }

    @Override
    public MutationQuota newQuota(String user, String clientId, boolean strict) {
        if (!sensors.enabled()) {
            return MutationQuota.UNBOUNDED;
        }
        return new Quota(user, clientId, strict);
    }

    /** One request's quota: the bucket is looked up on each record, so an expired sensor never leaks into it. */
    private final class Quota implements MutationQuota {
        private final String user;
        private final String clientId;
        private final boolean strict;
        private int throttleTimeMs;

        Quota(String user, String clientId, boolean strict) {
            this.user = user;
            this.clientId = clientId;
            this.strict = strict;
        }

        @Override
        public boolean record(int partitions) {
            long now = time.milliseconds();
            ClientQuotaManager.BoundBucket bound = sensors.tokenBucket(user, clientId, now);
            if (bound == null) {
                return true;
            }
            TokenBucket bucket = bound.bucket();
            synchronized (bucket) {
                if (strict) {
                    double tokens = bucket.tokens(bound.rate(), now);
                    if (tokens < 0) {
                        throttleTimeMs = TokenBucket.throttleTimeMs(tokens, bound.rate());
                        return false;
                    }
                    bucket.record(partitions, bound.rate(), now);
                } else {
                    bucket.record(partitions, bound.rate(), now);
                    int throttle = TokenBucket.throttleTimeMs(bucket.tokens(bound.rate(), now), bound.rate());
                    if (throttle > 0) {
                        throttleTimeMs = throttle;
                    }
                }
            }
            // outside the bucket's lock: Kafka's sensor records the accepted mutations in its rate too
            sensors.recordRate(bound, partitions, now);
            return true;
        }

        @Override
        public int complete() {
            if (throttleTimeMs > 0) {
                sensors.recordThrottle(user, clientId, throttleTimeMs, time.milliseconds());
            }
            return throttleTimeMs;
        }

        @Override
        public int throttleTimeMs() {
            return throttleTimeMs;
        }
    }
}
