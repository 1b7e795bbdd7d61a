package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.isr.fetcher.LeaderEndpoint;
import io.cairn.isr.fetcher.ReplicaFetcherConfig;
import io.cairn.isr.fetcher.ReplicaFetcherThread;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogManager;
import io.cairn.log.Time;
import io.cairn.log.io.FileLayer;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotLeaderOrFollowerException;
import io.cairn.wire.error.UnknownTopicOrPartitionException;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.UnregisterBrokerRequestData;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A real single-voter metadata node drives a {@link ReplicaManager} over real logs. */
@Timeout(120)
class ReplicaManagerIT {

    @TempDir
    Path dir;

    private MetadataNode node;
    private LogManager logs;
    private ReplicaManager replicas;
    private long brokerOneEpoch;

    private void start() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Path data = dir.resolve("data");
        node = MetadataNode.start(MetadataConfig.from(Map.of("node.id", "1",
            "controller.quorum.voters", "1@127.0.0.1:" + port, "metadata.log.dir", data.toString(),
            "log.dirs", data.toString(), "controller.quorum.election.timeout.ms", "300")));
        await().atMost(Duration.ofSeconds(30)).until(() -> node.activeControllerId() == 1);
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("localhost")
            .setPort(9092).setSecurityProtocol((short) 0));
        BrokerRegistrationResponseData registered = node.registerBroker(new BrokerRegistrationRequestData()
            .setBrokerId(1).setClusterId(node.clusterId()).setIncarnationId(new Uuid(7, 7))
            .setListeners(listeners)).get(30, TimeUnit.SECONDS);
        assertThat(registered.errorCode()).isEqualTo(Errors.NONE.code());
        brokerOneEpoch = registered.brokerEpoch();
        node.heartbeat(new BrokerHeartbeatRequestData().setBrokerId(1).setBrokerEpoch(registered.brokerEpoch())
            .setCurrentMetadataOffset(node.currentImage().offset()))
            .get(30, TimeUnit.SECONDS);
        logs = LogManager.start(data, LogConfig.defaults(), Time.SYSTEM, LogManager.Options.defaults());
        replicas = new ReplicaManager(1, List.of(logs), Map.of("min.insync.replicas", "1"));
        replicas.start(node);
    }

    private void stop() {
        replicas.close();
        logs.close();
        node.close();
    }

    private void createTopic(String name, int partitions) throws Exception {
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(name)
            .setNumPartitions(partitions).setReplicationFactor((short) 1));
        CreateTopicsResponseData response = node.createTopics(request).get(30, TimeUnit.SECONDS);
        assertThat(response.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        // Only the replica manager's applier hosts partitions: the topic is served once it has applied it.
        Uuid topicId = response.topics().get(0).topicId();
        await().atMost(Duration.ofSeconds(30)).until(() -> IntStream.range(0, partitions).allMatch(i ->
            replicas.partition(new TopicPartition(name, i)).filter(p -> p.topicId().equals(topicId)).isPresent()));
    }

    private void deleteTopic(String name) throws Exception {
        DeleteTopicsRequestData request = new DeleteTopicsRequestData().setTopicNames(List.of(name));
        node.deleteTopics(request).get(30, TimeUnit.SECONDS);
    }

    private static ByteBuffer batch(String value) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        builder.append(System.currentTimeMillis(), null, value.getBytes(StandardCharsets.UTF_8));
        ByteBuf buf = builder.build();
        try {
            ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), copy);
            return copy.flip();
        } finally {
            buf.release();
        }
    }

    @Test
    void partitionsFollowTopicCreationConfigChangesDeletionAndRestart() throws Exception {
        // Given
        start();
        try {
            createTopic("orders", 2);
            TopicPartition tp = new TopicPartition("orders", 1);

            // When
            Partition p = replicas.leaderPartition(tp);
            p.appendRecordsToLeader(batch("a"), AppendOrigin.CLIENT, -1);
            p.appendRecordsToLeader(batch("b"), AppendOrigin.CLIENT, -1);

            // Then
            assertThat(p.isLeader()).isTrue();
            assertThat(p.highWatermark()).isEqualTo(2);
            assertThat(dir.resolve("data/orders-0")).isDirectory();
            assertThatThrownBy(() -> replicas.leaderPartition(new TopicPartition("orders", 2)))
                .isInstanceOf(UnknownTopicOrPartitionException.class);

            IncrementalAlterConfigsRequestData alter = new IncrementalAlterConfigsRequestData();
            alter.resources().add(new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                .setResourceType((byte) 2).setResourceName("orders").setConfigs(List.of(
                    new IncrementalAlterConfigsRequestData.AlterableConfig().setName("min.insync.replicas")
                        .setValue("2").setConfigOperation((byte) 0),
                    new IncrementalAlterConfigsRequestData.AlterableConfig().setName("segment.bytes")
                        .setValue("1048576").setConfigOperation((byte) 0))));
            node.incrementalAlterConfigs(alter).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).until(() -> p.minInsyncReplicas() == 2);
            assertThat(p.log().config().segmentBytes()).isEqualTo(1048576);
        } finally {
            stop();
        }

        // When the broker restarts, the data is there
        start();
        try {
            Partition again = replicas.leaderPartition(new TopicPartition("orders", 1));
            assertThat(again.logEndOffset()).isEqualTo(2);
            assertThat(again.highWatermark()).isEqualTo(2);
            assertThat(again.minInsyncReplicas()).isEqualTo(2);

            // and deleting the topic removes its logs; a new topic of the same name starts empty
            deleteTopic("orders");
            await().atMost(Duration.ofSeconds(10))
                .until(() -> !Files.exists(dir.resolve("data/orders-1")) && replicas.allPartitions().isEmpty());
            createTopic("orders", 2);
            Partition fresh = replicas.leaderPartition(new TopicPartition("orders", 1));
            assertThat(fresh.logEndOffset()).isZero();
            assertThat(fresh.topicId()).isNotEqualTo(again.topicId());
        } finally {
            stop();
        }
    }

    private void alterBroker(String broker, String key, String value) throws Exception {
        IncrementalAlterConfigsRequestData alter = new IncrementalAlterConfigsRequestData();
        alter.resources().add(new IncrementalAlterConfigsRequestData.AlterConfigsResource()
            .setResourceType((byte) 4).setResourceName(broker).setConfigs(List.of(
                new IncrementalAlterConfigsRequestData.AlterableConfig().setName(key).setValue(value)
                    .setConfigOperation(value == null ? (byte) 1 : (byte) 0))));
        node.incrementalAlterConfigs(alter).get(30, TimeUnit.SECONDS);
    }

    @Test
    void aRequestBeforeTheApplierHostedAPartitionGetsNotLeaderOrFollowerAndOpensNoLog() throws Exception {
        // Given a replica manager whose applier is held inside its work on a first topic
        start();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> openers = new CopyOnWriteArrayList<>();
        replicas.addListener(new PartitionListener() {
            @Override
            public void onHighWatermarkAdvanced(Partition partition) {
            }

            @Override
            public void onLeadershipChanged(Partition partition) {
                openers.add(partition.topicPartition() + "@" + Thread.currentThread().getName());
                if (partition.topic().equals("gate")) {
                    held.countDown();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
        });
        try {
            for (String topic : List.of("gate", "orders")) {
                CreateTopicsRequestData request = new CreateTopicsRequestData();
                request.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(topic)
                    .setNumPartitions(1).setReplicationFactor((short) 1));
                node.createTopics(request).get(30, TimeUnit.SECONDS);
                assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
            }
            TopicPartition tp = new TopicPartition("orders", 0);
            assertThat(node.currentImage().partition(tp)).isPresent();

            // When a request thread looks up a partition the image has but the applier has not hosted yet
            // Then it is NOT_LEADER_OR_FOLLOWER (retriable), an unknown one UNKNOWN_TOPIC_OR_PARTITION, and no log
            // is opened by the request
            assertThat(replicas.partition(tp)).isEmpty();
            assertThatThrownBy(() -> replicas.leaderPartition(tp)).isInstanceOf(NotLeaderOrFollowerException.class);
            assertThatThrownBy(() -> replicas.leaderPartition(new TopicPartition("nothing", 0)))
                .isInstanceOf(UnknownTopicOrPartitionException.class);
            assertThat(dir.resolve("data/orders-0")).doesNotExist();

            // and once released, the applier opens it, on its own thread
            release.countDown();
            await().atMost(Duration.ofSeconds(30)).until(() -> replicas.partition(tp).isPresent());
            assertThat(replicas.leaderPartition(tp).isLeader()).isTrue();
            assertThat(openers).filteredOn(e -> e.startsWith("orders-0@"))
                .isNotEmpty().allMatch(e -> e.equals("orders-0@cairn-replica-manager"));
        } finally {
            release.countDown();
            stop();
        }
    }

    @Test
    void dynamicBrokerConfigsBecomeTheTopicDefaultsLiveAndAfterRestart() throws Exception {
        // Given a topic without overrides and one with its own segment.bytes
        start();
        try {
            createTopic("plain", 1);
            createTopic("own", 1);
            IncrementalAlterConfigsRequestData alter = new IncrementalAlterConfigsRequestData();
            alter.resources().add(new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                .setResourceType((byte) 2).setResourceName("own").setConfigs(List.of(
                    new IncrementalAlterConfigsRequestData.AlterableConfig().setName("segment.bytes")
                        .setValue("1048576").setConfigOperation((byte) 0))));
            node.incrementalAlterConfigs(alter).get(30, TimeUnit.SECONDS);
            Partition plain = replicas.leaderPartition(new TopicPartition("plain", 0));
            Partition own = replicas.leaderPartition(new TopicPartition("own", 0));

            // When the cluster default and this broker set topic defaults
            alterBroker("", "log.segment.bytes", "2097152");
            alterBroker("", "log.retention.ms", "1000");
            alterBroker("1", "log.retention.ms", "5000");

            // Then this broker's value beats the cluster default's, and a topic override beats both
            await().atMost(Duration.ofSeconds(10)).until(() -> plain.log().config().retentionMs() == 5000);
            assertThat(plain.log().config().segmentBytes()).isEqualTo(2097152);
            assertThat(own.log().config().segmentBytes()).isEqualTo(1048576);
            assertThat(own.log().config().retentionMs()).isEqualTo(5000);

            // and deleting this broker's value falls back to the cluster default
            alterBroker("1", "log.retention.ms", null);
            await().atMost(Duration.ofSeconds(10)).until(() -> plain.log().config().retentionMs() == 1000);
        } finally {
            stop();
        }

        // When the broker restarts, the dynamic defaults are in the metadata image again
        start();
        try {
            Partition plain = replicas.leaderPartition(new TopicPartition("plain", 0));
            assertThat(plain.log().config().retentionMs()).isEqualTo(1000);
            assertThat(plain.log().config().segmentBytes()).isEqualTo(2097152);
            alterBroker("", "log.segment.bytes", null);
            await().atMost(Duration.ofSeconds(10))
                .until(() -> plain.log().config().segmentBytes() == LogConfig.defaults().segmentBytes());
        } finally {
            stop();
        }
    }

    /** Registers and unfences broker 2, which never fetches: it keeps the high watermark of its partitions. */
    private void registerSecondBroker() throws Exception {
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("broker-two")
            .setPort(9093).setSecurityProtocol((short) 0));
        BrokerRegistrationResponseData registered = node.registerBroker(new BrokerRegistrationRequestData()
            .setBrokerId(2).setClusterId(node.clusterId()).setIncarnationId(new Uuid(2, 2))
            .setListeners(listeners)).get(30, TimeUnit.SECONDS);
        node.heartbeat(new BrokerHeartbeatRequestData().setBrokerId(2).setBrokerEpoch(registered.brokerEpoch())
            .setCurrentMetadataOffset(node.currentImage().offset()))
            .get(30, TimeUnit.SECONDS);
    }

    /**
     * Stops and starts the logs and the replica manager over the same directory against the running metadata node,
     * as a broker restart does without the re-registration (which would move the leadership to broker 2).
     */
    private void restartReplicas() {
        replicas.close();
        logs.close();
        logs = LogManager.start(dir.resolve("data"), LogConfig.defaults(), Time.SYSTEM, LogManager.Options.defaults());
        replicas = new ReplicaManager(1, List.of(logs), Map.of("min.insync.replicas", "1"));
        replicas.start(node);
    }

    @Test
    void aCleanRestartRecoversTheCheckpointedHighWatermarkBoundedByTheLogEnd() throws Exception {
        // Given: a partition on brokers 1 and 2 whose follower reported offset 3 of 5.
        start();
        TopicPartition tp = new TopicPartition("replicated", 0);
        try {
            registerSecondBroker();
            CreateTopicsRequestData request = new CreateTopicsRequestData();
            CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic()
                .setName("replicated").setNumPartitions(-1).setReplicationFactor((short) -1);
            topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0)
                .setBrokerIds(new ArrayList<>(List.of(1, 2))));
            request.topics().add(topic);
            assertThat(node.createTopics(request).get(30, TimeUnit.SECONDS).topics().get(0).errorCode())
                .isEqualTo(Errors.NONE.code());
            await().atMost(Duration.ofSeconds(30)).until(() -> replicas.partition(tp).map(Partition::isLeader)
                .orElse(false));
            Partition p = replicas.leaderPartition(tp);
            for (int i = 0; i < 5; i++) {
                p.appendRecordsToLeader(batch("r" + i), AppendOrigin.CLIENT, 1);
            }
            p.updateFollowerFetchState(2, 3, 0L, 1_000L, p.logEndOffset());
            assertThat(p.highWatermark()).isEqualTo(3);
            Path checkpoint = dir.resolve("data").resolve(HighWatermarkCheckpoint.FILE_NAME);
            replicas.startHighWatermarkCheckpoints(20);
            await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(checkpoint)
                && Files.readAllLines(checkpoint).contains("replicated 0 3"));

            // When: a clean stop writes the checkpoint; the restarted partition reads it.
            restartReplicas();

            // Then: a consumer's first read sees the old high watermark, not the log start offset.
            assertThat(Files.readAllLines(checkpoint)).containsExactly("0", "1", "replicated 0 3");
            Partition again = replicas.leaderPartition(tp);
            assertThat(again).isNotSameAs(p);
            assertThat(again.registration().isr()).containsExactly(1, 2);
            assertThat(again.followerState(2).orElseThrow().logEndOffset()).isEqualTo(-1);
            assertThat(again.logEndOffset()).isEqualTo(5);
            assertThat(again.highWatermark()).isEqualTo(3);
            try (LogReadResult read = again.read(0, Partition.NO_EPOCH, 1 << 20, FetchIsolation.HIGH_WATERMARK,
                    true)) {
                assertThat(read.highWatermark()).isEqualTo(3);
                assertThat(read.info().records().length()).isPositive();
            }

            // and a checkpoint beyond the log end (the log lost its tail) is bounded by the log end offset.
            replicas.close();
            HighWatermarkCheckpoint.write(FileLayer.DEFAULT, dir.resolve("data"), Map.of(tp, 50L));
            logs.close();
            logs = LogManager.start(dir.resolve("data"), LogConfig.defaults(), Time.SYSTEM,
                LogManager.Options.defaults());
            replicas = new ReplicaManager(1, List.of(logs), Map.of("min.insync.replicas", "1"));
            replicas.start(node);
            assertThat(replicas.leaderPartition(tp).highWatermark()).isEqualTo(5);
        } finally {
            stop();
        }
    }

    @Test
    void aFollowerFetchesFromItsLeadersInterBrokerEndpointAndStopsWhenItBecomesLeader() throws Exception {
        // Given: broker 1's fetchers reach a leader that answers nothing, recording who was asked
        List<SourceBroker> reached = new CopyOnWriteArrayList<>();
        start();
        replicas.close();
        replicas = new ReplicaManager(1, List.of(logs), Map.of("min.insync.replicas", "1"));
        replicas.useReplicaFetchers(ReplicaFetcherConfig.defaults(), (fetcherId, source) -> {
            reached.add(source);
            return new SilentLeader(source);
        }, "PLAINTEXT");
        replicas.start(node);
        TopicPartition tp = new TopicPartition("followed", 0);
        try {
            registerSecondBroker();
            CreateTopicsRequestData request = new CreateTopicsRequestData();
            CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic()
                .setName("followed").setNumPartitions(-1).setReplicationFactor((short) -1);
            topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0)
                .setBrokerIds(new ArrayList<>(List.of(2, 1))));
            request.topics().add(topic);
            assertThat(node.createTopics(request).get(30, TimeUnit.SECONDS).topics().get(0).errorCode())
                .isEqualTo(Errors.NONE.code());

            // When: broker 2 leads, broker 1 follows
            await().atMost(Duration.ofSeconds(30)).until(() -> replicas.replicaFetchers().fetcher(tp) != null);

            // Then: one fetcher thread named as Kafka's, at broker 2's PLAINTEXT endpoint, from the log end
            ReplicaFetcherThread thread = replicas.replicaFetchers().fetcher(tp);
            assertThat(thread.getName()).isEqualTo("ReplicaFetcherThread-0-2");
            assertThat(reached).containsExactly(new SourceBroker(2, "broker-two", 9093));
            assertThat(thread.fetchState(tp).currentLeaderEpoch()).isZero();
            assertThat(thread.fetchState(tp).fetchOffset()).isZero();

            // When: broker 2 leaves the cluster: broker 1, the other in-sync replica, is elected
            node.heartbeat(new BrokerHeartbeatRequestData().setBrokerId(1).setBrokerEpoch(brokerOneEpoch)
            .setCurrentMetadataOffset(node.currentImage().offset()))
                .get(30, TimeUnit.SECONDS);
            node.unregisterBroker(new UnregisterBrokerRequestData().setBrokerId(2)).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> replicas.partition(tp).map(Partition::isLeader)
                .orElse(false));

            // Then: it no longer fetches, and the idle thread is gone
            await().atMost(Duration.ofSeconds(10)).until(() -> replicas.replicaFetchers().fetcher(tp) == null
                && !thread.isAlive());
        } finally {
            stop();
        }
    }

    /** A leader that has nothing to send: each fetch takes a moment, as a long poll would, and returns nothing. */
    private record SilentLeader(SourceBroker sourceBroker) implements LeaderEndpoint {

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
