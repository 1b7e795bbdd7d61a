package io.cairn.broker.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.MockTime;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.FetchResponseData;
import io.cairn.wire.message.FetchResponseData.PartitionData;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.Unpooled;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Incremental fetch sessions (KIP-227) as Kafka's FetchManager and FetchSessionCache keep them. */
class FetchSessionTest {

    private static final Uuid TOPIC_ID = new Uuid(1, 2);
    private static final TopicIdPartition P0 = new TopicIdPartition(Uuid.ZERO, "t", 0);
    private static final TopicIdPartition P1 = new TopicIdPartition(Uuid.ZERO, "t", 1);
    private static final Function<Uuid, String> NAMES = id -> TOPIC_ID.equals(id) ? "t" : null;

    private final MockTime time = new MockTime(1_000_000L);
    private final FetchSessionCache cache = new FetchSessionCache(2, 120_000L, time);
    private final FetchManager manager = new FetchManager(cache);

    private static PartitionFetch fetchAt(long offset) {
        return new PartitionFetch(offset, -1, -1, -1, 1 << 20);
    }

    private static PartitionData data(long hw, int recordBytes) {
        return new PartitionData().setHighWatermark(hw).setLastStableOffset(hw).setLogStartOffset(0)
            .setRecords(recordBytes == 0 ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(new byte[recordBytes]));
    }

    private static LinkedHashMap<TopicIdPartition, PartitionFetch> request(TopicIdPartition... partitions) {
        LinkedHashMap<TopicIdPartition, PartitionFetch> map = new LinkedHashMap<>();
        for (TopicIdPartition tp : partitions) {
            map.put(tp, fetchAt(0));
        }
        return map;
    }

    /** A full fetch of P0 and P1 answered with high watermark 5 and no records; returns the new session id. */
    private int createSession(boolean follower) {
        FetchContext full = manager.newContext((short) 12, 0, 0, follower, request(P0, P1), List.of(), NAMES);
        LinkedHashMap<TopicIdPartition, PartitionData> updates = new LinkedHashMap<>();
        updates.put(P0, data(5, 0));
        updates.put(P1, data(5, 0));
        return full.respond(updates, List.of()).sessionId();
    }

    private static List<Integer> partitionsOf(FetchResponseData response) {
        return response.responses().stream().flatMap(t -> t.partitions().stream())
            .map(PartitionData::partitionIndex).toList();
    }

    @Test
    void aFullFetchCreatesASessionWhoseIncrementalFetchesOmitUnchangedPartitions() {
        // Given
        int sessionId = createSession(false);
        FetchContext incremental = manager.newContext((short) 12, sessionId, 1, false, request(), List.of(), NAMES);
        assertThat(incremental.partitions()).extracting(Map.Entry::getKey).containsExactly(P0, P1);
        LinkedHashMap<TopicIdPartition, PartitionData> updates = new LinkedHashMap<>();
        updates.put(P0, data(5, 0));
        updates.put(P1, data(7, 10));

        // When
        FetchResponseData response = incremental.respond(updates, List.of());

        // Then
        assertThat(sessionId).isPositive();
        assertThat(response.sessionId()).isEqualTo(sessionId);
        assertThat(response.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(partitionsOf(response)).containsExactly(1);
        FetchResponses.release(response);
    }

    @Test
    void aPartitionThatReturnedRecordsMovesToTheEndOfTheSessionsFetchOrder() {
        // Given
        int sessionId = createSession(false);
        FetchContext second = manager.newContext((short) 12, sessionId, 1, false, request(), List.of(), NAMES);
        LinkedHashMap<TopicIdPartition, PartitionData> updates = new LinkedHashMap<>();
        updates.put(P0, data(6, 10));
        updates.put(P1, data(5, 0));
        second.respond(updates, List.of());

        // When
        FetchContext third = manager.newContext((short) 12, sessionId, 2, false, request(), List.of(), NAMES);

        // Then
        assertThat(third.partitions()).extracting(Map.Entry::getKey).containsExactly(P1, P0);
    }

    @Test
    void aWrongEpochAnUnknownSessionAndAMixOfTopicIdUsageAreSessionErrors() {
        // Given
        int sessionId = createSession(false);

        // When
        FetchContext wrongEpoch = manager.newContext((short) 12, sessionId, 5, false, request(), List.of(), NAMES);
        FetchContext unknown = manager.newContext((short) 12, sessionId + 1, 1, false, request(), List.of(), NAMES);
        FetchContext topicIds = manager.newContext((short) 13, sessionId, 1, false, request(), List.of(), NAMES);

        // Then
        assertThat(wrongEpoch).isEqualTo(new FetchContext.SessionError(Errors.INVALID_FETCH_SESSION_EPOCH));
        assertThat(unknown).isEqualTo(new FetchContext.SessionError(Errors.FETCH_SESSION_ID_NOT_FOUND));
        assertThat(topicIds).isEqualTo(new FetchContext.SessionError(Errors.FETCH_SESSION_TOPIC_ID_ERROR));
        FetchResponseData response = wrongEpoch.respond(new LinkedHashMap<>(), List.of());
        assertThat(response.errorCode()).isEqualTo(Errors.INVALID_FETCH_SESSION_EPOCH.code());
        assertThat(response.sessionId()).isZero();
        assertThat(response.responses()).isEmpty();
    }

    @Test
    void aRepeatedIncrementalFetchWithTheSameEpochIsRejected() {
        // Given
        int sessionId = createSession(false);
        manager.newContext((short) 12, sessionId, 1, false, request(), List.of(), NAMES);

        // When
        FetchContext duplicate = manager.newContext((short) 12, sessionId, 1, false, request(), List.of(), NAMES);

        // Then
        assertThat(duplicate).isEqualTo(new FetchContext.SessionError(Errors.INVALID_FETCH_SESSION_EPOCH));
    }

    @Test
    void forgettingEveryPartitionClosesTheSession() {
        // Given
        int sessionId = createSession(false);

        // When
        FetchContext context = manager.newContext((short) 12, sessionId, 1, false, request(), List.of(P0, P1),
            NAMES);

        // Then
        assertThat(context).isInstanceOf(FetchContext.Sessionless.class);
        assertThat(cache.size()).isZero();
    }

    @Test
    void theFinalEpochClosesTheSessionAndFetchesWithoutOne() {
        // Given
        int sessionId = createSession(false);

        // When
        FetchContext context = manager.newContext((short) 12, sessionId, -1, false, request(P0), List.of(), NAMES);

        // Then
        LinkedHashMap<TopicIdPartition, PartitionData> updates = new LinkedHashMap<>();
        updates.put(P0, data(5, 0));
        assertThat(context.respond(updates, List.of()).sessionId()).isZero();
        assertThat(cache.size()).isZero();
    }

    @Test
    void aFullCacheCreatesNoConsumerSessionButAFollowerEvictsAConsumersSession() {
        // Given
        createSession(false);
        createSession(false);

        // When
        int thirdConsumer = createSession(false);
        int follower = createSession(true);

        // Then
        assertThat(thirdConsumer).isZero();
        assertThat(follower).isPositive();
        assertThat(cache.size()).isEqualTo(2);
        assertThat(cache.evictions()).isEqualTo(1);
    }

    @Test
    void aSessionUnusedForTheEvictionTimeMakesRoomForANewOne() {
        // Given
        int old = createSession(false);
        createSession(false);
        time.sleep(60_000L);
        manager.newContext((short) 12, old, 1, false, request(), List.of(), NAMES);
        time.sleep(70_000L);

        // When
        int created = createSession(false);

        // Then
        assertThat(created).isPositive();
        assertThat(cache.get(old)).isNotNull();
        assertThat(cache.size()).isEqualTo(2);
    }

    @Test
    void aTopicIdUnknownWhenTheSessionStartedIsResolvedOnceTheMetadataKnowsIt() {
        // Given
        TopicIdPartition unresolved = new TopicIdPartition(TOPIC_ID, null, 0);
        FetchContext full = manager.newContext((short) 13, 0, 0, false, request(unresolved), List.of(), NAMES);
        LinkedHashMap<TopicIdPartition, PartitionData> updates = new LinkedHashMap<>();
        updates.put(unresolved, FetchResponses.partitionError(0, Errors.UNKNOWN_TOPIC_ID));
        int sessionId = full.respond(updates, List.of()).sessionId();

        // When
        FetchContext incremental = manager.newContext((short) 13, sessionId, 1, false, request(), List.of(), NAMES);

        // Then
        assertThat(incremental.partitions()).extracting(e -> e.getKey().topic()).containsExactly("t");
    }
}
