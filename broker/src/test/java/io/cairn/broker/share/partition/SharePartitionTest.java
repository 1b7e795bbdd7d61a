package io.cairn.broker.share.partition;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.purgatory.MockTimer;
import io.cairn.broker.share.SharePartitionKey;
import io.cairn.broker.share.StateBatch;
import io.cairn.broker.share.partition.ShareRecordTypes.AckBatch;
import io.cairn.broker.share.partition.ShareRecordTypes.AcquiredRange;
import io.cairn.broker.share.partition.ShareRecordTypes.Acquisition;
import io.cairn.broker.share.partition.ShareRecordTypes.LogBatch;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SharePartitionTest {

    private static final SharePartitionKey KEY = new SharePartitionKey("group", new Uuid(7L, 9L), 0);
    private static final int LOCK_MS = 30_000;

    /**
     * An in-memory share coordinator: records the writes the share-partition made, answered with {@link #answer}, and
     * keeps the state they add up to (each accepted write replaces the states of its batches' offsets and drops those
     * below its start offset), which a read gives back as a new leader would get it.
     */
    private static final class Persister implements StatePersister {
        final List<String> writes = new ArrayList<>();
        Errors answer = Errors.NONE;
        private long startOffset;
        private final TreeMap<Long, StateBatch> offsets = new TreeMap<>();

        @Override
        public synchronized CompletableFuture<PersistedState> read(SharePartitionKey key, int leaderEpoch) {
            List<StateBatch> batches = new ArrayList<>();
            for (StateBatch one : offsets.values()) {
                StateBatch last = batches.isEmpty() ? null : batches.get(batches.size() - 1);
                if (last != null && last.lastOffset() + 1 == one.firstOffset()
                        && last.deliveryState() == one.deliveryState() && last.deliveryCount() == one.deliveryCount()) {
                    batches.set(batches.size() - 1, new StateBatch(last.firstOffset(), one.lastOffset(),
                        last.deliveryState(), last.deliveryCount()));
                } else {
                    batches.add(one);
                }
            }
            return CompletableFuture.completedFuture(new PersistedState(Errors.NONE, null, 1, startOffset, batches));
        }

        @Override
        public synchronized CompletableFuture<Errors> write(SharePartitionKey key, int stateEpoch, int leaderEpoch,
                                                            long startOffset, List<StateBatch> batches) {
            writes.add("start=" + startOffset + " " + batches.stream().map(b -> b.firstOffset() + "-"
                + b.lastOffset() + ":" + b.deliveryState() + "x" + b.deliveryCount()).toList());
            if (answer == Errors.NONE) {
                this.startOffset = startOffset;
                for (StateBatch b : batches) {
                    for (long o = b.firstOffset(); o <= b.lastOffset(); o++) {
                        offsets.put(o, new StateBatch(o, o, b.deliveryState(), b.deliveryCount()));
                    }
                }
                offsets.headMap(startOffset).clear();
            }
            return CompletableFuture.completedFuture(answer);
        }
    }

    private final MockTimer timer = new MockTimer();
    private final Persister persister = new Persister();
    private final AtomicInteger available = new AtomicInteger();
    private final AtomicInteger fenced = new AtomicInteger();

    private SharePartition partition(SharePartitionConfig config, long startOffset, StateBatch... batches) {
        return new SharePartition(KEY, 3, new StatePersister.PersistedState(Errors.NONE, null, 1, startOffset,
            List.of(batches)), 100L, config, timer, persister, sp -> available.incrementAndGet(),
            sp -> fenced.incrementAndGet());
    }

    private SharePartition partition() {
        return partition(new SharePartitionConfig(LOCK_MS, 3, 2_000, 10), 0L);
    }

    /** Batches of {@code size} records from {@code first} to {@code last}, 100 bytes each. */
    private static List<LogBatch> batches(long first, long last, int size) {
        List<LogBatch> batches = new ArrayList<>();
        int position = 0;
        for (long base = first; base <= last; base += size) {
            position += 100;
            batches.add(new LogBatch(base, Math.min(last, base + size - 1), position));
        }
        return batches;
    }

    private static AckBatch ack(long first, long last, byte... types) {
        return new AckBatch(first, last, types);
    }

    @Test
    void acquiresNewRecordsOnceForOneMember() {
        SharePartition sp = partition();
        Acquisition first = sp.acquire("a", 500, batches(0, 9, 5));
        assertThat(first.ranges()).containsExactly(new AcquiredRange(0, 9, 1));
        assertThat(first.bytes()).isEqualTo(200);
        assertThat(sp.acquire("b", 500, batches(0, 9, 5)).isEmpty()).as("already acquired").isTrue();
        assertThat(sp.nextFetchOffset()).isEqualTo(10L);
        assertThat(sp.describe()).containsExactly("0-9:ACQUIREDx1@a");
        assertThat(persister.writes).as("acquisition is not persisted").isEmpty();
    }

    @Test
    void maxRecordsStopsAtTheBatchBoundary() {
        SharePartition sp = partition();
        Acquisition acquisition = sp.acquire("a", 3, batches(0, 9, 5));
        assertThat(acquisition.ranges()).containsExactly(new AcquiredRange(0, 4, 1));
        assertThat(acquisition.bytes()).isEqualTo(100);
        assertThat(sp.acquire("b", 3, batches(5, 9, 5)).ranges()).containsExactly(new AcquiredRange(5, 9, 1));
    }

    @Test
    void acceptMovesTheStartOffsetAndIsWritten() {
        SharePartition sp = partition();
        sp.acquire("a", 500, batches(0, 9, 10));
        assertThat(sp.acknowledge("a", List.of(ack(0, 3, ShareRecordTypes.ACCEPT))).join()).isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(4L);
        assertThat(persister.writes).containsExactly("start=4 []");
        assertThat(sp.acknowledge("a", List.of(ack(5, 6, ShareRecordTypes.ACCEPT))).join()).isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).as("4 is still acquired").isEqualTo(4L);
        assertThat(persister.writes).last().isEqualTo("start=4 [5-6:2x1]");
        assertThat(sp.describe()).containsExactly("4-4:ACQUIREDx1@a", "5-6:ACKNOWLEDGEDx1", "7-9:ACQUIREDx1@a");
    }

    @Test
    void releaseRedeliversWithTheNextDeliveryCount() {
        SharePartition sp = partition();
        sp.acquire("a", 500, batches(0, 4, 5));
        assertThat(sp.acknowledge("a", List.of(ack(0, 4, ShareRecordTypes.ACCEPT, ShareRecordTypes.RELEASE,
            ShareRecordTypes.RELEASE, ShareRecordTypes.ACCEPT, ShareRecordTypes.REJECT))).join())
            .isEqualTo(Errors.NONE);
        assertThat(available.get()).isEqualTo(1);
        assertThat(sp.startOffset()).isEqualTo(1L);
        assertThat(persister.writes).containsExactly("start=1 [1-2:0x1, 3-3:2x1, 4-4:4x1]");
        assertThat(sp.nextFetchOffset()).isEqualTo(1L);
        assertThat(sp.acquire("b", 500, batches(0, 4, 5)).ranges()).containsExactly(new AcquiredRange(1, 2, 2));
        assertThat(sp.acknowledge("b", List.of(ack(1, 2, ShareRecordTypes.ACCEPT))).join()).isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).as("past the accepted and rejected records").isEqualTo(5L);
    }

    @Test
    void lockExpiryReleasesWhatIsStillAcquired() {
        SharePartition sp = partition();
        sp.acquire("a", 500, batches(0, 9, 10));
        sp.acknowledge("a", List.of(ack(0, 1, ShareRecordTypes.ACCEPT))).join();
        timer.advance(LOCK_MS - 1);
        assertThat(sp.describe()).containsExactly("2-9:ACQUIREDx1@a");
        timer.advance(1);
        assertThat(sp.describe()).containsExactly("2-9:AVAILABLEx1");
        assertThat(persister.writes).last().isEqualTo("start=2 [2-9:0x1]");
        assertThat(available.get()).isEqualTo(1);
        assertThat(sp.acknowledge("a", List.of(ack(2, 3, ShareRecordTypes.ACCEPT))).join())
            .as("the lock is gone").isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.acquire("b", 500, batches(0, 9, 10)).ranges()).containsExactly(new AcquiredRange(2, 9, 2));
    }

    @Test
    void eachAcquisitionTakesTheGroupsCurrentLockDuration() {
        // Given a share-partition whose group's share.record.lock.duration.ms is read at each acquisition
        AtomicInteger groupLockMs = new AtomicInteger(LOCK_MS);
        SharePartition sp = new SharePartition(KEY, 3, new StatePersister.PersistedState(Errors.NONE, null, 1, 0L,
            List.of()), 100L, new SharePartitionConfig(LOCK_MS, 3, 2_000, 10), groupLockMs::get, timer, persister,
            p -> available.incrementAndGet(), p -> fenced.incrementAndGet());
        sp.acquire("a", 5, batches(0, 9, 1));

        // When the group's lock duration becomes twice the broker's and the next records are acquired
        groupLockMs.set(2 * LOCK_MS);
        sp.acquire("b", 5, batches(0, 9, 1));

        // Then the first lock expires after the old duration, the second after the new one
        timer.advance(LOCK_MS);
        assertThat(sp.describe()).containsExactly("0-4:AVAILABLEx1", "5-9:ACQUIREDx1@b");
        timer.advance(LOCK_MS);
        assertThat(sp.describe()).containsExactly("0-9:AVAILABLEx1");
    }

    @Test
    void aLockWhoseRecordsWereAllAcknowledgedIsCancelled() {
        SharePartition sp = partition();
        sp.acquire("a", 500, batches(0, 4, 5));
        assertThat(timer.size()).isEqualTo(1);
        sp.acknowledge("a", List.of(ack(0, 4, ShareRecordTypes.ACCEPT))).join();
        assertThat(timer.size()).isZero();
    }

    @Test
    void theDeliveryCountLimitArchives() {
        SharePartition sp = partition(new SharePartitionConfig(LOCK_MS, 2, 2_000, 10), 0L);
        sp.acquire("a", 500, batches(0, 1, 2));
        sp.acknowledge("a", List.of(ack(0, 1, ShareRecordTypes.RELEASE))).join();
        assertThat(sp.acquire("a", 500, batches(0, 1, 2)).ranges()).containsExactly(new AcquiredRange(0, 1, 2));
        timer.advance(LOCK_MS);
        assertThat(persister.writes).last().isEqualTo("start=2 []");
        assertThat(sp.startOffset()).as("archived at the limit").isEqualTo(2L);
        assertThat(sp.acquire("a", 500, batches(0, 1, 2)).isEmpty()).isTrue();
    }

    @Test
    void acknowledgementsAreValidatedAllOrNothing() {
        SharePartition sp = partition();
        sp.acquire("a", 500, batches(0, 9, 10));
        assertThat(sp.acknowledge("b", List.of(ack(0, 1, ShareRecordTypes.ACCEPT))).join())
            .isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.acknowledge("a", List.of(ack(0, 1, ShareRecordTypes.ACCEPT), ack(8, 12,
            ShareRecordTypes.ACCEPT))).join()).isEqualTo(Errors.INVALID_REQUEST);
        assertThat(sp.describe()).as("nothing applied").containsExactly("0-9:ACQUIREDx1@a");
        sp.acknowledge("a", List.of(ack(0, 1, ShareRecordTypes.ACCEPT))).join();
        assertThat(sp.acknowledge("a", List.of(ack(0, 1, ShareRecordTypes.ACCEPT))).join())
            .as("before the start offset").isEqualTo(Errors.INVALID_RECORD_STATE);
        assertThat(sp.acknowledge("a", List.of(ack(1, 3, ShareRecordTypes.ACCEPT))).join())
            .as("the start offset moved inside the batch").isEqualTo(Errors.NONE);
        assertThat(sp.startOffset()).isEqualTo(4L);
    }

    @Test
    void atMostMaxRecordLocksAreInFlight() {
        SharePartition sp = partition(new SharePartitionConfig(LOCK_MS, 3, 10, 10), 0L);
        assertThat(sp.acquire("a", 500, batches(0, 14, 5)).ranges()).containsExactly(new AcquiredRange(0, 9, 1));
        assertThat(sp.nextFetchOffset()).isEqualTo(-1L);
        assertThat(sp.canAcquire(100L)).isFalse();
        sp.acknowledge("a", List.of(ack(0, 4, ShareRecordTypes.ACCEPT))).join();
        assertThat(sp.nextFetchOffset()).isEqualTo(10L);
        assertThat(sp.acquire("a", 500, batches(10, 14, 5)).ranges()).containsExactly(new AcquiredRange(10, 14, 1));
    }

    @Test
    void theLoadedStateIsResumed() {
        SharePartition sp = partition(new SharePartitionConfig(LOCK_MS, 5, 2_000, 10), 5L,
            new StateBatch(5, 6, (byte) 2, (short) 1), new StateBatch(7, 8, (byte) 0, (short) 2),
            new StateBatch(10, 10, (byte) 4, (short) 1));
        assertThat(sp.startOffset()).isEqualTo(7L);
        assertThat(sp.describe()).containsExactly("7-8:AVAILABLEx2", "9-9:AVAILABLEx0", "10-10:ARCHIVEDx1");
        assertThat(sp.acquire("a", 500, batches(5, 14, 10)).ranges()).containsExactly(
            new AcquiredRange(7, 8, 3), new AcquiredRange(9, 9, 1), new AcquiredRange(11, 14, 1));
    }

    @Test
    void aNewLeaderResumesFromTheWrittenState() {
        // Given: records 0-9 acquired; 0-1 accepted, 3 released, 5 rejected; the rest still acquired
        SharePartition old = partition();
        old.acquire("a", 500, batches(0, 9, 10));
        assertThat(old.acknowledge("a", List.of(ack(0, 5, ShareRecordTypes.ACCEPT, ShareRecordTypes.ACCEPT,
            ShareRecordTypes.ACCEPT, ShareRecordTypes.RELEASE, ShareRecordTypes.ACCEPT, ShareRecordTypes.REJECT)))
            .join()).isEqualTo(Errors.NONE);

        // When: a new leader reads what was written
        StatePersister.PersistedState state = persister.read(KEY, 4).join();
        SharePartition resumed = new SharePartition(KEY, 4, state, 100L, new SharePartitionConfig(LOCK_MS, 3, 2_000,
            10), timer, persister, sp -> available.incrementAndGet(), sp -> fenced.incrementAndGet());

        // Then: it starts after the accepted records; the released one comes again with its next delivery count and
        // the rejected one never; what was still acquired (never written) is delivered again from its count
        assertThat(resumed.startOffset()).isEqualTo(3L);
        assertThat(resumed.acquire("b", 500, batches(0, 9, 10)).ranges()).containsExactly(
            new AcquiredRange(3, 3, 2), new AcquiredRange(6, 9, 1));
    }

    @Test
    void aStartOffsetOfMinusOneIsTheLatestOffset() {
        SharePartition sp = partition(new SharePartitionConfig(LOCK_MS, 5, 2_000, 10), -1L);
        assertThat(sp.startOffset()).isEqualTo(100L);
        assertThat(sp.nextFetchOffset()).isEqualTo(100L);
    }

    @Test
    void aFailedWriteFences() {
        SharePartition sp = partition();
        sp.acquire("a", 500, batches(0, 9, 10));
        persister.answer = Errors.FENCED_LEADER_EPOCH;
        assertThat(sp.acknowledge("a", List.of(ack(0, 0, ShareRecordTypes.ACCEPT))).join())
            .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
        assertThat(sp.isFenced()).isTrue();
        assertThat(fenced.get()).isEqualTo(1);
        assertThat(sp.nextFetchOffset()).isEqualTo(-1L);
        assertThat(sp.acknowledge("a", List.of(ack(1, 1, ShareRecordTypes.ACCEPT))).join())
            .isEqualTo(Errors.NOT_LEADER_OR_FOLLOWER);
    }

    @Test
    void aClosedSessionReleasesTheMembersRecords() {
        SharePartition sp = partition();
        sp.acquire("a", 5, batches(0, 4, 5));
        sp.acquire("b", 5, batches(5, 9, 5));
        assertThat(sp.releaseAcquired("a").join()).isEqualTo(Errors.NONE);
        assertThat(sp.describe()).containsExactly("0-4:AVAILABLEx1", "5-9:ACQUIREDx1@b");
    }
}
