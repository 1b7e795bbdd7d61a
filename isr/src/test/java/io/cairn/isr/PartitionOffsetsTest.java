package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogManager;
import io.cairn.log.Time;
import io.cairn.log.TimestampAndOffset;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.ErrorCodeException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.FencedLeaderEpochException;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.UnknownLeaderEpochException;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Partition's ListOffsets and OffsetForLeaderEpoch lookups against Kafka's rules, on a real log. */
class PartitionOffsetsTest {

    private static final int BROKER = 1;
    private static final Uuid TOPIC_ID = new Uuid(11, 12);
    /** The tests write records from 1970: no time-based roll or retention may touch them. */
    private static final LogConfig CONFIG = LogConfig.builder().segmentMs(Long.MAX_VALUE).retentionMs(-1L).build();

    @TempDir
    Path dir;
    private LogManager logs;
    private int partitionCount;

    @BeforeEach
    void startLogs() {
        logs = LogManager.start(dir, CONFIG, Time.SYSTEM, LogManager.Options.defaults());
    }

    @AfterEach
    void closeLogs() {
        logs.close();
    }

    private Partition partition(List<Integer> isr, int leader, int leaderEpoch) {
        String topic = "t" + partitionCount++;
        return new Partition(new TopicPartition(topic, 0), TOPIC_ID, BROKER,
                logs.getOrCreateLog(topic, 0, CONFIG, TOPIC_ID),
                new PartitionRegistration(isr, isr, leader, leaderEpoch, 0), 1, p -> { }, Time.SYSTEM,
                IsrHarness.quiet());
    }

    private static void append(Partition partition, long... timestamps) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (long timestamp : timestamps) {
            builder.append(timestamp, null, ("v" + timestamp).getBytes());
        }
        ByteBuf batch = builder.build();
        try {
            partition.appendRecordsToLeader(batch.nioBuffer(), AppendOrigin.CLIENT, 1);
        } finally {
            batch.release();
        }
    }

    private static void newEpoch(Partition partition, int leaderEpoch) {
        PartitionRegistration old = partition.registration();
        partition.update(new PartitionRegistration(old.replicas(), old.isr(), old.leader(), leaderEpoch,
                old.partitionEpoch() + 1));
    }

    private static TimestampAndOffset consumerLookup(Partition partition, long timestamp) {
        return partition.fetchOffsetForTimestamp(timestamp, FetchIsolation.HIGH_WATERMARK, Partition.NO_EPOCH, true)
                .orElseThrow();
    }

    @Test
    void latestIsTheHighWatermarkInTheCurrentLeaderEpochAndEarliestTheLogStartInTheFirstEpoch() {
        // Given
        Partition partition = partition(List.of(BROKER), BROKER, 0);
        append(partition, 1000, 1001);
        newEpoch(partition, 3);
        append(partition, 1002);

        // When
        TimestampAndOffset latest = consumerLookup(partition, TimestampAndOffset.LATEST_TIMESTAMP);
        TimestampAndOffset earliest = consumerLookup(partition, TimestampAndOffset.EARLIEST_TIMESTAMP);
        TimestampAndOffset earliestLocal = consumerLookup(partition, TimestampAndOffset.EARLIEST_LOCAL_TIMESTAMP);

        // Then
        assertThat(latest).isEqualTo(new TimestampAndOffset(-1L, 3L, 3));
        assertThat(earliest).isEqualTo(new TimestampAndOffset(-1L, 0L, 0));
        assertThat(earliestLocal).isEqualTo(earliest);
    }

    @Test
    void aTimestampFindsTheFirstRecordAtOrAfterItAndMaxTimestampTheRecordWithTheLargestOne() {
        // Given
        Partition partition = partition(List.of(BROKER), BROKER, 2);
        append(partition, 100, 300, 200);
        append(partition, 250, 260);

        // When / Then
        assertThat(consumerLookup(partition, 150)).isEqualTo(new TimestampAndOffset(300L, 1L, 2));
        assertThat(consumerLookup(partition, 255)).isEqualTo(new TimestampAndOffset(300L, 1L, 2));
        assertThat(consumerLookup(partition, 0)).isEqualTo(new TimestampAndOffset(100L, 0L, 2));
        assertThat(consumerLookup(partition, TimestampAndOffset.MAX_TIMESTAMP))
                .isEqualTo(new TimestampAndOffset(300L, 1L, 2));
        assertThat(partition.fetchOffsetForTimestamp(301, FetchIsolation.HIGH_WATERMARK, Partition.NO_EPOCH, true))
                .isEmpty();
    }

    @Test
    void latestTieredIsOffsetMinusOneWithoutTieredStorage() {
        // Given
        Partition partition = partition(List.of(BROKER), BROKER, 0);
        append(partition, 5);

        // When
        TimestampAndOffset latestTiered = consumerLookup(partition, Partition.LATEST_TIERED_TIMESTAMP);

        // Then
        assertThat(latestTiered).isEqualTo(new TimestampAndOffset(-1L, -1L, -1));
    }

    @Test
    void anEmptyLogHasNoMaxTimestampAndNoRecordForATimestamp() {
        // Given
        Partition partition = partition(List.of(BROKER), BROKER, 0);

        // When / Then
        assertThat(partition.fetchOffsetForTimestamp(TimestampAndOffset.MAX_TIMESTAMP, FetchIsolation.HIGH_WATERMARK,
                Partition.NO_EPOCH, true)).isEmpty();
        assertThat(partition.fetchOffsetForTimestamp(0, FetchIsolation.HIGH_WATERMARK, Partition.NO_EPOCH, true))
                .isEmpty();
        assertThat(consumerLookup(partition, TimestampAndOffset.LATEST_TIMESTAMP))
                .isEqualTo(new TimestampAndOffset(-1L, 0L, 0));
        assertThat(consumerLookup(partition, TimestampAndOffset.EARLIEST_TIMESTAMP))
                .isEqualTo(new TimestampAndOffset(-1L, 0L, 0));
    }

    @Test
    void anOlderLeaderEpochIsFencedANewerOneUnknownAndAFollowerAnswersOnlyTheDebuggingReplica() {
        // Given
        Partition partition = partition(List.of(BROKER), BROKER, 0);
        append(partition, 1);
        newEpoch(partition, 4);

        // When / Then
        assertThatThrownBy(() -> partition.fetchOffsetForTimestamp(-1L, FetchIsolation.HIGH_WATERMARK, 3, true))
                .isInstanceOf(FencedLeaderEpochException.class);
        assertThatThrownBy(() -> partition.fetchOffsetForTimestamp(-1L, FetchIsolation.HIGH_WATERMARK, 5, true))
                .isInstanceOf(UnknownLeaderEpochException.class);
        assertThatThrownBy(() -> partition.lastOffsetForLeaderEpoch(3, 0, true))
                .isInstanceOf(FencedLeaderEpochException.class);
        assertThat(partition.fetchOffsetForTimestamp(-1L, FetchIsolation.HIGH_WATERMARK, 4, true)).isPresent();

        PartitionRegistration old = partition.registration();
        partition.update(new PartitionRegistration(List.of(BROKER, 2), List.of(BROKER, 2), 2, 5,
                old.partitionEpoch() + 1));
        assertThatThrownBy(() -> partition.fetchOffsetForTimestamp(-1L, FetchIsolation.HIGH_WATERMARK, 5, true))
                .isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(partition.fetchOffsetForTimestamp(-1L, null, 5, false))
                .contains(new TimestampAndOffset(-1L, 1L, 5));
    }

    @Test
    void aLeaderWhoseHighWatermarkLagsTheStartOfItsEpochAnswersOffsetNotAvailableToConsumers() {
        // Given: a follower in the ISR has not fetched, so the high watermark stays at 0
        Partition partition = partition(List.of(BROKER, 2), BROKER, 0);
        append(partition, 10, 20, 30);
        newEpoch(partition, 1);

        // When / Then
        assertThat(partition.highWatermark()).isZero();
        assertThatThrownBy(() -> partition.fetchOffsetForTimestamp(TimestampAndOffset.LATEST_TIMESTAMP,
                FetchIsolation.HIGH_WATERMARK, Partition.NO_EPOCH, true))
                .isInstanceOf(ErrorCodeException.class)
                .satisfies(e -> assertThat(Errors.forException(e)).isEqualTo(Errors.OFFSET_NOT_AVAILABLE));
        assertThatThrownBy(() -> partition.fetchOffsetForTimestamp(15, FetchIsolation.HIGH_WATERMARK,
                Partition.NO_EPOCH, true))
                .satisfies(e -> assertThat(Errors.forException(e)).isEqualTo(Errors.OFFSET_NOT_AVAILABLE));
        assertThat(partition.fetchOffsetForTimestamp(TimestampAndOffset.LATEST_TIMESTAMP, null, Partition.NO_EPOCH,
                true)).contains(new TimestampAndOffset(-1L, 3L, 1));
        assertThat(partition.fetchOffsetForTimestamp(TimestampAndOffset.EARLIEST_TIMESTAMP,
                FetchIsolation.HIGH_WATERMARK, Partition.NO_EPOCH, true)).isPresent();

        // When the follower catches up, the consumer sees the records
        partition.updateFollowerFetchState(2, 3L, -1L, 0L, partition.logEndOffset());
        assertThat(consumerLookup(partition, 15)).isEqualTo(new TimestampAndOffset(20L, 1L, 0));
    }

    @Test
    void recordsAtOrAboveTheHighWatermarkAreNotFoundByTimestamp() {
        // Given: the follower has only the first record
        Partition partition = partition(List.of(BROKER, 2), BROKER, 0);
        append(partition, 10, 20, 30);
        partition.updateFollowerFetchState(2, 1L, -1L, 0L, partition.logEndOffset());

        // When
        Optional<TimestampAndOffset> visible = partition.fetchOffsetForTimestamp(5, FetchIsolation.HIGH_WATERMARK,
                Partition.NO_EPOCH, true);
        Optional<TimestampAndOffset> hidden = partition.fetchOffsetForTimestamp(15, FetchIsolation.HIGH_WATERMARK,
                Partition.NO_EPOCH, true);
        Optional<TimestampAndOffset> forReplica = partition.fetchOffsetForTimestamp(15, null, Partition.NO_EPOCH,
                true);

        // Then
        assertThat(visible).contains(new TimestampAndOffset(10L, 0L, 0));
        assertThat(hidden).isEmpty();
        assertThat(forReplica).contains(new TimestampAndOffset(20L, 1L, 0));
        assertThat(consumerLookup(partition, TimestampAndOffset.LATEST_TIMESTAMP).offset()).isEqualTo(1L);
    }

    @Test
    void offsetForLeaderEpochFollowsKafkasEpochCacheRules() {
        // Given: epochs 2 (offsets 0-2), 4 (3-4) and 7 (5), log end offset 6
        Partition partition = partition(List.of(BROKER), BROKER, 2);
        append(partition, 1, 2, 3);
        newEpoch(partition, 4);
        append(partition, 4, 5);
        newEpoch(partition, 7);
        append(partition, 6);

        // When / Then
        assertThat(partition.lastOffsetForLeaderEpoch(Partition.NO_EPOCH, 7, true))
                .isEqualTo(new EpochEndOffset(7, 6L));
        assertThat(partition.lastOffsetForLeaderEpoch(Partition.NO_EPOCH, 4, true))
                .isEqualTo(new EpochEndOffset(4, 5L));
        assertThat(partition.lastOffsetForLeaderEpoch(Partition.NO_EPOCH, 5, true))
                .isEqualTo(new EpochEndOffset(4, 5L));
        assertThat(partition.lastOffsetForLeaderEpoch(7, 3, true))
                .isEqualTo(new EpochEndOffset(2, 3L));
        assertThat(partition.lastOffsetForLeaderEpoch(Partition.NO_EPOCH, 1, true))
                .isEqualTo(new EpochEndOffset(1, 0L));
        assertThat(partition.lastOffsetForLeaderEpoch(Partition.NO_EPOCH, 8, true))
                .isEqualTo(new EpochEndOffset(EpochEndOffset.UNDEFINED_EPOCH, EpochEndOffset.UNDEFINED_EPOCH_OFFSET));
        assertThat(partition.lastOffsetForLeaderEpoch(Partition.NO_EPOCH, -1, true))
                .isEqualTo(new EpochEndOffset(EpochEndOffset.UNDEFINED_EPOCH, EpochEndOffset.UNDEFINED_EPOCH_OFFSET));
    }

    @Test
    void theLeadersCurrentEpochStartsAtTheLogEndEvenBeforeAnythingIsAppendedInIt() {
        // Given: epoch 0 holds offsets 0-1; the leader moved to epoch 3 and 5 without appending
        Partition empty = partition(List.of(BROKER), BROKER, 0);
        Partition partition = partition(List.of(BROKER), BROKER, 0);
        append(partition, 1, 2);
        newEpoch(partition, 3);
        newEpoch(partition, 5);

        // When / Then: as Kafka's leader, which records the epoch when it is elected
        assertThat(empty.lastOffsetForLeaderEpoch(0, 0, true)).isEqualTo(new EpochEndOffset(0, 0L));
        assertThat(partition.lastOffsetForLeaderEpoch(5, 3, true)).isEqualTo(new EpochEndOffset(0, 2L));
        assertThat(partition.lastOffsetForLeaderEpoch(5, 5, true)).isEqualTo(new EpochEndOffset(5, 2L));
        assertThat(partition.lastOffsetForLeaderEpoch(5, 0, true)).isEqualTo(new EpochEndOffset(0, 2L));
    }

    @Test
    void aFollowerAnswersOffsetForLeaderEpochOnlyWhenLeadershipIsNotRequired() {
        // Given
        Partition partition = partition(List.of(BROKER, 2), 2, 1);

        // When / Then
        assertThatThrownBy(() -> partition.lastOffsetForLeaderEpoch(1, 0, true))
                .isInstanceOf(NotLeaderOrFollowerException.class);
        assertThat(partition.lastOffsetForLeaderEpoch(1, 0, false)).isEqualTo(new EpochEndOffset(
                EpochEndOffset.UNDEFINED_EPOCH, EpochEndOffset.UNDEFINED_EPOCH_OFFSET));
    }
}
