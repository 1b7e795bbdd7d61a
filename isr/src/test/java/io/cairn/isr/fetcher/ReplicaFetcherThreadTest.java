package io.cairn.isr.fetcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.cairn.isr.Partition;
import io.cairn.isr.ReplicationQuota;
import io.cairn.isr.TestPartitions;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.MockTime;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.log.epoch.EpochEntry;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fetch state machine of {@link ReplicaFetcherThread} over real partitions and logs: a follower {@link Partition}
 * fetching from a leader {@link Partition} through an in-memory {@link LeaderEndpoint}, one round (truncate, fetch)
 * at a time on the test thread, with a clock the test owns.
 */
class ReplicaFetcherThreadTest {

    private static final int LEADER = 1;
    private static final int FOLLOWER = 2;
    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final Uuid TOPIC_ID = new Uuid(42L, 7L);
    private static final SourceBroker SOURCE = new SourceBroker(LEADER, "localhost", 9092);

    @TempDir
    Path dir;

    private final MockTime clock = new MockTime(1_000);
    private final List<PartitionLog> logs = new ArrayList<>();
    private final AtomicInteger highWatermarkEvents = new AtomicInteger();
    private PartitionLog leaderLog;
    private PartitionLog followerLog;
    private Partition leader;
    private Partition follower;
    private PartitionLeaderEndpoint endpoint;
    private ReplicaFetcherThread thread;
    private int fetchMaxBytes = 1 << 20;

    @AfterEach
    void closeLogs() {
        logs.forEach(PartitionLog::close);
    }

    private PartitionLog open(String broker) {
        PartitionLog log = PartitionLog.open(dir.resolve(broker).resolve("orders-0"), LogConfig.defaults(),
            LogEnvironment.of(Time.SYSTEM), true);
        logs.add(log);
        return log;
    }

    private static PartitionRegistration registration(int leaderId, int epoch, List<Integer> isr) {
        return new PartitionRegistration(List.of(LEADER, FOLLOWER), isr, leaderId, epoch, epoch);
    }

    /** Opens both logs; {@code beforePartitions} fills them before the partitions exist (older epochs). */
    private void start(int epoch, List<Integer> isr) {
        start(epoch, isr, new ReplicationQuota(clock));
    }

    private void start(int epoch, List<Integer> isr, ReplicationQuota quota) {
        leader = TestPartitions.create(TP, TOPIC_ID, LEADER, leaderLog, registration(LEADER, epoch, isr), p -> { },
            clock);
        follower = TestPartitions.create(TP, TOPIC_ID, FOLLOWER, followerLog, registration(LEADER, epoch, isr),
            p -> highWatermarkEvents.incrementAndGet(), clock);
        endpoint = new PartitionLeaderEndpoint(SOURCE, FOLLOWER, Map.of(TP, leader));
        thread = new ReplicaFetcherThread("ReplicaFetcherThread-0-1", endpoint, tp -> TP.equals(tp) ? follower : null,
            ConcurrentHashMap.newKeySet(), clock, 1_000L, fetchMaxBytes, quota);
        // As the replica manager starts a follower: its log end with an epoch history, else its high watermark.
        long initOffset = followerLog.latestEpoch() >= 0 ? follower.logEndOffset() : follower.highWatermark();
        thread.addPartitions(Map.of(TP, new InitialFetchState(TOPIC_ID, SOURCE, epoch, initOffset)));
    }

    private void round() {
        thread.maybeTruncate();
        thread.maybeFetch();
    }

    private static ByteBuffer batch(int records, int seed) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L + i, new byte[] {(byte) seed}, new byte[] {(byte) (seed + i)});
        }
        ByteBuf buf = builder.build();
        try {
            ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), copy);
            return copy.flip();
        } finally {
            buf.release();
        }
    }

    private static ByteBuffer allBytes(PartitionLog log) {
        try (FetchDataInfo info = log.read(log.logStartOffset(), Integer.MAX_VALUE, Long.MAX_VALUE, true)) {
            return info.records().readBytes();
        }
    }

    @Test
    void aFollowerWithoutEpochHistoryTruncatesToItsHighWatermarkThenCopiesTheLeaderAndLearnsItsHighWatermark() {
        // Given: the leader has 15 records of epoch 3; the follower's log is empty
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER, FOLLOWER));
        for (int i = 0; i < 3; i++) {
            leader.appendRecordsToLeader(batch(5, i * 10), AppendOrigin.CLIENT, 1);
        }
        assertThat(thread.fetchState(TP).state()).isEqualTo(PartitionFetchState.Phase.TRUNCATING);

        // When: one round copies the records, the next reports the position (the leader's high watermark moves),
        // the third brings it back (a response carries the high watermark from before the fetch, as Kafka's)
        round();
        assertThat(follower.logEndOffset()).isEqualTo(15);
        assertThat(follower.highWatermark()).isZero();
        round();
        assertThat(leader.highWatermark()).isEqualTo(15);
        round();

        // Then
        assertThat(leader.highWatermark()).isEqualTo(15);
        assertThat(follower.highWatermark()).isEqualTo(15);
        assertThat(highWatermarkEvents.get()).isEqualTo(1);
        assertThat(allBytes(followerLog)).isEqualTo(allBytes(leaderLog));
        PartitionFetchState state = thread.fetchState(TP);
        assertThat(state.fetchOffset()).isEqualTo(15);
        assertThat(state.lastFetchedEpoch()).isEqualTo(3);
        assertThat(state.lag()).isZero();
        assertThat(state.state()).isEqualTo(PartitionFetchState.Phase.FETCHING);
    }

    @Test
    void aThrottledFollowerOutOfSyncFetchesNothingWhileItsQuotaIsExceeded() {
        // Given: 15 records on the leader; the follower's replica is throttled and its quota already exceeded
        leaderLog = open("leader");
        followerLog = open("follower");
        ReplicationQuota quota = new ReplicationQuota(clock);
        quota.updateBound(1);
        quota.updateThrottled(TP.topic(), TP.partition() + ":" + FOLLOWER, FOLLOWER);
        quota.record(100);
        start(3, List.of(LEADER), quota);
        for (int i = 0; i < 3; i++) {
            leader.appendRecordsToLeader(batch(5, i * 10), AppendOrigin.CLIENT, 1);
        }

        // When
        round();
        round();

        // Then: nothing fetched
        assertThat(quota.isQuotaExceeded()).isTrue();
        assertThat(follower.logEndOffset()).isZero();

        // When: the recorded bytes age out of the quota's windows
        clock.sleep(12_000);
        round();

        // Then: the records come, and their bytes count against the quota
        assertThat(follower.logEndOffset()).isEqualTo(15);
        assertThat(quota.rate()).isPositive();
    }

    @Test
    void aDivergedFollowerTruncatesExactlyToWhereItsEpochsAgreeWithTheLeaderAndThenCopiesTheLeader() {
        // Given: both have offsets 0-4 of epoch 1; the leader then wrote 5-9 in epoch 3, while the follower, a
        // leader of epoch 2 that never replicated, wrote 5-7 in epoch 2
        leaderLog = open("leader");
        followerLog = open("follower");
        leaderLog.appendAsLeader(batch(5, 0), 1, AppendOrigin.CLIENT);
        leaderLog.appendAsLeader(batch(5, 50), 3, AppendOrigin.CLIENT);
        followerLog.appendAsLeader(batch(5, 0), 1, AppendOrigin.CLIENT);
        followerLog.appendAsLeader(batch(3, 99), 2, AppendOrigin.CLIENT);
        start(3, List.of(LEADER, FOLLOWER));
        assertThat(thread.fetchState(TP).lastFetchedEpoch()).isEqualTo(2);

        // When: the leader answers the first fetch with the diverging epoch (1, 5)
        round();

        // Then: truncated to exactly 5, fetching from there with epoch 1 as the last fetched
        assertThat(follower.logEndOffset()).isEqualTo(5);
        assertThat(thread.fetchState(TP).fetchOffset()).isEqualTo(5);
        assertThat(thread.fetchState(TP).lastFetchedEpoch()).isEqualTo(1);

        // When
        round();

        // Then: the leader's log, byte for byte, and its epochs
        assertThat(follower.logEndOffset()).isEqualTo(10);
        assertThat(followerLog.epochEntries()).containsExactly(new EpochEntry(1, 0), new EpochEntry(3, 5));
        assertThat(allBytes(followerLog)).isEqualTo(allBytes(leaderLog));
    }

    @Test
    void aFollowerBehindTheLeadersLogStartRestartsAtItEvenWhenTheStartFallsInsideABatch() {
        // Given: the leader's log starts at 7, inside its batch 5-9 (DeleteRecords); the follower is empty
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER));
        leader.appendRecordsToLeader(batch(5, 0), AppendOrigin.CLIENT, 1);
        leader.appendRecordsToLeader(batch(5, 20), AppendOrigin.CLIENT, 1);
        leaderLog.deleteRecordsBefore(7);

        // When: the fetch at 0 is out of range; the follower starts empty at the leader's log start
        round();

        // Then
        assertThat(follower.logStartOffset()).isEqualTo(7);
        assertThat(follower.logEndOffset()).isEqualTo(7);
        assertThat(thread.fetchState(TP).fetchOffset()).isEqualTo(7);

        // When: the leader returns the whole batch 5-9
        round();

        // Then: the log restarted at the batch's base offset and took the leader's log start again
        assertThat(follower.logEndOffset()).isEqualTo(10);
        assertThat(follower.highWatermark()).isEqualTo(10);
        assertThat(follower.logStartOffset()).isEqualTo(7);
        assertThat(thread.fetchState(TP).fetchOffset()).isEqualTo(10);
    }

    @Test
    void theMetadataApplierRemovesAPartitionWhileItsLeadersOffsetsAreAskedAndTheAnswerIsDropped() throws Exception {
        // Given: the leader's log starts at 7; the follower, empty, is out of range at 0
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER));
        leader.appendRecordsToLeader(batch(5, 0), AppendOrigin.CLIENT, 1);
        leader.appendRecordsToLeader(batch(5, 20), AppendOrigin.CLIENT, 1);
        leaderLog.deleteRecordsBefore(7);

        // When: while the ListOffsets call is out (a leader that does not answer blocks it for the socket timeout),
        // another thread (the metadata applier) removes the partition from this fetcher
        CompletableFuture<Map<TopicPartition, PartitionFetchState>> removed = new CompletableFuture<>();
        endpoint.duringListOffsets(tp -> {
            if (!removed.isDone()) {
                CompletableFuture.runAsync(() -> removed.complete(thread.removePartitions(Set.of(TP))));
                try {
                    removed.get(5, TimeUnit.SECONDS);
                } catch (Exception e) {
                    removed.completeExceptionally(e);
                }
            }
        });
        round();

        // Then: the removal did not wait for the leader's answer, and the answer changed nothing
        assertThat(removed).succeedsWithin(0, TimeUnit.SECONDS)
            .satisfies(states -> assertThat(states).containsOnlyKeys(TP));
        assertThat(thread.fetchState(TP)).isNull();
        assertThat(follower.logStartOffset()).isZero();
        assertThat(follower.logEndOffset()).isZero();
    }

    @Test
    void aPartitionReAddedInANewEpochWhileItsLeadersOffsetsAreAskedKeepsItsNewState() {
        // Given: as above, out of range at 0
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER));
        leader.appendRecordsToLeader(batch(5, 0), AppendOrigin.CLIENT, 1);
        leader.appendRecordsToLeader(batch(5, 20), AppendOrigin.CLIENT, 1);
        leaderLog.deleteRecordsBefore(7);

        // When: the partition is re-added in epoch 4 while the ListOffsets of epoch 3 is out
        AtomicInteger calls = new AtomicInteger();
        CompletableFuture<Void> added = new CompletableFuture<>();
        endpoint.duringListOffsets(tp -> {
            if (calls.getAndIncrement() == 0) {
                CompletableFuture.runAsync(() -> {
                    thread.addPartitions(Map.of(TP, new InitialFetchState(TOPIC_ID, SOURCE, 4, 0L)));
                    added.complete(null);
                });
                try {
                    added.get(5, TimeUnit.SECONDS);
                } catch (Exception e) {
                    added.completeExceptionally(e);
                }
            }
        });
        round();

        // Then: the re-add did not wait for the leader's answer, the epoch-3 answer was dropped, and the partition
        // starts over in epoch 4 from its initial offset
        assertThat(added).succeedsWithin(0, TimeUnit.SECONDS);
        assertThat(thread.fetchState(TP).currentLeaderEpoch()).isEqualTo(4);
        assertThat(thread.fetchState(TP).fetchOffset()).isZero();
        assertThat(follower.logEndOffset()).isZero();
    }

    @Test
    void aResponseThatArrivesAfterTheLeaderChangedIsNotAppended() {
        // Given
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER, FOLLOWER));
        leader.appendRecordsToLeader(batch(5, 0), AppendOrigin.CLIENT, 1);
        round();
        assertThat(follower.logEndOffset()).isEqualTo(5);
        leader.appendRecordsToLeader(batch(5, 10), AppendOrigin.CLIENT, 1);

        // When: while the fetch is out, broker 3 is elected in epoch 4 (metadata reached the follower's partition
        // before its fetcher was moved)
        endpoint.duringFetch(request -> TestPartitions.update(follower, new PartitionRegistration(
            List.of(LEADER, FOLLOWER, 3), List.of(FOLLOWER, 3), 3, 4, 4)));
        round();

        // Then: nothing of the old leader's response was appended; the partition backs off until it is moved
        assertThat(follower.logEndOffset()).isEqualTo(5);
        assertThat(thread.fetchState(TP).isDelayed(clock.milliseconds())).isTrue();
        assertThat(thread.fetchState(TP).fetchOffset()).isEqualTo(5);
    }

    @Test
    void theLagOfAPartitionIsTheLeadersHighWatermarkMinusTheNextFetchOffsetAfterEachAnswerAndGoesWithIt() {
        // Given: the leader alone in the ISR has 3 batches of 5 committed; each fetch brings one batch
        leaderLog = open("leader");
        followerLog = open("follower");
        fetchMaxBytes = 1;
        start(3, List.of(LEADER));
        for (int i = 0; i < 3; i++) {
            leader.appendRecordsToLeader(batch(5, i * 10), AppendOrigin.CLIENT, 1);
        }
        Map<TopicPartition, Long> lags = new HashMap<>();
        thread.forEachLag(lags::put);
        assertThat(lags).as("no answer yet").isEmpty();

        // When / Then: 10, 5, then 0 behind the high watermark of 15
        for (long expected : new long[] {10, 5, 0}) {
            round();
            thread.forEachLag(lags::put);
            assertThat(lags).containsExactly(Map.entry(TP, expected));
        }

        // And: a removed partition has no lag any more
        thread.removePartitions(Set.of(TP));
        lags.clear();
        thread.forEachLag(lags::put);
        assertThat(lags).isEmpty();
    }

    @Test
    void recordingTheLagOfAnAnsweredPartitionAllocatesNothing() {
        // Given: a fetched partition whose lag holder exists, and the JIT warmed up
        com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assumeThat(threads.isThreadAllocatedMemorySupported()).as("per-thread allocation counter").isTrue();
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER));
        int iterations = 200_000;
        for (int i = 0; i < iterations; i++) {
            thread.recordLag(TP, i);
        }
        long threadId = Thread.currentThread().getId();

        // When
        long before = threads.getThreadAllocatedBytes(threadId);
        for (int i = 0; i < iterations; i++) {
            thread.recordLag(TP, i);
        }
        long allocated = threads.getThreadAllocatedBytes(threadId) - before;

        // Then: under a byte per answer (an object each would be megabytes)
        assertThat(allocated).isLessThan(iterations);
    }

    @Test
    void aResponseForAPartitionRemovedWhileTheFetchWasOutIsDropped() {
        // Given
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER, FOLLOWER));
        leader.appendRecordsToLeader(batch(5, 0), AppendOrigin.CLIENT, 1);
        thread.maybeTruncate();

        // When: the replica manager moves the partition to another leader while the fetch is out
        endpoint.duringFetch(request -> thread.removePartitions(Set.of(TP)));
        thread.maybeFetch();

        // Then
        assertThat(endpoint.fetches()).isEqualTo(1);
        assertThat(follower.logEndOffset()).isZero();
        assertThat(thread.fetchState(TP)).isNull();
    }

    @Test
    void reAddingInTheSameLeaderEpochKeepsTheStateAndANewEpochStartsOver() {
        // Given
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER, FOLLOWER));
        leader.appendRecordsToLeader(batch(5, 0), AppendOrigin.CLIENT, 1);
        round();
        PartitionFetchState fetching = thread.fetchState(TP);

        // When
        thread.addPartitions(Map.of(TP, new InitialFetchState(TOPIC_ID, SOURCE, 3, 0L)));

        // Then
        assertThat(thread.fetchState(TP)).isEqualTo(fetching);

        // When
        TestPartitions.update(follower, registration(LEADER, 4, List.of(LEADER, FOLLOWER)));
        thread.addPartitions(Map.of(TP, new InitialFetchState(TOPIC_ID, SOURCE, 4, follower.logEndOffset())));

        // Then: the log has epochs, so it fetches at once from its end with its latest epoch as last fetched
        PartitionFetchState restarted = thread.fetchState(TP);
        assertThat(restarted.currentLeaderEpoch()).isEqualTo(4);
        assertThat(restarted.fetchOffset()).isEqualTo(5);
        assertThat(restarted.lastFetchedEpoch()).isEqualTo(3);
        assertThat(restarted.state()).isEqualTo(PartitionFetchState.Phase.FETCHING);
    }

    @Test
    void aTruncatingPartitionWhoseLogHasEpochsTruncatesToTheLeadersOffsetForLeaderEpochAnswer() {
        // Given: added while empty (truncating); before the fetcher's first round its log got epochs 1 (0-4) and 2
        // (5-7), while the leader has epochs 1 (0-4) and 3 (5-9)
        leaderLog = open("leader");
        followerLog = open("follower");
        leaderLog.appendAsLeader(batch(5, 0), 1, AppendOrigin.CLIENT);
        leaderLog.appendAsLeader(batch(5, 50), 3, AppendOrigin.CLIENT);
        start(3, List.of(LEADER, FOLLOWER));
        assertThat(thread.fetchState(TP).state()).isEqualTo(PartitionFetchState.Phase.TRUNCATING);
        followerLog.appendAsLeader(batch(5, 0), 1, AppendOrigin.CLIENT);
        followerLog.appendAsLeader(batch(3, 99), 2, AppendOrigin.CLIENT);

        // When: OffsetForLeaderEpoch(2) answers epoch 1 ending at 5
        thread.maybeTruncate();

        // Then
        assertThat(follower.logEndOffset()).isEqualTo(5);
        assertThat(endpoint.fetches()).isZero();
        PartitionFetchState state = thread.fetchState(TP);
        assertThat(state.state()).isEqualTo(PartitionFetchState.Phase.FETCHING);
        assertThat(state.fetchOffset()).isEqualTo(5);
        assertThat(state.lastFetchedEpoch()).isEqualTo(1);

        // When
        round();

        // Then
        assertThat(allBytes(followerLog)).isEqualTo(allBytes(leaderLog));
    }

    @Test
    void aResponseThatArrivesAfterThisBrokerWasElectedIsNotAppended() {
        // Given
        leaderLog = open("leader");
        followerLog = open("follower");
        start(3, List.of(LEADER, FOLLOWER));
        leader.appendRecordsToLeader(batch(5, 0), AppendOrigin.CLIENT, 1);

        // When: the follower is elected in epoch 4 while the fetch of epoch 3 is out
        endpoint.duringFetch(request -> TestPartitions.update(follower, registration(FOLLOWER, 4,
            List.of(LEADER, FOLLOWER))));
        round();

        // Then: the leader's log is untouched by the old leader's data
        assertThat(follower.isLeader()).isTrue();
        assertThat(follower.logEndOffset()).isZero();
    }
}
