package io.cairn.isr.fetcher;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.isr.Partition;
import io.cairn.isr.TestPartitions;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.protocol.Uuid;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ReplicaFetcherManager}: Kafka's assignment of partitions to {@code num.replica.fetchers} threads per leader,
 * Kafka's thread names, a thread replaced when its leader's endpoint moved, idle threads stopped.
 */
class ReplicaFetcherManagerTest {

    private static final Uuid TOPIC_ID = new Uuid(3L, 4L);
    private static final SourceBroker TWO = new SourceBroker(2, "broker-two", 9092);
    private static final SourceBroker THREE = new SourceBroker(3, "broker-three", 9092);

    @TempDir
    Path dir;

    private final List<SourceBroker> created = new CopyOnWriteArrayList<>();
    private final Map<TopicPartition, Partition> hosted = new ConcurrentHashMap<>();
    private final List<PartitionLog> logs = new CopyOnWriteArrayList<>();
    private final ReplicaFetcherManager manager = new ReplicaFetcherManager(1, ReplicaFetcherConfig.of(2, 1 << 20, 1,
        500, 1_000L, 10 << 20, 30_000, 65_536, 1 << 20), hosted::get, (fetcherId, source) -> {
            created.add(source);
            return new IdleLeader(source);
        }, Time.SYSTEM);

    @AfterEach
    void close() {
        manager.close();
        logs.forEach(PartitionLog::close);
    }

    /** Hosts {@code tp} as a follower of {@code leader} in epoch 5, with an empty log. */
    private InitialFetchState follow(TopicPartition tp, SourceBroker leader) {
        PartitionLog log = PartitionLog.open(dir.resolve(tp.toString()), LogConfig.defaults(),
            LogEnvironment.of(Time.SYSTEM), true);
        logs.add(log);
        hosted.put(tp, TestPartitions.create(tp, TOPIC_ID, 1, log, new PartitionRegistration(List.of(leader.id(), 1),
            List.of(leader.id(), 1), leader.id(), 5, 5), p -> { }, Time.SYSTEM));
        return at(leader);
    }

    private static InitialFetchState at(SourceBroker leader) {
        return new InitialFetchState(TOPIC_ID, leader, 5, 0L);
    }

    @Test
    void partitionsGoToKafkasFetcherOfTheirLeaderUnderKafkasThreadNames() {
        // Given
        Map<TopicPartition, InitialFetchState> initial = new HashMap<>();
        for (int p = 0; p < 6; p++) {
            initial.put(new TopicPartition("orders", p), follow(new TopicPartition("orders", p), TWO));
        }
        initial.put(new TopicPartition("payments", 0), follow(new TopicPartition("payments", 0), THREE));

        // When
        manager.addFetcherForPartitions(initial);

        // Then
        for (int p = 0; p < 6; p++) {
            TopicPartition tp = new TopicPartition("orders", p);
            int expected = Math.abs(31 * "orders".hashCode() + p) % 2;
            assertThat(manager.fetcherId(tp)).isEqualTo(expected);
            assertThat(manager.fetcher(tp).getName()).isEqualTo("ReplicaFetcherThread-" + expected + "-2");
            assertThat(manager.fetcher(tp).fetchState(tp).currentLeaderEpoch()).isEqualTo(5);
        }
        assertThat(manager.fetcher(new TopicPartition("payments", 0)).getName())
            .isEqualTo("ReplicaFetcherThread-" + manager.fetcherId(new TopicPartition("payments", 0)) + "-3");
        assertThat(created).hasSize(3).containsOnly(TWO, THREE);
    }

    @Test
    void aLeaderAtANewEndpointGetsANewThreadAndIdleThreadsStop() {
        // Given
        TopicPartition tp = new TopicPartition("orders", 0);
        manager.addFetcherForPartitions(Map.of(tp, follow(tp, TWO)));
        ReplicaFetcherThread first = manager.fetcher(tp);

        // When: broker 2 now advertises another port
        SourceBroker moved = new SourceBroker(2, "broker-two", 9093);
        manager.addFetcherForPartitions(Map.of(tp, at(moved)));

        // Then
        ReplicaFetcherThread second = manager.fetcher(tp);
        assertThat(second).isNotSameAs(first);
        assertThat(second.sourceBroker()).isEqualTo(moved);
        assertThat(first.isAlive()).isFalse();

        // When
        assertThat(manager.removeFetcherForPartitions(Set.of(tp))).containsOnlyKeys(tp);
        manager.shutdownIdleFetcherThreads();

        // Then
        assertThat(manager.fetcher(tp)).isNull();
        assertThat(second.isAlive()).isFalse();
    }

    @Test
    void resizingTheThreadPoolMovesEveryPartitionWithItsLeaderEpochToItsFetcherOfTheNewSize() {
        // Given: 6 partitions of broker 2 over 2 threads
        Map<TopicPartition, InitialFetchState> initial = new HashMap<>();
        for (int p = 0; p < 6; p++) {
            initial.put(new TopicPartition("orders", p), follow(new TopicPartition("orders", p), TWO));
        }
        manager.addFetcherForPartitions(initial);
        ReplicaFetcherThread before = manager.fetcher(new TopicPartition("orders", 0));

        // When: num.replica.fetchers goes to 3
        manager.resizeThreadPool(3);

        // Then: each partition on Kafka's fetcher of 3 threads, in its leader epoch, the old threads stopped
        assertThat(manager.numFetchers()).isEqualTo(3);
        assertThat(before.isAlive()).isFalse();
        Set<String> names = new java.util.TreeSet<>();
        for (int p = 0; p < 6; p++) {
            TopicPartition tp = new TopicPartition("orders", p);
            int expected = Math.abs(31 * "orders".hashCode() + p) % 3;
            assertThat(manager.fetcher(tp).getName()).isEqualTo("ReplicaFetcherThread-" + expected + "-2");
            assertThat(manager.fetcher(tp).fetchState(tp).currentLeaderEpoch()).isEqualTo(5);
            assertThat(manager.fetcher(tp).sourceBroker()).isEqualTo(TWO);
            names.add(manager.fetcher(tp).getName());
        }
        assertThat(names).hasSize(3);

        // When: back to 1
        manager.resizeThreadPool(1);

        // Then
        for (int p = 0; p < 6; p++) {
            assertThat(manager.fetcher(new TopicPartition("orders", p)).getName())
                .isEqualTo("ReplicaFetcherThread-0-2");
        }
    }

    /** A leader with nothing to send: each fetch takes a moment, as a long poll would, and returns nothing. */
    private record IdleLeader(SourceBroker sourceBroker) implements LeaderEndpoint {

        @Override
        public Map<TopicPartition, FetchedPartition> fetch(Map<TopicPartition, PartitionFetchRequest> partitions) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Map.of();
        }

        @Override
        public Map<TopicPartition, EpochEndOffsetResult> fetchEpochEndOffsets(
                Map<TopicPartition, EpochRequest> partitions) {
            return Map.of();
        }

        @Override
        public OffsetAndEpoch fetchEarliestOffset(TopicPartition tp, int currentLeaderEpoch) {
            return new OffsetAndEpoch(0L, currentLeaderEpoch);
        }

        @Override
        public OffsetAndEpoch fetchLatestOffset(TopicPartition tp, int currentLeaderEpoch) {
            return new OffsetAndEpoch(0L, currentLeaderEpoch);
        }

        @Override
        public void initiateClose() {
        }

        @Override
        public void close() {
        }
    }
}
