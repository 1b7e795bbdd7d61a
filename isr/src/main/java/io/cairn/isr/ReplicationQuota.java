package io.cairn.isr;

import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One side of KIP-73's replication throttle (Kafka's {@code ReplicationQuotaManager}): the partitions throttled on
 * this broker (from the topic's {@code leader.replication.throttled.replicas} or
 * {@code follower.replication.throttled.replicas}: {@code *} or {@code partition:broker} items naming this broker)
 * and the bound in bytes per second ({@code leader.replication.throttled.rate} /
 * {@code follower.replication.throttled.rate}, unbounded when unset). The rate is Kafka's: the bytes of the last
 * {@value #SAMPLES} one-second windows over their elapsed time, counting at least {@code SAMPLES - 1} whole windows,
 * so a fresh quota is not exceeded by its first burst. Bytes of every throttled partition are recorded, in sync or
 * not; only replicas out of the ISR are held back (the callers check that).
 *
 * <p>Thread-safe: the rate's samples are guarded by this object's monitor, the throttled set is concurrent.
 */
public final class ReplicationQuota {

    public static final String LEADER_RATE = "leader.replication.throttled.rate";
    public static final String FOLLOWER_RATE = "follower.replication.throttled.rate";
    public static final String LEADER_REPLICAS = "leader.replication.throttled.replicas";
    public static final String FOLLOWER_REPLICAS = "follower.replication.throttled.replicas";
    /** The bound of replica moves between log directories, all partitions (Kafka's AlterLogDirsReplication quota). */
    public static final String ALTER_LOG_DIRS_RATE = "replica.alter.log.dirs.io.max.bytes.per.second";

    /** Kafka's {@code replication.quota.window.num} default. */
    static final int SAMPLES = 11;
    /** Kafka's {@code replication.quota.window.size.seconds} default, in ms. */
    static final long WINDOW_MS = 1_000L;

    /** Every partition of the topic is throttled. */
    private static final Set<Integer> ALL = Set.of(-1);

    private final Time time;
    private final Map<String, Set<Integer>> throttled = new ConcurrentHashMap<>();
    private final long[] windowStart = new long[SAMPLES];
    private final long[] windowBytes = new long[SAMPLES];
    private volatile long boundBytesPerSecond = Long.MAX_VALUE;

    public ReplicationQuota(Time time) {
        this.time = time;
        Arrays.fill(windowStart, Long.MIN_VALUE);
    }

    /**
     * The bound a broker's dynamic configs give {@code key}: this broker's value, else the cluster default's, else
     * unbounded (Kafka's {@code BrokerConfigHandler}).
     */
    static long boundOf(Map<String, String> brokerConfigs, Map<String, String> clusterDefaults, String key) {
        String value = brokerConfigs.getOrDefault(key, clusterDefaults.get(key));
        if (value == null) {
            return Long.MAX_VALUE;
        }
        try {
            return Math.max(0L, Long.parseLong(value.trim()));
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    /** Sets the bound; Long.MAX_VALUE switches the throttle off. */
    public void updateBound(long bytesPerSecond) {
        boundBytesPerSecond = bytesPerSecond;
    }

    public long bound() {
        return boundBytesPerSecond;
    }

    /**
     * Replaces a topic's throttled partitions from its config value for broker {@code brokerId} (null or empty:
     * none).
     */
    public void updateThrottled(String topic, String configValue, int brokerId) {
        Set<Integer> partitions = parse(configValue, brokerId);
        if (partitions.isEmpty()) {
            throttled.remove(topic);
        } else {
            throttled.put(topic, partitions);
        }
    }

    /** Forgets a deleted topic. */
    public void removeTopic(String topic) {
        throttled.remove(topic);
    }

    /** Kafka's {@code parseThrottledPartitions}: {@code *}, or the partitions of the items naming the broker. */
    static Set<Integer> parse(String value, int brokerId) {
        if (value == null || value.isBlank()) {
            return Set.of();
        }
        if (value.trim().equals("*")) {
            return ALL;
        }
        List<Integer> partitions = new ArrayList<>();
        for (String item : value.split(",")) {
            String[] parts = item.trim().split(":");
            if (parts.length == 2) {
                try {
                    if (Integer.parseInt(parts[1].trim()) == brokerId) {
                        partitions.add(Integer.parseInt(parts[0].trim()));
                    }
                } catch (NumberFormatException e) {
                    // the controller validated the list; an item that does not parse throttles nothing
                }
            }
        }
        return Set.copyOf(partitions);
    }

    public boolean isThrottled(TopicPartition tp) {
        Set<Integer> partitions = throttled.get(tp.topic());
        return partitions != null && (partitions == ALL || partitions.contains(tp.partition()));
    }

    /** Whether the measured rate is above the bound (never when unbounded). */
    public boolean isQuotaExceeded() {
        long bound = boundBytesPerSecond;
        return bound != Long.MAX_VALUE && rate() > bound;
    }

    /** Counts {@code bytes} sent or fetched for throttled partitions. */
    public synchronized void record(long bytes) {
        long now = time.milliseconds();
        long start = now - Math.floorMod(now, WINDOW_MS);
        int slot = (int) Math.floorMod(start / WINDOW_MS, (long) SAMPLES);
        if (windowStart[slot] != start) {
            windowStart[slot] = start;
            windowBytes[slot] = 0;
        }
        windowBytes[slot] += bytes;
    }

    /** The measured bytes per second. */
    public synchronized double rate() {
        long now = time.milliseconds();
        long horizon = now - SAMPLES * WINDOW_MS;
        long total = 0;
        long oldest = now;
        for (int i = 0; i < SAMPLES; i++) {
            if (windowStart[i] != Long.MIN_VALUE && windowStart[i] > horizon) {
                total += windowBytes[i];
                oldest = Math.min(oldest, windowStart[i]);
            }
        }
        long elapsed = now - oldest;
        long fullWindows = elapsed / WINDOW_MS;
        if (fullWindows < SAMPLES - 1) {
            elapsed += (SAMPLES - 1 - fullWindows) * WINDOW_MS;
        }
        return total * 1000.0 / Math.max(1L, elapsed);
    }
}
