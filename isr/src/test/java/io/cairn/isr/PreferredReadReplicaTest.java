package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader's choice of a preferred read replica (Kafka's {@code ReplicaManager.findPreferredReadReplica}): only
 * in-sync followers whose reported log range holds the fetch offset, on an unfenced broker with the client's listener,
 * chosen by rack; the leader (no preferred replica) otherwise.
 */
class PreferredReadReplicaTest {

    private static final TopicPartition TP = new TopicPartition("orders", 0);
    private static final int EPOCH = 2;
    private static final String LISTENER = "PLAINTEXT";

    @TempDir
    Path dir;

    private final RackAwareReplicaSelector selector = new RackAwareReplicaSelector();
    private final Map<Integer, BrokerRegistration> brokers = new HashMap<>();
    private PartitionLog log;
    private Partition leader;

    @BeforeEach
    void leaderWithTenRecords() {
        log = PartitionLog.open(dir.resolve("orders-0"), LogConfig.defaults(), LogEnvironment.of(Time.SYSTEM), true);
        leader = new Partition(TP, new Uuid(42L, 7L), 1, log, new PartitionRegistration(List.of(1, 2, 3, 4),
            List.of(1, 2, 3), 1, EPOCH, 0), 1, p -> { }, Time.SYSTEM, IsrHarness.quiet());
        leader.appendRecordsToLeader(batch(10), AppendOrigin.CLIENT, 1);
        for (int id = 1; id <= 4; id++) {
            brokers.put(id, broker(id, "r" + id, false, LISTENER));
        }
    }

    @AfterEach
    void closeLog() {
        log.close();
    }

    private static BrokerRegistration broker(int id, String rack, boolean fenced, String listener) {
        return new BrokerRegistration(id, new Uuid(id, id), 10L + id, List.of(new BrokerEndpoint(listener,
            "localhost", 9000 + id, (short) 0)), Optional.ofNullable(rack), fenced, false);
    }

    private static ByteBuffer batch(int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L, new byte[] {(byte) i}, new byte[] {(byte) i});
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

    private void followerAt(int replica, long logStart, long logEnd) {
        leader.updateFollowerFetchState(replica, logEnd, logStart, 1_000L, leader.logEndOffset());
    }

    private Optional<Integer> choose(String rack, long fetchOffset) {
        return ReplicaManager.preferredReadReplica(selector, leader, new ClientMetadata(rack, "c", LISTENER),
            fetchOffset, 2_000L, id -> Optional.ofNullable(brokers.get(id)));
    }

    @Test
    void aConsumerInAnInSyncFollowersRackIsSentToIt() {
        followerAt(2, 0, 10);
        followerAt(3, 0, 10);

        assertThat(choose("r2", 4)).contains(2);
        assertThat(choose("r3", 10)).contains(3);
    }

    @Test
    void theLeaderWhenTheClientIsInItsRackHasNoRackOrNoReplicaOfItsRack() {
        followerAt(2, 0, 10);

        assertThat(choose("r1", 4)).isEmpty();
        assertThat(choose("", 4)).isEmpty();
        assertThat(choose("r9", 4)).isEmpty();
    }

    @Test
    void aFollowerWhoseLogRangeDoesNotHoldTheFetchOffsetIsNotACandidate() {
        followerAt(2, 0, 6);
        followerAt(3, 5, 10);

        assertThat(choose("r2", 7)).as("beyond its log end").isEmpty();
        assertThat(choose("r2", 6)).contains(2);
        assertThat(choose("r3", 4)).as("below its log start").isEmpty();
    }

    @Test
    void aFollowerOutsideTheIsrOnAFencedBrokerOrWithoutTheListenerIsNotACandidate() {
        followerAt(2, 0, 10);
        followerAt(3, 0, 10);
        followerAt(4, 0, 10);
        brokers.put(2, broker(2, "r2", true, LISTENER));
        brokers.put(3, broker(3, "r3", false, "INTERNAL"));

        assertThat(choose("r2", 4)).as("fenced").isEmpty();
        assertThat(choose("r3", 4)).as("no endpoint on the client's listener").isEmpty();
        assertThat(choose("r4", 4)).as("not in the ISR").isEmpty();
    }

    @Test
    void aFollowerThatHasNotFetchedFromThisLeaderIsNotACandidate() {
        assertThat(choose("r2", 0)).isEmpty();
    }
}
