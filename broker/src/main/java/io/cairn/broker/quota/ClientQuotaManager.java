package io.cairn.broker.quota;

import io.cairn.metadata.image.ClientQuotaEntity;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One kind of client quota (the producer or the consumer byte rate, or the request-handler time), as Kafka's {@code
 * ClientQuotaManager} with its default quota callback enforces it.
 *
 * <p>A request is counted against a sensor named by metric tags (user, client-id), chosen as Kafka chooses them from
 * the most specific configured entity that matches: {@code <user, client-id>}, {@code <user, default client-id>}
 * (both tag user and client-id), {@code <user>} (tags the user only), {@code <default user, client-id>},
 * {@code <default user, default client-id>} (user and client-id), {@code <default user>} (the user), else the
 * client-id alone, whether or not a {@code <client-id>} or {@code <default client-id>} quota exists. Clients with the
 * same tags share one sensor, so a {@code <client-id>} quota bounds all users of that client id together. The bound of
 * a sensor is found from its tags in Kafka's order: for user and client-id {@code <user, client-id>},
 * {@code <user, default>}, {@code <default, client-id>}, {@code <default, default>}; for a user {@code <user>} then
 * {@code <default user>}; for a client id {@code <client-id>} then {@code <default client-id>}. A sensor measures a
 * {@link QuotaRate} of {@code quota.window.num} samples of {@code quota.window.size.seconds}; a value that takes the
 * rate above the bound is still counted, and the throttle time is Kafka's
 * {@code round((rate - bound) / bound × windowSize)}.
 *
 * <p>Sensors are kept only for clients under a quota (Kafka keeps one for every client once any quota exists; without
 * a bound it never throttles), at most {@link #MAX_SENSORS} of them, least recently used first out, and one idle
 * for an hour is dropped as Kafka's sensors expire ({@code inactiveSensorExpirationTimeSeconds}).
 *
 * <p>Thread-safe: the quotas are replaced whole through a volatile field (written by the metadata listener, read by
 * every network thread); the sensor map is guarded by itself and each sensor by its own lock.
 */
final class ClientQuotaManager {

    /** How many sensors one quota kind keeps at most: bounds the memory a flood of client ids can take. */
    static final int MAX_SENSORS = 50_000;
    /** Kafka's {@code ClientQuotaManager.InactiveSensorExpirationTimeSeconds}, in ms. */
    static final long INACTIVE_SENSOR_EXPIRATION_MS = 3_600_000L;

    private final String key;
    private final int samples;
    private final long windowMs;
    private final long maxThrottleMs;
    /** The configured bounds of this kind by entity; replaced whole by {@link #update}. */
    private volatile Map<ClientQuotaEntity, Double> quotas = Map.of();
    /** Sensors by tags, in access order. */
    private final LinkedHashMap<Tags, Sensor> sensors = new LinkedHashMap<>(16, 0.75f, true);

    /** The metric tags of a sensor: "" for a tag not used. */
    record Tags(String user, String clientId) {
    }

    /**
     * A sensor's token bucket with the bound that applies to it now (the controller mutation quota), and the sensor
     * for {@link #recordRate}.
     */
    record BoundBucket(TokenBucket bucket, double rate, Sensor sensor) {
    }

    static final class Sensor {
        private final QuotaRate rate;
        /** Made on first use by {@link #tokenBucket}; guarded by the sensor, the credits by the bucket itself. */
        private TokenBucket bucket;
        /** Kafka's throttle-time sensor: an average over its default metric config (2 samples of 30 s). */
        private final SampledAvg throttleTime = new SampledAvg(2, 30_000L);
        private long lastRecordMs;

        Sensor(int samples, long windowMs, long nowMs) {
            this.rate = new QuotaRate(samples, windowMs);
            this.lastRecordMs = nowMs;
        }
    }

    /**
     * @param key      the quota key this manager enforces ({@code producer_byte_rate} or {@code consumer_byte_rate})
     * @param samples  {@code quota.window.num}
     * @param windowMs {@code quota.window.size.seconds} in ms
     * @param maxThrottleMs the longest throttle time returned (one window for {@code request_percentage}, as Kafka's
     *                 {@code ClientRequestQuotaManager}; unbounded for the byte rates)
     */
    ClientQuotaManager(String key, int samples, long windowMs, long maxThrottleMs) {
        this.key = key;
        this.samples = samples;
        this.windowMs = windowMs;
        this.maxThrottleMs = maxThrottleMs;
    }

    String key() {
        return key;
    }

    /** Takes this kind's bounds from every entity's quota values (entity to key to value). */
    void update(Map<ClientQuotaEntity, Map<String, Double>> all) {
        Map<ClientQuotaEntity, Double> mine = new LinkedHashMap<>();
        all.forEach((entity, values) -> {
            Double value = values.get(key);
            if (value != null) {
                mine.put(entity, value);
            }
        });
        quotas = Map.copyOf(mine);
    }

    /** Whether any entity has a bound of this kind (Kafka's {@code quotasEnabled}). */
    boolean enabled() {
        return !quotas.isEmpty();
    }

    /**
     * Counts {@code value} for the client and returns how long it must wait, 0 when it is within its quota (Kafka's
     * {@code recordAndGetThrottleTimeMs}).
     */
    int recordAndGetThrottleTimeMs(String user, String clientId, double value, long nowMs) {
        Map<ClientQuotaEntity, Double> bounds = quotas;
        if (bounds.isEmpty()) {
            return 0;
        }
        Tags tags = tags(bounds, user, clientId);
        Double bound = bound(bounds, tags);
        if (bound == null) {
            return 0;
        }
        Sensor sensor = sensor(tags, nowMs);
        synchronized (sensor) {
            sensor.lastRecordMs = nowMs;
            sensor.rate.record(value, nowMs);
            double rate = sensor.rate.measure(nowMs);
            if (rate <= bound) {
                return 0;
            }
            long throttle = Math.round((rate - bound) / bound * sensor.rate.windowSizeMs(nowMs));
            return (int) Math.min(Math.min(throttle, maxThrottleMs), Integer.MAX_VALUE);
        }
    }

    /**
     * The most that can be recorded at once without being throttled for sure: the bound times the
     * {@code samples - 1} whole windows a rate is at least measured over (Kafka's {@code getMaxValueInQuotaWindow}),
     * {@link Double#MAX_VALUE} for a client without a bound.
     */
    double maxValueInQuotaWindow(String user, String clientId) {
        Map<ClientQuotaEntity, Double> bounds = quotas;
        Double bound = bounds.isEmpty() ? null : bound(bounds, tags(bounds, user, clientId));
        return bound == null ? Double.MAX_VALUE : bound * (samples - 1) * (windowMs / 1000.0);
    }

    /**
     * The token bucket of the client's sensor with its bound (Kafka's controller mutation sensors measure a
     * {@code TokenBucket}), null when no bound applies; the caller synchronizes on the bucket.
     */
    BoundBucket tokenBucket(String user, String clientId, long nowMs) {
        Map<ClientQuotaEntity, Double> bounds = quotas;
        if (bounds.isEmpty()) {
            return null;
        }
        Tags tags = tags(bounds, user, clientId);
        Double bound = bound(bounds, tags);
        if (bound == null) {
            return null;
        }
        Sensor sensor = sensor(tags, nowMs);
        synchronized (sensor) {
            sensor.lastRecordMs = nowMs;
            if (sensor.bucket == null) {
                sensor.bucket = new TokenBucket(samples, windowMs);
            }
            return new BoundBucket(sensor.bucket, bound, sensor);
        }
    }

    /** Counts {@code value} in the rate of {@code bound}'s sensor (Kafka's mutation sensors measure both). */
    void recordRate(BoundBucket bound, double value, long nowMs) {
        synchronized (bound.sensor()) {
            bound.sensor().rate.record(value, nowMs);
        }
    }

    /**
     * Records the throttle time of a response to the client in its sensor's {@code throttle-time} (Kafka's
     * {@code ClientQuotaManager.throttle}); nothing when no bound applies to it.
     */
    void recordThrottle(String user, String clientId, int throttleTimeMs, long nowMs) {
        Sensor sensor = boundedSensor(user, clientId, nowMs);
        if (sensor == null) {
            return;
        }
        synchronized (sensor) {
            sensor.throttleTime.record(throttleTimeMs, nowMs);
        }
    }

    /** The client's sensor when a bound applies to it, else null (no quotas, or none for this client). */
    private Sensor boundedSensor(String user, String clientId, long nowMs) {
        Map<ClientQuotaEntity, Double> bounds = quotas;
        if (bounds.isEmpty()) {
            return null;
        }
        Tags tags = tags(bounds, user, clientId);
        return bound(bounds, tags) == null ? null : sensor(tags, nowMs);
    }

    /** What every sensor kept measures now (read at scrape time; a sensor idle for an hour is gone). */
    List<QuotaSensorMetrics> sensorMetrics(long nowMs) {
        Map<Tags, Sensor> current;
        synchronized (sensors) {
            expireIdle(nowMs);
            // a copy, so that reading does not reorder the access-ordered map nor hold its lock while measuring
            current = new HashMap<>(sensors);
        }
        Map<ClientQuotaEntity, Double> bounds = quotas;
        List<QuotaSensorMetrics> all = new ArrayList<>(current.size());
        current.forEach((tags, sensor) -> {
            double rate;
            double throttle;
            TokenBucket bucket;
            synchronized (sensor) {
                rate = sensor.rate.measure(nowMs);
                throttle = sensor.throttleTime.measure(nowMs);
                bucket = sensor.bucket;
            }
            Double bound = bound(bounds, tags);
            double tokens = Double.NaN;
            if (bucket != null && bound != null) {
                synchronized (bucket) {
                    tokens = bucket.tokens(bound, nowMs);
                }
            }
            all.add(new QuotaSensorMetrics(tags.user(), tags.clientId(), rate, tokens, throttle));
        });
        return all;
    }

    /** Takes back {@code value} recorded for a client whose response was not sent (Kafka's throttled fetch). */
    void unrecord(String user, String clientId, double value, long nowMs) {
        Sensor sensor = boundedSensor(user, clientId, nowMs);
        if (sensor == null) {
            return;
        }
        synchronized (sensor) {
            sensor.rate.record(-value, nowMs);
        }
    }

    /** How many sensors are kept. */
    int sensorCount() {
        synchronized (sensors) {
            return sensors.size();
        }
    }

    private Sensor sensor(Tags tags, long nowMs) {
        synchronized (sensors) {
            expireIdle(nowMs);
            Sensor sensor = sensors.get(tags);
            if (sensor == null) {
                if (sensors.size() >= MAX_SENSORS) {
                    Iterator<Sensor> eldest = sensors.values().iterator();
                    eldest.next();
                    eldest.remove();
                }
                sensor = new Sensor(samples, windowMs, nowMs);
                sensors.put(tags, sensor);
            }
            return sensor;
        }
    }

    /** Drops the least recently used sensors idle for an hour; the rest are more recent. Guarded by sensors. */
    private void expireIdle(long nowMs) {
        Iterator<Sensor> it = sensors.values().iterator();
        while (it.hasNext()) {
            Sensor sensor = it.next();
            long last;
            synchronized (sensor) {
                last = sensor.lastRecordMs;
            }
            if (nowMs - last < INACTIVE_SENSOR_EXPIRATION_MS) {
                return;
            }
            it.remove();
        }
    }

    /** Kafka's {@code DefaultQuotaCallback.quotaMetricTags}. */
    static Tags tags(Map<ClientQuotaEntity, Double> bounds, String user, String clientId) {
        if (bounds.containsKey(ClientQuotaEntity.of(user, clientId, true, true))
                || bounds.containsKey(ClientQuotaEntity.of(user, null, true, true))) {
            return new Tags(user, clientId);
        }
        if (bounds.containsKey(ClientQuotaEntity.of(ClientQuotaEntity.USER, user))) {
            return new Tags(user, "");
        }
        if (bounds.containsKey(ClientQuotaEntity.of(null, clientId, true, true))
                || bounds.containsKey(ClientQuotaEntity.of(null, null, true, true))) {
            return new Tags(user, clientId);
        }
        if (bounds.containsKey(ClientQuotaEntity.of(ClientQuotaEntity.USER, null))) {
            return new Tags(user, "");
        }
        return new Tags("", clientId);
    }

    /** Kafka's {@code DefaultQuotaCallback.quotaLimit}: the bound of a sensor, null when none applies. */
    static Double bound(Map<ClientQuotaEntity, Double> bounds, Tags tags) {
        boolean user = !tags.user().isEmpty();
        boolean client = !tags.clientId().isEmpty();
        if (user && client) {
            return first(bounds, ClientQuotaEntity.of(tags.user(), tags.clientId(), true, true),
                    ClientQuotaEntity.of(tags.user(), null, true, true),
                    ClientQuotaEntity.of(null, tags.clientId(), true, true),
                    ClientQuotaEntity.of(null, null, true, true));
        }
        if (user) {
            return first(bounds, ClientQuotaEntity.of(ClientQuotaEntity.USER, tags.user()),
                    ClientQuotaEntity.of(ClientQuotaEntity.USER, null));
        }
        if (client) {
            return first(bounds, ClientQuotaEntity.of(ClientQuotaEntity.CLIENT_ID, tags.clientId()),
                    ClientQuotaEntity.of(ClientQuotaEntity.CLIENT_ID, null));
        }
        return null;
    }

    private static Double first(Map<ClientQuotaEntity, Double> bounds, ClientQuotaEntity... entities) {
        for (ClientQuotaEntity entity : entities) {
            Double bound = bounds.get(entity);
            if (bound != null) {
                return bound;
            }
        }
        return null;
    }
}
