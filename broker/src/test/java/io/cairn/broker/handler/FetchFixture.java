package io.cairn.broker.handler;

import io.micrometer.core.instrument.Clock;
import io.cairn.broker.metrics.BrokerMetrics;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.fetch.FetchService;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.purgatory.Timer;
import io.cairn.isr.Partition;
import io.cairn.isr.ReplicaManager;
import io.cairn.log.AppendOrigin;
import io.cairn.log.Time;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchRequestData;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;

/**
 * A metadata node, real logs, a {@link ReplicaManager} and a {@link FetchService} with its handler, for fetch
 * tests; appends go straight to the partitions. Not thread-safe.
 */
final class FetchFixture implements AutoCloseable {

    private final PartitionsFixture partitions;
    private final PartitionPurgatory purgatory;
    private final FetchService service;
    private final FetchHandler handler;

    private FetchFixture(PartitionsFixture partitions, PartitionPurgatory purgatory) {
        this.partitions = partitions;
        this.purgatory = purgatory;
        this.service = new FetchService(partitions.metadata().node(), partitions.replicaManager(), Time.SYSTEM,
            purgatory, BrokerMetrics.withClock(Clock.SYSTEM).topics());
        this.handler = new FetchHandler(service);
    }

    static FetchFixture start(Path dir) throws Exception {
        PartitionsFixture partitions = PartitionsFixture.start(dir);
        return new FetchFixture(partitions, new PartitionPurgatory(partitions.replicaManager()));
    }

    /** A fixture whose fetches expire on {@code timer}. */
    static FetchFixture start(Path dir, Timer timer) throws Exception {
        PartitionsFixture partitions = PartitionsFixture.start(dir);
        return new FetchFixture(partitions, new PartitionPurgatory(partitions.replicaManager(), timer));
    }

    PartitionPurgatory purgatory() {
        return purgatory;
    }

    MetadataFixture metadata() {
        return partitions.metadata();
    }

    FetchService service() {
        return service;
    }

    FetchHandler handler() {
        return handler;
    }

    ReplicaManager replicas() {
        return partitions.replicaManager();
    }

    Uuid createTopic(String name, int partitions) throws Exception {
        Uuid id = metadata().createTopic(name, partitions);
        await().atMost(Duration.ofSeconds(30)).until(() -> replicas().partition(new TopicPartition(name, 0))
            .map(Partition::isLeader).orElse(false));
        return id;
    }

    Partition partition(String topic, int index) {
        return replicas().leaderPartition(new TopicPartition(topic, index));
    }

    /** Registers and unfences broker 2, which never fetches (see {@link PartitionsFixture#registerSecondBroker}). */
    void registerSecondBroker() throws Exception {
        partitions.registerSecondBroker();
    }

    /** Creates a one-partition topic on {@code replicas} (the first is the preferred leader); returns its id. */
    Uuid createTopicOn(String name, List<Integer> replicas) throws Exception {
        return partitions.createTopicOn(name, replicas);
    }

    /** Appends one batch of {@code count} records with values {@code prefix-i}; returns its base offset. */
    long append(String topic, int index, String prefix, int count) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < count; i++) {
            builder.append(System.currentTimeMillis(), null, (prefix + "-" + i).getBytes(StandardCharsets.UTF_8));
        }
        ByteBuf buf = builder.build();
        try {
            ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), copy);
            return partition(topic, index).appendRecordsToLeader(copy.flip(), AppendOrigin.CLIENT, 1).firstOffset();
        } finally {
            buf.release();
        }
    }

    CompletableFuture<FetchResponseData> fetch(int version, FetchRequestData request) {
        return handler.handle(MetadataFixture.context(ApiKey.FETCH, version), request).toCompletableFuture();
    }

    /** A request for one partition; names the topic by id from v13 on. */
    static FetchRequestData request(int version, String topic, Uuid id, int partition, long offset, int maxWaitMs) {
        FetchRequestData request = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(1)
            .setMaxBytes(Integer.MAX_VALUE).setSessionId(0).setSessionEpoch(-1);
        request.topics().add(topic(version, topic, id, partition, offset));
        return request;
    }

    static FetchRequestData.FetchTopic topic(int version, String topic, Uuid id, int partition, long offset) {
        FetchRequestData.FetchTopic t = new FetchRequestData.FetchTopic();
        if (version >= 13) {
            t.setTopicId(id);
        } else {
            t.setTopic(topic);
        }
        t.partitions().add(new FetchRequestData.FetchPartition().setPartition(partition).setFetchOffset(offset)
            .setPartitionMaxBytes(1024 * 1024).setCurrentLeaderEpoch(-1).setLogStartOffset(-1));
        return t;
    }

    /** The values of the records a partition's response carries (copied out of its file slice). */
    static List<String> values(FetchResponseData.PartitionData partition) {
        ByteBuf records = partition.records();
        byte[] bytes = new byte[records.readableBytes()];
        records.getBytes(records.readerIndex(), bytes);
        List<String> values = new ArrayList<>();
        for (RecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches()) {
            for (Record record : batch) {
                values.add(StandardCharsets.UTF_8.decode(record.value()).toString());
            }
        }
        return values;
    }

    /** The base offsets of the batches a partition's response carries. */
    static List<Long> baseOffsets(FetchResponseData.PartitionData partition) {
        ByteBuf records = partition.records();
        byte[] bytes = new byte[records.readableBytes()];
        records.getBytes(records.readerIndex(), bytes);
        List<Long> offsets = new ArrayList<>();
        for (RecordBatch batch : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes)).batches()) {
            offsets.add(batch.baseOffset());
        }
        return offsets;
    }

    @Override
    public void close() {
        purgatory.close();
        partitions.close();
    }
}
