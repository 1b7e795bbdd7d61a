package io.cairn.broker.metrics;

import io.cairn.broker.group.ClassicGroup;
import io.cairn.broker.group.ClassicGroupManager;
import io.cairn.broker.group.ClassicGroupState;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.group.GroupShard;
import io.cairn.broker.group.OffsetManager;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The group coordinator's gauges over the groups this broker coordinates, Kafka's {@code GroupMetadataManager}
 * ones: {@code kafka_coordinator_group_groupmetadatamanager_numgroups}, {@code …_numgroupsstable},
 * {@code …_numgroupspreparingrebalance}, {@code …_numgroupscompletingrebalance}, {@code …_numgroupsempty},
 * {@code …_numgroupsdead} and {@code …_numoffsets} (committed offsets), plus Kafka 4's
 * {@code kafka_server_group_coordinator_metrics_group_count{protocol="classic"}} (every Cairn group is classic).
 *
 * <p>The groups belong to the shard threads: the counts are taken there ({@link GroupCoordinator#callAll}) and the
 * scrape thread waits at most {@value #TIMEOUT_MS} ms; while a coordinator partition loads, or when the wait times
 * out, the scrape has none of these series. Thread-safe.
 */
public final class GroupMetadataCollector implements MultiCollector {

    private static final Logger LOGGER = LogManager.getLogger(GroupMetadataCollector.class);
    private static final long TIMEOUT_MS = 5_000;
    private static final String PREFIX = "kafka_coordinator_group_groupmetadatamanager_";
    private static final ClassicGroupState[] STATES = ClassicGroupState.values();

    private final GroupCoordinator groups;

    public GroupMetadataCollector(GroupCoordinator groups) {
        this.groups = groups;
    }

    /** One shard's counts, taken on its thread. */
    private record ShardCounts(int[] byState, int offsets) {
    }

    @Override
    public MetricSnapshots collect() {
        List<ShardCounts> shards = counts();
        if (shards == null) {
            return MetricSnapshots.of();
        }
        int[] byState = new int[STATES.length];
        int offsets = 0;
        for (ShardCounts shard : shards) {
            for (int i = 0; i < byState.length; i++) {
                byState[i] += shard.byState()[i];
            }
            offsets += shard.offsets();
        }
        int total = 0;
        for (int count : byState) {
            total += count;
        }
        List<GaugeSnapshot> gauges = new ArrayList<>();
        gauges.add(gauge(PREFIX + "numgroups", "Groups this broker coordinates", total));
        for (ClassicGroupState state : STATES) {
            gauges.add(gauge(PREFIX + "numgroups" + state.lowerCaseName(),
                    "Groups in state " + state.displayName(), byState[state.ordinal()]));
        }
        gauges.add(gauge(PREFIX + "numoffsets", "Committed offsets of the groups this broker coordinates",
                offsets));
        GaugeFamily groupCount = new GaugeFamily("kafka_server_group_coordinator_metrics_group_count",
                "Groups this broker coordinates, by protocol", "protocol");
        groupCount.add(total, ClassicGroupManager.GROUP_TYPE);
        gauges.add(groupCount.build());
        return MetricSnapshots.of(gauges.toArray(GaugeSnapshot[]::new));
    }

    private static GaugeSnapshot gauge(String name, String help, double value) {
        GaugeFamily family = new GaugeFamily(name, help);
        family.add(value);
        return family.build();
    }

    /** Every shard's counts, or null when some shard is not ready or the wait failed. */
    private List<ShardCounts> counts() {
        try {
            return groups.callAll(GroupMetadataCollector::count).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            LOGGER.debug("No group coordinator metrics in this scrape: {}", e.toString());
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Runs on the shard's coordinator thread. */
    private static ShardCounts count(GroupShard shard) {
        int[] byState = new int[STATES.length];
        ClassicGroupManager manager = shard.groups();
        for (String groupId : manager.groupIds()) {
            manager.group(groupId).map(ClassicGroup::state).ifPresent(state -> byState[state.ordinal()]++);
        }
        OffsetManager offsets = shard.offsets();
        int committed = 0;
        for (String groupId : offsets.groupIds()) {
            committed += offsets.offsets(groupId).size();
        }
        return new ShardCounts(byState, committed);
    }
}
