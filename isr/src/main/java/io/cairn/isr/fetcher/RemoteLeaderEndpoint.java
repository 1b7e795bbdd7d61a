package io.cairn.isr.fetcher;

import io.cairn.isr.EpochEndOffset;
import io.cairn.isr.client.BrokerConnection;
import io.cairn.isr.client.ClientTls;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.TimestampAndOffset;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.ListOffsetsRequestData;
import io.cairn.wire.message.ListOffsetsResponseData;
import io.cairn.wire.message.OffsetForLeaderEpochRequestData;
import io.cairn.wire.message.OffsetForLeaderEpochResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The leader reached over the network (Kafka's {@code RemoteLeaderEndPoint} on a blocking sender): on each
 * connection ApiVersions first, to pick the highest version of Fetch (12-17), OffsetForLeaderEpoch (3-4) and
 * ListOffsets (1-10) both sides speak; then Fetch as replica (v15+ with replica id and broker epoch, older with the
 * replica id), {@code replica.fetch.wait.max.ms}, {@code replica.fetch.min.bytes}, {@code
 * replica.fetch.response.max.bytes} and the per-partition {@code replica.fetch.max.bytes}, in an incremental fetch
 * session ({@link FetchSessionHandler}); OffsetForLeaderEpoch and ListOffsets with the replica id. PLAINTEXT only, as
 * Cairn's listeners are.
 *
 * <p>Thread-safety: used by one fetcher thread; {@link #initiateClose} may be called from another.
 */
public final class RemoteLeaderEndpoint implements LeaderEndpoint {

    private static final Logger LOGGER = LogManager.getLogger(RemoteLeaderEndpoint.class);
    private static final short FETCH_MIN = 12;
    private static final short FETCH_MAX = 17;
    private static final short EPOCH_MIN = 3;
    private static final short EPOCH_MAX = 4;
    private static final short LIST_OFFSETS_MIN = 1;
    private static final short LIST_OFFSETS_MAX = 10;

    private final SourceBroker source;
    private final int brokerId;
    private final LongSupplier brokerEpoch;
    private final ReplicaFetcherConfig config;
    private final BrokerConnection channel;
    private final FetchSessionHandler session;

    /**
     * @param source      the leader
     * @param brokerId    this broker's id (the replica id of the requests)
     * @param brokerEpoch this broker's current broker epoch (Fetch v15+), -1 when unknown
     * @param config      the {@code replica.*} settings
     * @param clientId    the client id of the requests ({@code broker-<id>-fetcher-<fetcherId>})
     */
    public RemoteLeaderEndpoint(SourceBroker source, int brokerId, LongSupplier brokerEpoch,
                                ReplicaFetcherConfig config, String clientId) {
        this(source, brokerId, brokerEpoch, config, clientId, ClientTls.PLAINTEXT);
    }

    /** As the other constructor, connecting over {@code tls} (the inter-broker listener's security). */
    public RemoteLeaderEndpoint(SourceBroker source, int brokerId, LongSupplier brokerEpoch,
                                ReplicaFetcherConfig config, String clientId, ClientTls tls) {
        this.source = source;
        this.brokerId = brokerId;
        this.brokerEpoch = brokerEpoch;
        this.config = config;
        this.channel = new BrokerConnection(source, clientId, "cairn-replica-fetcher", config.socketTimeoutMs(),
            config.socketReceiveBufferBytes(), config.maxResponseBytes(), List.of(
                new BrokerConnection.ApiRange(ApiKey.FETCH, FETCH_MIN, FETCH_MAX),
                new BrokerConnection.ApiRange(ApiKey.OFFSET_FOR_LEADER_EPOCH, EPOCH_MIN, EPOCH_MAX),
                new BrokerConnection.ApiRange(ApiKey.LIST_OFFSETS, LIST_OFFSETS_MIN, LIST_OFFSETS_MAX)), tls);
        this.session = new FetchSessionHandler(source.id());
    }

    @Override
    public SourceBroker sourceBroker() {
        return source;
    }

    @Override
    public Map<TopicPartition, FetchedPartition> fetch(Map<TopicPartition, PartitionFetchRequest> partitions) {
        FetchSessionHandler.Plan plan = session.build(partitions);
        FetchResponseData response;
        short version;
        try {
            short negotiated = channel.version(ApiKey.FETCH);
            version = plan.canUseTopicIds() ? negotiated : (short) Math.min(12, negotiated);
            // The records are views of the connection's reused frame buffer, valid until the next fetch: the fetcher
            // appends them before it fetches again (LeaderEndpoint#fetch).
            response = channel.sendReusingFrame(FetchRequests.request(plan, version, brokerId,
                brokerEpoch.getAsLong(), config), version);
        } catch (IOException | RuntimeException e) {
            session.handleError(e);
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        try {
            Map<TopicPartition, FetchResponseData.PartitionData> data = FetchRequests.partitions(response, version,
                session.sessionTopicNames());
            if (!session.handleResponse(response.errorCode(), response.sessionId(), data.keySet())) {
                if (response.errorCode() == Errors.FETCH_SESSION_TOPIC_ID_ERROR.code()) {
                    throw Errors.FETCH_SESSION_TOPIC_ID_ERROR.exception("Fetch session topic id error");
                }
                return Map.of();
            }
            Map<TopicPartition, FetchedPartition> result = new LinkedHashMap<>();
            data.forEach((tp, p) -> result.put(tp, fetched(p)));
            return result;
        } finally {
            FetchRequests.release(response);
        }
    }

    /** A partition of the response with its records trimmed to complete batches (a read-only heap view). */
    private static FetchedPartition fetched(FetchResponseData.PartitionData p) {
        ByteBuf records = p.records();
        ByteBuffer complete = ByteBuffer.allocate(0);
        if (records != null && records.isReadable()) {
            int size = RecordBatches.of(records).sizeOfCompleteBatches();
            complete = records.nioBuffer(records.readerIndex(), size).asReadOnlyBuffer();
        }
        FetchResponseData.EpochEndOffset diverging = p.divergingEpoch();
        EpochEndOffset divergingEpoch = diverging != null && diverging.epoch() >= 0
            ? new EpochEndOffset(diverging.epoch(), diverging.endOffset()) : null;
        return new FetchedPartition(Errors.forCode(p.errorCode()), p.highWatermark(), p.logStartOffset(), complete,
            divergingEpoch);
    }

    @Override
    public Map<TopicPartition, EpochEndOffsetResult> fetchEpochEndOffsets(
            Map<TopicPartition, EpochRequest> partitions) {
        Map<String, OffsetForLeaderEpochRequestData.OffsetForLeaderTopic> topics = new LinkedHashMap<>();
        partitions.forEach((tp, request) -> topics.computeIfAbsent(tp.topic(),
            name -> new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(name)).partitions()
            .add(new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(tp.partition())
                .setCurrentLeaderEpoch(request.currentLeaderEpoch()).setLeaderEpoch(request.leaderEpoch())));
        Map<TopicPartition, EpochEndOffsetResult> result = new HashMap<>();
        try {
            OffsetForLeaderEpochResponseData response = send(new OffsetForLeaderEpochRequestData()
                .setReplicaId(brokerId).setTopics(new ArrayList<>(topics.values())), ApiKey.OFFSET_FOR_LEADER_EPOCH);
            for (OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult topic : response.topics()) {
                for (OffsetForLeaderEpochResponseData.EpochEndOffset p : topic.partitions()) {
                    result.put(new TopicPartition(topic.topic(), p.partition()), new EpochEndOffsetResult(
                        Errors.forCode(p.errorCode()), p.leaderEpoch(), p.endOffset()));
                }
            }
        } catch (RuntimeException e) {
            LOGGER.warn("Error when sending leader epoch request for {} to {}: {}", partitions.keySet(), source,
                e.toString());
            Errors error = Errors.forException(e);
            partitions.keySet().forEach(tp -> result.put(tp, new EpochEndOffsetResult(error, -1, -1L)));
        }
        return result;
    }

    @Override
    public OffsetAndEpoch fetchEarliestOffset(TopicPartition tp, int currentLeaderEpoch) {
        return listOffset(tp, currentLeaderEpoch, TimestampAndOffset.EARLIEST_TIMESTAMP);
    }

    @Override
    public OffsetAndEpoch fetchLatestOffset(TopicPartition tp, int currentLeaderEpoch) {
        return listOffset(tp, currentLeaderEpoch, TimestampAndOffset.LATEST_TIMESTAMP);
    }

    private OffsetAndEpoch listOffset(TopicPartition tp, int currentLeaderEpoch, long timestamp) {
        ListOffsetsRequestData.ListOffsetsTopic topic = new ListOffsetsRequestData.ListOffsetsTopic()
            .setName(tp.topic());
        topic.partitions().add(new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(tp.partition())
            .setCurrentLeaderEpoch(currentLeaderEpoch).setTimestamp(timestamp));
        ListOffsetsResponseData response = send(new ListOffsetsRequestData().setReplicaId(brokerId)
            .setTopics(new ArrayList<>(List.of(topic))), ApiKey.LIST_OFFSETS);
        for (ListOffsetsResponseData.ListOffsetsTopicResponse t : response.topics()) {
            for (ListOffsetsResponseData.ListOffsetsPartitionResponse p : t.partitions()) {
                if (t.name().equals(tp.topic()) && p.partitionIndex() == tp.partition()) {
                    Errors error = Errors.forCode(p.errorCode());
                    if (error != Errors.NONE) {
                        throw error.exception("ListOffsets of " + tp + " failed: " + error);
                    }
                    return new OffsetAndEpoch(p.offset(), p.leaderEpoch());
                }
            }
        }
        throw Errors.UNKNOWN_SERVER_ERROR.exception("The ListOffsets response does not name " + tp);
    }

    private <T extends ApiMessage> T send(ApiMessage request, ApiKey apiKey) {
        try {
            return channel.send(request, channel.version(apiKey));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void initiateClose() {
        channel.close();
    }

    @Override
    public void close() {
        channel.close();
    }

    @Override
    public String toString() {
        return "RemoteLeaderEndpoint(" + source + ")";
    }
}
