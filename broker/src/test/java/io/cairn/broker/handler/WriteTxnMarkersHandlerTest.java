package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.Time;
import io.cairn.log.index.AbortedTxn;
import io.cairn.testkit.LeakDetection;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersRequestData.WritableTxnMarker;
import io.cairn.wire.message.WriteTxnMarkersRequestData.WritableTxnMarkerTopic;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerPartitionResult;
import io.cairn.wire.message.WriteTxnMarkersResponseData.WritableTxnMarkerResult;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** WriteTxnMarkers against a real metadata node, {@code ReplicaManager}, logs and purgatory. */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WriteTxnMarkersHandlerTest {

    @TempDir
    static Path dir;
    private static PartitionsFixture partitions;
    private static PartitionPurgatory purgatory;
    private static WriteTxnMarkersHandler handler;
    private static final ConcurrentLinkedQueue<Integer> OFFSETS_MARKERS = new ConcurrentLinkedQueue<>();

    @BeforeAll
    static void start() throws Exception {
        partitions = PartitionsFixture.start(dir);
        purgatory = new PartitionPurgatory(partitions.replicaManager());
        MarkerAppender appender = new MarkerAppender(partitions.replicaManager(), purgatory, Time.SYSTEM, 30_000L);
        handler = new WriteTxnMarkersHandler(appender, (partition, producerId, epoch, coordinatorEpoch, commit) -> {
            OFFSETS_MARKERS.add(partition);
            return CompletableFuture.failedFuture(Errors.NOT_COORDINATOR.exception());
        });
        partitions.registerSecondBroker();
    }

    @AfterAll
    static void stop() {
        purgatory.close();
        partitions.close();
    }

    private static void appendTransactional(Partition partition, long producerId, int sequence) {
        ByteBuf batch = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE)
                .producer(producerId, (short) 0, sequence).transactional(true)
                .append(1L, new byte[] {1}, new byte[] {2}).append(1L, new byte[] {3}, new byte[] {4}).build();
        try {
            partition.appendRecordsToLeader(batch.nioBuffer(), AppendOrigin.CLIENT, -1);
        } finally {
            batch.release();
        }
    }

    private static WritableTxnMarker marker(long producerId, boolean commit, int coordinatorEpoch,
                                            Map<String, List<Integer>> topics) {
        WritableTxnMarker marker = new WritableTxnMarker().setProducerId(producerId).setProducerEpoch((short) 0)
                .setTransactionResult(commit).setCoordinatorEpoch(coordinatorEpoch);
        topics.forEach((name, indexes) -> marker.topics().add(new WritableTxnMarkerTopic().setName(name)
                .setPartitionIndexes(new ArrayList<>(indexes))));
        return marker;
    }

    private static WriteTxnMarkersResponseData send(WritableTxnMarker... markers) throws Exception {
        WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData();
        request.markers().addAll(List.of(markers));
        WriteTxnMarkersResponseData response = handler.handle(MetadataFixture.context(ApiKey.WRITE_TXN_MARKERS, 1),
                request).toCompletableFuture().get(30, TimeUnit.SECONDS);
        return (WriteTxnMarkersResponseData) MetadataFixture.roundTrip(response, ApiKey.WRITE_TXN_MARKERS, 1, true);
    }

    /** Every partition's error of the response, as "producerId/topic-partition=ERROR". */
    private static List<String> errors(WriteTxnMarkersResponseData response) {
        List<String> errors = new ArrayList<>();
        for (WritableTxnMarkerResult result : response.markers()) {
            result.topics().forEach(t -> t.partitions().stream()
                    .map(p -> result.producerId() + "/" + t.name() + "-" + p.partitionIndex() + "="
                            + Errors.forCode(p.errorCode()))
                    .forEach(errors::add));
        }
        return errors;
    }

    @Test
    void anAbortMarkerEndsTheTransactionAdvancesTheLastStableOffsetAndIndexesTheAbortedRange() throws Exception {
        // Given
        partitions.createTopicOn("aborted", List.of(1));
        Partition partition = partitions.partition("aborted", 0);
        partitions.append("aborted", 0, 1L);
        appendTransactional(partition, 7L, 0);
        long stableBefore = partition.lastStableOffset();

        // When
        WriteTxnMarkersResponseData response = send(marker(7L, false, 3, Map.of("aborted", List.of(0))));

        // Then
        assertThat(errors(response)).containsExactly("7/aborted-0=NONE");
        assertThat(stableBefore).isEqualTo(1);
        assertThat(partition.logEndOffset()).isEqualTo(4);
        assertThat(partition.highWatermark()).isEqualTo(4);
        assertThat(partition.lastStableOffset()).isEqualTo(4);
        try (FetchDataInfo read = partition.log().readCommitted(0, 100_000, partition.lastStableOffset())) {
            assertThat(read.abortedTransactions()).containsExactly(new AbortedTxn(7L, 1, 3, 4));
        }
        assertThat(partition.log().activeProducers()).singleElement()
                .satisfies(p -> {
                    assertThat(p.coordinatorEpoch()).isEqualTo(3);
                    assertThat(p.currentTxnStartOffset()).isEqualTo(-1L);
                });
    }

    @Test
    void aCommitMarkerOfAnOlderCoordinatorEpochIsFencedAndTheTransactionStaysOpen() throws Exception {
        // Given
        partitions.createTopicOn("fenced", List.of(1));
        Partition partition = partitions.partition("fenced", 0);
        appendTransactional(partition, 8L, 0);
        assertThat(errors(send(marker(8L, true, 5, Map.of("fenced", List.of(0)))))).containsExactly(
                "8/fenced-0=NONE");
        appendTransactional(partition, 8L, 2);

        // When
        WriteTxnMarkersResponseData response = send(marker(8L, true, 4, Map.of("fenced", List.of(0))));

        // Then
        assertThat(errors(response)).containsExactly("8/fenced-0=TRANSACTION_COORDINATOR_FENCED");
        assertThat(partition.logEndOffset()).isEqualTo(5);
        assertThat(partition.lastStableOffset()).isEqualTo(3);
        try (FetchDataInfo read = partition.log().readCommitted(0, 100_000, partition.lastStableOffset())) {
            assertThat(read.abortedTransactions()).isEmpty();
        }
    }

    @Test
    void partitionsElsewhereUnknownOrOfTheOffsetsTopicGetKafkasErrors() throws Exception {
        // Given
        partitions.createTopicOn("followed", List.of(2, 1));
        partitions.createTopicOn("__consumer_offsets", List.of(1));
        partitions.createTopicOn("mixed", List.of(1));
        appendTransactional(partitions.partition("mixed", 0), 9L, 0);

        // When
        WriteTxnMarkersResponseData response = send(
                marker(9L, true, 0, Map.of("mixed", List.of(0, 1), "followed", List.of(0))),
                marker(10L, false, 0, Map.of("__consumer_offsets", List.of(0), "nothing", List.of(0))),
                marker(9L, true, 0, Map.of("nothing", List.of(3))));

        // Then
        assertThat(errors(response)).containsExactlyInAnyOrder("9/mixed-0=NONE", "9/mixed-1=UNKNOWN_TOPIC_OR_PARTITION",
                "9/followed-0=NOT_LEADER_OR_FOLLOWER", "10/__consumer_offsets-0=NOT_LEADER_OR_FOLLOWER",
                "10/nothing-0=UNKNOWN_TOPIC_OR_PARTITION", "9/nothing-3=UNKNOWN_TOPIC_OR_PARTITION");
        assertThat(response.markers()).extracting(WritableTxnMarkerResult::producerId).containsExactly(9L, 10L);
        assertThat(OFFSETS_MARKERS).containsExactly(0);
        assertThat(partitions.partition("mixed", 0).lastStableOffset()).isEqualTo(3);
        assertThat(response.markers().get(0).topics().stream().flatMap(t -> t.partitions().stream())
                .map(WritableTxnMarkerPartitionResult::partitionIndex).collect(Collectors.toList())).hasSize(4);
    }
}
