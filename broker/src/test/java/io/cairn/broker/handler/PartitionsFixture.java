package io.cairn.broker.handler;

import io.cairn.isr.LogConfigs;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.AppendOrigin;
import io.cairn.log.LogManager;
import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link MetadataFixture} (broker 1 registered) plus a real log directory and {@link ReplicaManager} hosting the
 * partitions of the topics it creates, for handler tests of the data path. Not thread-safe.
 */
final class PartitionsFixture implements AutoCloseable {

    private final MetadataFixture metadata;
    private final LogManager logs;
    private final ReplicaManager replicaManager;

    private PartitionsFixture(MetadataFixture metadata, LogManager logs, ReplicaManager replicaManager) {
        this.metadata = metadata;
        this.logs = logs;
        this.replicaManager = replicaManager;
    }

    static PartitionsFixture start(Path dir) throws Exception {
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

    MetadataFixture metadata() {
        return metadata;
    }

    ReplicaManager replicaManager() {
        return replicaManager;
    }

    void createTopic(String name, int partitions) throws Exception {
        metadata.createTopic(name, partitions);
    }

    Partition partition(String topic, int index) {
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
