package io.cairn.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.LogCapture;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.GroupRecordSerde;
import io.cairn.broker.group.GroupRecords;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.ControlRecordType;
import io.cairn.wire.record.EndTransactionMarker;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CoordinatorLoaderTest {

    private static final int MIB = 1024 * 1024;

    @TempDir
    Path tmp;

    private final long now = System.currentTimeMillis();
    private PartitionLog log;

    @AfterEach
    void closeLog() {
        if (log != null) {
            log.close();
        }
    }

    private PartitionLog open(LogConfig.Builder config) {
        log = PartitionLog.open(tmp.resolve("__consumer_offsets-0"), config.cleanupPolicy("compact").build(),
                LogEnvironment.of(Time.SYSTEM), true);
        return log;
    }

    private PartitionLog open() {
        return open(LogConfig.builder());
    }

    @Test
    void offsetsGroupsAndTombstonesLoadBackInLogOrder() {
        // Given: three batches of offsets, group metadata and tombstones
        open();
        List<CoordinatorRecord> first = List.of(offset("g1", "orders", 0, 10L), offset("g1", "orders", 1, 20L),
                group("g1", 1));
        List<CoordinatorRecord> second = List.of(offset("g1", "orders", 0, 11L), group("g2", 3));
        List<CoordinatorRecord> third = List.of(GroupRecords.offsetTombstone(offsetKey("g1", "orders", 1)),
                GroupRecords.groupTombstone("g2"));
        append(first);
        append(second);
        append(third);
        List<CoordinatorRecord> written = new ArrayList<>(first);
        written.addAll(second);
        written.addAll(third);

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        long before = System.nanoTime();
        CoordinatorLoader.LoadSummary summary = CoordinatorLoader.load(log, log.logEndOffset(), GroupRecordSerde.SERDE, sink(loaded));
        long wallMs = (System.nanoTime() - before) / 1_000_000L;

        // Then
        assertThat(loaded).containsExactlyElementsOf(written);
        assertThat(summary.records()).isEqualTo(7);
        assertThat(summary.skipped()).isZero();
        assertThat(summary.bytes()).isEqualTo(log.size());
        assertThat(summary.endOffset()).isEqualTo(7L);
        assertThat(summary.elapsedMs()).as("the load's own time, in ms, within the call's").isBetween(0L, wallMs);
    }

    @Test
    void anEmptyLogLoadsNothing() {
        // Given
        open();

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        CoordinatorLoader.LoadSummary summary = CoordinatorLoader.load(log, log.logEndOffset(), GroupRecordSerde.SERDE, sink(loaded));

        // Then
        assertThat(loaded).isEmpty();
        assertThat(summary.records()).isZero();
        assertThat(summary.bytes()).isZero();
    }

    @Test
    void aCompressedBatchLoadsToo() {
        // Given: a gzip batch (compression.type=producer keeps what a writer compressed) between two plain ones
        open();
        List<CoordinatorRecord> compressed = List.of(offset("g", "t", 0, 1L), offset("g", "t", 1, 2L),
                group("g", 4), GroupRecords.offsetTombstone(offsetKey("g", "t", 2)));
        append(List.of(offset("g", "t", 0, 0L)));
        log.appendAsLeader(compressedBatch(CompressionType.GZIP, compressed), 0, AppendOrigin.COORDINATOR);
        append(List.of(offset("g", "t", 1, 3L)));

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        CoordinatorLoader.LoadSummary summary = CoordinatorLoader.load(log, log.logEndOffset(), GroupRecordSerde.SERDE, sink(loaded));

        // Then
        List<CoordinatorRecord> expected = new ArrayList<>();
        expected.add(offset("g", "t", 0, 0L));
        expected.addAll(compressed);
        expected.add(offset("g", "t", 1, 3L));
        assertThat(loaded).containsExactlyElementsOf(expected);
        assertThat(summary.records()).isEqualTo(6);
    }

    @Test
    void nothingAtOrAfterTheEndOffsetIsLoaded() {
        // Given: three batches, the high watermark after the second
        open();
        append(List.of(offset("g", "t", 0, 1L), offset("g", "t", 1, 1L)));
        append(List.of(offset("g", "t", 0, 2L)));
        long highWatermark = log.logEndOffset();
        append(List.of(offset("g", "t", 0, 3L), group("g", 9)));

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        CoordinatorLoader.LoadSummary summary = CoordinatorLoader.load(log, highWatermark, GroupRecordSerde.SERDE, sink(loaded));

        // Then
        assertThat(highWatermark).isEqualTo(3L);
        assertThat(loaded).containsExactly(offset("g", "t", 0, 1L), offset("g", "t", 1, 1L), offset("g", "t", 0, 2L));
        assertThat(summary.endOffset()).isEqualTo(3L);
        assertThat(CoordinatorLoader.load(log, 0L, GroupRecordSerde.SERDE, sink(loaded)).records()).isZero();
    }

    @Test
    void recordsOfAnUnknownTypeAndMalformedRecordsAreSkippedAndCounted() {
        // Given: a record of a type no Kafka 4.1 coordinator writes (99), a malformed key and a malformed value among
        // known records
        open();
        byte[] unknownTypeKey = {0, 99, 0, 1, 'g'};
        byte[] unknownTypeValue = {0, 0, 0, 0, 0, 7, 0};
        byte[] truncatedKey = {0, 1, 0, 5, 'g'};
        byte[] goodKey = GroupRecordSerde.keyBytes(offset("g", "t", 5, 1L));
        byte[] badValue = {0, 3, 1};
        append(List.of(offset("g", "t", 0, 1L)));
        ByteBuffer mixed = rawBatch(CompressionType.NONE, List.of(
                new byte[][] {unknownTypeKey, unknownTypeValue},
                new byte[][] {GroupRecordSerde.keyBytes(group("g", 1)), GroupRecordSerde.valueBytes(group("g", 1))},
                new byte[][] {truncatedKey, null},
                new byte[][] {goodKey, badValue}));
        log.appendAsLeader(mixed, 0, AppendOrigin.COORDINATOR);
        append(List.of(offset("g", "t", 0, 2L)));

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        CoordinatorLoader.LoadSummary summary;
        List<String> warnings;
        try (LogCapture logs = LogCapture.start()) {
            summary = CoordinatorLoader.load(log, log.logEndOffset(), GroupRecordSerde.SERDE, sink(loaded));
            warnings = logs.warnings("__consumer_offsets-0");
        }

        // Then
        assertThat(loaded).containsExactly(offset("g", "t", 0, 1L), group("g", 1), offset("g", "t", 0, 2L));
        assertThat(summary.records()).isEqualTo(3);
        assertThat(summary.skipped()).isEqualTo(3);
        assertThat(warnings).anyMatch(w -> w.contains("malformed record at offset 3"))
                .anyMatch(w -> w.contains("malformed record at offset 4") && w.contains("OffsetCommitValue"))
                .anyMatch(w -> w.contains("Skipped 3 record(s)") && w.contains("1 of an unknown record type"));
    }

    @Test
    void controlBatchesAreSkipped() {
        // Given: a transaction marker between two batches
        open();
        append(List.of(offset("g", "t", 0, 1L)));
        ByteBuf marker = RecordBatchBuilder.endTransactionMarker(UnpooledByteBufAllocator.DEFAULT, 0L, now, 0, 42L,
                (short) 0, new EndTransactionMarker(ControlRecordType.COMMIT, 0));
        log.appendAsLeader(copy(marker), 0, AppendOrigin.COORDINATOR);
        append(List.of(offset("g", "t", 0, 2L)));

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        CoordinatorLoader.LoadSummary summary = CoordinatorLoader.load(log, log.logEndOffset(), GroupRecordSerde.SERDE, sink(loaded));

        // Then
        assertThat(loaded).containsExactly(offset("g", "t", 0, 1L), offset("g", "t", 0, 2L));
        assertThat(summary.skipped()).isZero();
        assertThat(summary.bytes()).isEqualTo(log.size());
    }

    @Test
    void aTenMegabyteLogLoadsWithOneMebibyteChunksIncludingABatchLargerThanAChunk() {
        // Given: ~10 MB over several segments, and one 2 MiB batch (a group with a large assignment)
        open(LogConfig.builder().segmentBytes(3 * MIB).maxMessageBytes(4 * MIB));
        String metadata = "m".repeat(2000);
        List<CoordinatorRecord> written = new ArrayList<>();
        long sequence = 0;
        for (int batch = 0; batch < 100; batch++) {
            List<CoordinatorRecord> records = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                records.add(GroupRecords.offset(offsetKey("g", "t", i), new OffsetCommitValue()
                        .setOffset(sequence++).setMetadata(metadata).setCommitTimestamp(now)));
            }
            append(records);
            written.addAll(records);
            if (batch == 50) {
                CoordinatorRecord large = GroupRecords.group("large", groupValue(7, new byte[2 * MIB]));
                append(List.of(large));
                written.add(large);
            }
        }

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        CoordinatorLoader.LoadSummary summary = CoordinatorLoader.load(log, log.logEndOffset(), GroupRecordSerde.SERDE, sink(loaded),
                CoordinatorLoader.DEFAULT_CHUNK_BYTES);

        // Then
        assertThat(log.size()).isGreaterThan(10L * 1000 * 1000);
        assertThat(log.numberOfSegments()).isGreaterThan(1);
        assertThat(summary.records()).isEqualTo(written.size());
        assertThat(summary.bytes()).isEqualTo(log.size());
        assertThat(loaded).isEqualTo(written);
    }

    @Test
    void aChunkSmallerThanEveryBatchStillLoadsEverything() {
        // Given
        open();
        List<CoordinatorRecord> written = new ArrayList<>();
        for (int batch = 0; batch < 20; batch++) {
            List<CoordinatorRecord> records = List.of(offset("g", "t", batch, batch), group("g" + batch, batch));
            append(records);
            written.addAll(records);
        }

        // When
        List<CoordinatorRecord> loaded = new ArrayList<>();
        CoordinatorLoader.load(log, log.logEndOffset(), GroupRecordSerde.SERDE, sink(loaded), 1);

        // Then
        assertThat(loaded).isEqualTo(written);
    }

    /** A shard that lists the records it is fed (markers are counted by the load summary). */
    private static CoordinatorShard<CoordinatorRecord> sink(List<CoordinatorRecord> loaded) {
        return new CoordinatorShard<>() {
            @Override
            public void replay(long offset, long producerId, short producerEpoch, CoordinatorRecord record) {
                loaded.add(record);
            }

            @Override
            public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
            }

            @Override
            public void onLoaded() {
            }

            @Override
            public void onUnloaded() {
            }
        };
    }

    private void append(List<CoordinatorRecord> records) {
        log.appendAsLeader(CoordinatorBatches.toBatch(CoordinatorBatches.encode(GroupRecordSerde.SERDE, records), now,
                -1L, (short) -1), 0, AppendOrigin.COORDINATOR);
    }

    private ByteBuffer compressedBatch(CompressionType compression, List<CoordinatorRecord> records) {
        List<byte[][]> raw = new ArrayList<>();
        for (CoordinatorRecord record : records) {
            raw.add(new byte[][] {GroupRecordSerde.keyBytes(record), GroupRecordSerde.valueBytes(record)});
        }
        return rawBatch(compression, raw);
    }

    private ByteBuffer rawBatch(CompressionType compression, List<byte[][]> keysAndValues) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, compression);
        for (byte[][] keyAndValue : keysAndValues) {
            builder.append(now, keyAndValue[0], keyAndValue[1]);
        }
        return copy(builder.build());
    }

    private static ByteBuffer copy(ByteBuf buf) {
        try {
            ByteBuffer out = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), out);
            return out.flip();
        } finally {
            buf.release();
        }
    }

    private CoordinatorRecord offset(String group, String topic, int partition, long offset) {
        return GroupRecords.offset(offsetKey(group, topic, partition), new OffsetCommitValue().setOffset(offset)
                .setLeaderEpoch(0).setMetadata("").setCommitTimestamp(now));
    }

    private static OffsetCommitKey offsetKey(String group, String topic, int partition) {
        return new OffsetCommitKey().setGroup(group).setTopic(topic).setPartition(partition);
    }

    private CoordinatorRecord group(String groupId, int generation) {
        return GroupRecords.group(groupId, groupValue(generation, new byte[] {1, 2, 3}));
    }

    private GroupMetadataValue groupValue(int generation, byte[] assignment) {
        return new GroupMetadataValue().setProtocolType("consumer").setGeneration(generation).setProtocol("range")
                .setLeader("member-1").setCurrentStateTimestamp(now).setMembers(List.of(
                        new GroupMetadataValue.MemberMetadata().setMemberId("member-1").setClientId("client")
                                .setClientHost("/127.0.0.1").setRebalanceTimeout(300_000).setSessionTimeout(45_000)
                                .setSubscription(new byte[] {0, 1}).setAssignment(assignment)));
    }
}
