package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.log.AppendOrigin;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogManager;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatchBuilder;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Replica moves between two log directories of a real {@link ReplicaManager} over real logs and a single-voter
 * metadata node: a move while appends go on, a throttled move resumed after a restart, and a restart between the
 * two renames of a swap.
 */
@Timeout(120)
class ReplicaManagerLogDirsIT {

    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @TempDir
    Path dir;

    private MetadataNode node;
    private List<LogManager> logs = List.of();
    private ReplicaManager replicas;

    private Path dirA() {
        return dir.resolve("a");
    }

    private Path dirB() {
        return dir.resolve("b");
    }

    private void start() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        node = MetadataNode.start(MetadataConfig.from(Map.of("node.id", "1",
            "controller.quorum.voters", "1@127.0.0.1:" + port, "metadata.log.dir", dir.resolve("meta").toString(),
            "log.dirs", dir.resolve("meta").toString(), "controller.quorum.election.timeout.ms", "300")));
        await().atMost(Duration.ofSeconds(30)).until(() -> node.activeControllerId() == 1);
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("localhost")
            .setPort(9092).setSecurityProtocol((short) 0));
        BrokerRegistrationResponseData registered = node.registerBroker(new BrokerRegistrationRequestData()
            .setBrokerId(1).setClusterId(node.clusterId()).setIncarnationId(new Uuid(7, 7))
            .setListeners(listeners)).get(30, TimeUnit.SECONDS);
        node.heartbeat(new BrokerHeartbeatRequestData().setBrokerId(1).setBrokerEpoch(registered.brokerEpoch())
            .setCurrentMetadataOffset(node.currentImage().offset()))
            .get(30, TimeUnit.SECONDS);
        startReplicas();
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(TP.topic())
            .setNumPartitions(1).setReplicationFactor((short) 1));
        node.createTopics(request).get(30, TimeUnit.SECONDS);
        // Only the replica manager's applier hosts partitions: the topic is served once it has applied it.
        await().atMost(Duration.ofSeconds(30)).until(() -> replicas.partition(TP).isPresent());
    }

    private void startReplicas() {
        logs = List.of(LogManager.start(dirA(), LogConfig.defaults(), Time.SYSTEM, LogManager.Options.defaults()),
            LogManager.start(dirB(), LogConfig.defaults(), Time.SYSTEM, LogManager.Options.defaults()));
        replicas = new ReplicaManager(1, logs, Map.of("min.insync.replicas", "1"));
        replicas.start(node);
    }

    private void stopReplicas() {
        replicas.close();
        logs.forEach(LogManager::close);
    }

    @AfterEach
    void stop() {
        if (replicas != null) {
            stopReplicas();
        }
        if (node != null) {
            node.close();
        }
    }

    private static ByteBuffer batch(int records, int valueBytes) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(1_000L, null, new byte[valueBytes]);
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

    private static List<Long> baseOffsets(PartitionLog log) {
        List<Long> offsets = new ArrayList<>();
        long next = log.logStartOffset();
        while (next < log.logEndOffset()) {
            try (FetchDataInfo info = log.read(next, 1 << 20, Long.MAX_VALUE, true)) {
                ByteBuffer bytes = info.records().readBytes();
                ByteBuf view = Unpooled.wrappedBuffer(bytes.duplicate());
                bytes.limit(RecordBatches.of(view).sizeOfCompleteBatches());
                view.release();
                int at = 0;
                while (at < bytes.limit()) {
                    RecordBatch batch = RecordBatch.of(bytes, at);
                    offsets.add(batch.baseOffset());
                    next = batch.lastOffset() + 1;
                    at += batch.sizeInBytes();
                }
            }
        }
        return offsets;
    }

    private static boolean hasPartitionDir(Path logDir) throws Exception {
        try (Stream<Path> children = Files.list(logDir)) {
            return children.anyMatch(p -> p.getFileName().toString().startsWith("orders-0"));
        }
    }

    @Test
    void aMoveWhileAppendsGoOnKeepsEveryAcknowledgedBatchAndSurvivesARestart() throws Exception {
        // Given
        start();
        Partition p = replicas.leaderPartition(TP);
        assertThat(p.log().dir().getParent()).isEqualTo(dirA());
        for (int i = 0; i < 300; i++) {
            p.appendRecordsToLeader(batch(10, 1000), AppendOrigin.CLIENT, -1);
        }
        List<Long> acked = new CopyOnWriteArrayList<>(baseOffsets(p.log()));
        AtomicBoolean producing = new AtomicBoolean(true);
        Thread producer = new Thread(() -> {
            while (producing.get()) {
                LogAppendInfo info = replicas.leaderPartition(TP).appendRecordsToLeader(batch(2, 100),
                    AppendOrigin.CLIENT, -1);
                acked.add(info.firstOffset());
            }
        });
        producer.start();

        // When
        Map<TopicPartition, Errors> result = replicas.alterReplicaLogDirs(Map.of(TP, dirB().toString()));
        await().atMost(Duration.ofSeconds(60)).until(() -> p.log().dir().getParent().equals(dirB()));
        producing.set(false);
        producer.join();

        // Then
        assertThat(result).containsEntry(TP, Errors.NONE);
        assertThat(p.futureLog()).isEmpty();
        assertThat(baseOffsets(p.log())).containsExactlyElementsOf(acked);
        await().atMost(Duration.ofSeconds(10)).until(() -> !hasPartitionDir(dirA()));
        stopReplicas();
        startReplicas();
        Partition again = replicas.leaderPartition(TP);
        assertThat(again.log().dir().getParent()).isEqualTo(dirB());
        assertThat(baseOffsets(again.log())).containsExactlyElementsOf(acked);
        assertThat(again.highWatermark()).isEqualTo(again.logEndOffset());
    }

    @Test
    void aThrottledMoveStoppedByARestartResumesFromItsFutureLog() throws Exception {
        // Given
        start();
        Partition p = replicas.leaderPartition(TP);
        for (int i = 0; i < 300; i++) {
            p.appendRecordsToLeader(batch(10, 1000), AppendOrigin.CLIENT, -1);
        }
        List<Long> acked = baseOffsets(p.log());
        replicas.alterLogDirsQuota().updateBound(1L);
        replicas.alterReplicaLogDirs(Map.of(TP, dirB().toString()));
        await().atMost(Duration.ofSeconds(30))
            .until(() -> p.futureLog().map(PartitionLog::logEndOffset).orElse(0L) > 0);
        stopReplicas();
        assertThat(hasPartitionDir(dirA())).isTrue();
        assertThat(hasPartitionDir(dirB())).isTrue();

        // When
        startReplicas();

        // Then
        Partition again = replicas.leaderPartition(TP);
        await().atMost(Duration.ofSeconds(60)).until(() -> again.log().dir().getParent().equals(dirB()));
        assertThat(baseOffsets(again.log())).containsExactlyElementsOf(acked);
    }

    @Test
    void aRestartBetweenTheRenamesOfASwapMakesTheCompleteFutureLogThePartitionsLog() throws Exception {
        // Given: a complete future log in b, and the current log of a already renamed away
        start();
        Partition p = replicas.leaderPartition(TP);
        for (int i = 0; i < 20; i++) {
            p.appendRecordsToLeader(batch(3, 10), AppendOrigin.CLIENT, -1);
        }
        List<Long> acked = baseOffsets(p.log());
        PartitionLog future = logs.get(1).createFutureLog(TP.topic(), TP.partition(), p.log().config(), p.topicId(),
            0L);
        while (FutureLogSync.copyOnce(p.log(), future, 1 << 20) > 0) {
            assertThat(future.logEndOffset()).isPositive();
        }
        stopReplicas();
        Files.move(dirA().resolve("orders-0"), dirA().resolve("orders-0.1234-delete"));

        // When
        startReplicas();

        // Then
        Partition again = replicas.leaderPartition(TP);
        assertThat(again.log().dir()).isEqualTo(dirB().resolve("orders-0"));
        assertThat(again.futureLog()).isEmpty();
        assertThat(baseOffsets(again.log())).containsExactlyElementsOf(acked);
        await().atMost(Duration.ofSeconds(10)).until(() -> !hasPartitionDir(dirA()));
    }

    @Test
    void movesAnswerKafkasErrors() throws Exception {
        // Given
        start();
        replicas.leaderPartition(TP);

        // When
        Map<TopicPartition, Errors> result = replicas.alterReplicaLogDirs(Map.of(
            TP, dir.resolve("elsewhere").toString(),
            new TopicPartition("later", 0), dirB().toString(),
            new TopicPartition("x".repeat(240), 0), dirB().toString()));

        // Then
        assertThat(result).containsEntry(TP, Errors.LOG_DIR_NOT_FOUND)
            .containsEntry(new TopicPartition("later", 0), Errors.REPLICA_NOT_AVAILABLE)
            .containsEntry(new TopicPartition("x".repeat(240), 0), Errors.INVALID_TOPIC_EXCEPTION);
        assertThat(replicas.alterReplicaLogDirs(Map.of(TP, dirA().toString()))).containsEntry(TP, Errors.NONE);
        assertThat(replicas.leaderPartition(TP).futureLog()).isEmpty();
    }
}
