package io.cairn.isr.fetcher;

import io.cairn.isr.EpochEndOffset;
import io.cairn.isr.FetchIsolation;
import io.cairn.isr.LogReadRequest;
import io.cairn.isr.LogReadResult;
import io.cairn.isr.Partition;
import io.cairn.isr.client.SourceBroker;
import io.cairn.log.TimestampAndOffset;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A deterministic in-memory leader: each call is answered at once by a real leader {@link Partition} (its
 * {@code fetchRecords}, {@code lastOffsetForLeaderEpoch} and {@code fetchOffsetForTimestamp}), as the broker's
 * handlers would answer it, with the follower's replica id. Hooks run while a fetch or a ListOffsets call is "out"
 * (before it is answered), to change the world mid-call.
 */
final class PartitionLeaderEndpoint implements LeaderEndpoint {

    private final SourceBroker source;
    private final int replicaId;
    private final Map<TopicPartition, Partition> leaders;
    private Consumer<Map<TopicPartition, PartitionFetchRequest>> duringFetch = request -> { };
    private Consumer<TopicPartition> duringListOffsets = tp -> { };
    private int fetches;

    PartitionLeaderEndpoint(SourceBroker source, int replicaId, Map<TopicPartition, Partition> leaders) {
        this.source = source;
        this.replicaId = replicaId;
        this.leaders = leaders;
    }

    void duringFetch(Consumer<Map<TopicPartition, PartitionFetchRequest>> hook) {
        this.duringFetch = hook;
    }

    /** A hook run while a ListOffsets call is "out", before it is answered. */
    void duringListOffsets(Consumer<TopicPartition> hook) {
        this.duringListOffsets = hook;
    }

    int fetches() {
        return fetches;
    }

    @Override
    public SourceBroker sourceBroker() {
        return source;
    }

    @Override
    public Map<TopicPartition, FetchedPartition> fetch(Map<TopicPartition, PartitionFetchRequest> partitions) {
        fetches++;
        duringFetch.accept(partitions);
        Map<TopicPartition, FetchedPartition> result = new LinkedHashMap<>();
        partitions.forEach((tp, p) -> result.put(tp, fetchOne(leaders.get(tp), p)));
        return result;
    }

    private FetchedPartition fetchOne(Partition leader, PartitionFetchRequest p) {
        LogReadRequest request = new LogReadRequest(replicaId, p.fetchOffset(), p.currentLeaderEpoch(),
            p.lastFetchedEpoch(), p.logStartOffset());
        try (LogReadResult read = leader.fetchRecords(request, FetchIsolation.LOG_END, p.maxBytes(), true, true)) {
            ByteBuffer records = read.info().firstEntryIncomplete() ? ByteBuffer.allocate(0)
                : read.info().records().readBytes();
            return new FetchedPartition(Errors.NONE, read.highWatermark(), read.logStartOffset(), records,
                read.divergingEpoch());
        } catch (ApiException e) {
            return new FetchedPartition(Errors.forException(e), -1L, -1L, ByteBuffer.allocate(0), null);
        }
    }

    @Override
    public Map<TopicPartition, EpochEndOffsetResult> fetchEpochEndOffsets(
            Map<TopicPartition, EpochRequest> partitions) {
        Map<TopicPartition, EpochEndOffsetResult> result = new LinkedHashMap<>();
        partitions.forEach((tp, request) -> {
            try {
                EpochEndOffset end = leaders.get(tp).lastOffsetForLeaderEpoch(request.currentLeaderEpoch(),
                    request.leaderEpoch(), true);
                result.put(tp, new EpochEndOffsetResult(Errors.NONE, end.leaderEpoch(), end.endOffset()));
            } catch (ApiException e) {
                result.put(tp, new EpochEndOffsetResult(Errors.forException(e), -1, -1L));
            }
        });
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
        duringListOffsets.accept(tp);
        TimestampAndOffset found = leaders.get(tp).fetchOffsetForTimestamp(timestamp, null, currentLeaderEpoch)
            .orElseThrow();
        return new OffsetAndEpoch(found.offset(), found.leaderEpoch());
    }

    @Override
    public void initiateClose() {
    }

    @Override
    public void close() {
    }
}
