package io.cairn.broker.handler;

import static org.awaitility.Awaitility.await;

import io.cairn.isr.LogConfigs;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogManager;
import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

/**
 * A {@link MetadataFixture} (broker 1 registered) plus a real log directory and {@link ReplicaManager} hosting the
 * partitions of the topics it creates, for handler tests of the data path. Not thread-safe.
 */
public final class PartitionsFixture implements AutoCloseable {

    private final MetadataFixture metadata;
    private final LogManager logs;
    private final ReplicaManager replicaManager;

    private PartitionsFixture(MetadataFixture metadata, LogManager logs, ReplicaManager replicaManager) {
        this.metadata = metadata;
        this.logs = logs;
        this.replicaManager = replicaManager;
    }

    public static PartitionsFixture start(Path dir) throws Exception {
        MetadataFixture metadata = MetadataFixture.start(dir.resolve("metadata"));
        // The tests write records from 1970: no time-based roll or retention may touch them.
        Map<String, String> defaults = new HashMap<>(TopicConfigDefaults.defaults());
        defaults.put("segment.ms", Long.toString(Long.MAX_VALUE));
        defaults.put("retention.ms", "-1");
        Path logDir = Files.createDirectories(dir.resolve("logs"));
        LogManager logs = LogManager.start(logDir, LogConfigs.toLogConfig(defaults), Time.SYSTEM,
                LogManager.Options.defaults());
        ReplicaManager replicaManager = new ReplicaManager(1, List.of(logs), defaults);
        replicaManager.start(metadata.node());
        return new PartitionsFixture(metadata, logs, replicaManager);
    }

    public MetadataFixture metadata() {
        return metadata;
    }

    public ReplicaManager replicaManager() {
        return replicaManager;
    }

    LogManager logs() {
        return logs;
    }

    /** Registers and unfences broker 2 (PLAINTEXT on broker-two:9093, rack-b), which never fetches. */
    void registerSecondBroker() throws Exception {
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName(MetadataFixture.LISTENER)
            .setHost("broker-two").setPort(9093).setSecurityProtocol((short) 0));
        BrokerRegistrationResponseData registered = metadata.node().registerBroker(new BrokerRegistrationRequestData()
            .setBrokerId(2).setClusterId(metadata.node().clusterId()).setIncarnationId(new Uuid(2, 2))
            .setListeners(listeners).setRack("rack-b")).get(30, TimeUnit.SECONDS);
        metadata.node().heartbeat(new BrokerHeartbeatRequestData().setBrokerId(2)
            .setBrokerEpoch(registered.brokerEpoch())
            .setCurrentMetadataOffset(metadata.node().currentImage().offset())).get(30, TimeUnit.SECONDS);
    }

    /**
     * Creates a one-partition topic on {@code replicas} (the first is the preferred leader) and, when this broker
     * leads it, waits until it is hosted with the whole ISR; returns its id.
     */
    Uuid createTopicOn(String name, List<Integer> replicas) throws Exception {
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName(name)
            .setNumPartitions(-1).setReplicationFactor((short) -1);
        topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0)
            .setBrokerIds(replicas));
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(topic);
        CreateTopicsResponseData created = metadata.node().createTopics(request).get(30, TimeUnit.SECONDS);
        if (created.topics().get(0).errorCode() != 0) {
            throw new IllegalStateException("create failed: " + created);
        }
        if (replicas.get(0) == 1) {
            await().atMost(Duration.ofSeconds(30)).until(() -> replicaManager.partition(new TopicPartition(name, 0))
                .map(p -> p.isLeader() && p.registration().isr().size() == replicas.size()).orElse(false));
        }
        return created.topics().get(0).topicId();
    }

    /** Creates a topic of this broker alone and waits until the replica manager's applier hosts its partitions. */
    public void createTopic(String name, int partitions) throws Exception {
        Uuid topicId = metadata.createTopic(name, partitions);
        await().atMost(Duration.ofSeconds(30)).until(() -> IntStream.range(0, partitions).allMatch(i ->
            replicaManager.partition(new TopicPartition(name, i)).filter(p -> p.topicId().equals(topicId))
                .isPresent()));
    }

    public Partition partition(String topic, int index) {
        return replicaManager.partition(new TopicPartition(topic, index)).orElseThrow();
    }

    /** Appends one batch with one record per timestamp (values "v" + timestamp) as a producer would. */
    void append(String topic, int index, long... timestamps) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (long timestamp : timestamps) {
            builder.append(timestamp, null, ("v" + timestamp).getBytes(StandardCharsets.UTF_8));
        }
        ByteBuf batch = builder.build();
        try {
            partition(topic, index).appendRecordsToLeader(batch.nioBuffer(), AppendOrigin.CLIENT, -1);
        } finally {
            batch.release();
        }
    }

    @Override
    public void close() {
        replicaManager.close();
        logs.close();
        metadata.close();
    }
}
