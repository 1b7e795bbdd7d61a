package io.cairn.broker.share;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorShard;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.share.record.ShareSnapshotValue;
import io.cairn.broker.share.record.ShareUpdateValue;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateSummaryResponseData;
import io.cairn.wire.message.WriteShareGroupStateRequestData;
import io.cairn.wire.message.WriteShareGroupStateResponseData;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The share coordinator's shard of the coordinator runtime (Kafka's {@code ShareCoordinatorShard}): one
 * {@code __share_group_state} partition this broker leads, holding the persisted state of the share-partitions whose
 * coordinator key maps to it. Each operation is about one share-partition (the {@link ShareCoordinator} splits
 * requests) and follows Kafka 4.1's rules and error codes:
 * <ul>
 *   <li><b>initialize</b> writes a snapshot (snapshot epoch one more than the last, or 0; leader epoch 0; no
 *       batches); FENCED_STATE_EPOCH when the recorded state epoch is higher than the request's (unless -1).</li>
 *   <li><b>write</b> needs an initialized share-partition (else INVALID_REQUEST), fails with FENCED_LEADER_EPOCH or
 *       FENCED_STATE_EPOCH when a recorded epoch is higher than the request's (-1 skips the check), and writes an
 *       update carrying the request's batches (combined among themselves), or a snapshot of the whole combined state
 *       when {@code share.coordinator.snapshot.update.records.per.snapshot} updates were written since the last
 *       snapshot or the request raises the state epoch.</li>
 *   <li><b>read</b> needs an initialized share-partition, is FENCED_LEADER_EPOCH when the recorded leader epoch is
 *       higher than the request's, answers the state, and records a new leader epoch (as a write would) when the
 *       request's differs and is not -1.</li>
 *   <li><b>read summary</b> answers the start offset and epochs, or start offset -1 for an unknown
 *       share-partition.</li>
 *   <li><b>delete</b> writes a tombstone, or nothing for an unknown share-partition.</li>
 * </ul>
 * Every operation also needs the topic and partition to exist (UNKNOWN_TOPIC_OR_PARTITION) and a partition index
 * of 0 or more (INVALID_REQUEST). The state changes only when a record is committed ({@link #apply}, also what
 * loading replays); the operations of one share-partition that write run one after another, so each sees the state
 * its predecessor committed, as Kafka's timeline state makes them see it.
 *
 * <p>Thread-safety: as {@link CoordinatorShard}: called by the runtime from one thread at a time.
 */
final class ShareShard implements CoordinatorShard<CoordinatorRecord> {

    private static final Logger LOGGER = LogManager.getLogger(ShareShard.class);
    static final String NULL_TOPIC_ID = "The topic id cannot be null.";
    static final String NEGATIVE_PARTITION_ID = "The partition id cannot be a negative number.";
    static final String WRITE_UNINITIALIZED = "Write operation on uninitialized share partition not allowed.";
    static final String READ_UNINITIALIZED = "Read operation on uninitialized share partition not allowed.";

    private final ShardContext<CoordinatorRecord> ctx;
    private final Supplier<MetadataImage> image;
    private final int updatesPerSnapshot;
    private final Map<SharePartitionKey, ShareState> states = new HashMap<>();
    private final Map<SharePartitionKey, Integer> leaderEpochs = new HashMap<>();
    private final Map<SharePartitionKey, Integer> stateEpochs = new HashMap<>();
    private final Map<SharePartitionKey, Integer> updateCounts = new HashMap<>();
    /** The last pending writing operation of each share-partition; the next one waits for it. */
    private final Map<SharePartitionKey, CompletableFuture<Void>> tails = new HashMap<>();

    /**
     * @param image              the current metadata image, for the topics and partitions that exist
     * @param updatesPerSnapshot share.coordinator.snapshot.update.records.per.snapshot
     */
    ShareShard(ShardContext<CoordinatorRecord> ctx, Supplier<MetadataImage> image, int updatesPerSnapshot) {
        this.ctx = ctx;
        this.image = image;
        this.updatesPerSnapshot = updatesPerSnapshot;
    }

    // ---- loading and applying committed records

    @Override
    public void replay(long offset, long producerId, short producerEpoch, CoordinatorRecord record) {
        apply(record);
    }

    /** Applies one committed record of this partition to the state. */
    void apply(CoordinatorRecord record) {
        SharePartitionKey key = ShareRecords.key(record);
        if (record.keyVersion() == ShareRecords.SNAPSHOT) {
            if (record.value() == null) {
                states.remove(key);
                leaderEpochs.remove(key);
                stateEpochs.remove(key);
                updateCounts.remove(key);
                return;
            }
            ShareSnapshotValue value = (ShareSnapshotValue) record.value();
            raise(leaderEpochs, key, value.leaderEpoch());
            raise(stateEpochs, key, value.stateEpoch());
            states.put(key, new ShareState(value.snapshotEpoch(), value.stateEpoch(), value.leaderEpoch(),
                value.startOffset(), ShareRecords.batches(value), value.createTimestamp(), value.writeTimestamp()));
            Integer count = updateCounts.get(key);
            if (count != null && count >= updatesPerSnapshot) {
                updateCounts.put(key, 0);
            }
        } else if (record.keyVersion() == ShareRecords.UPDATE && record.value() != null) {
            ShareUpdateValue value = (ShareUpdateValue) record.value();
            raise(leaderEpochs, key, value.leaderEpoch());
            states.compute(key, (k, old) -> old == null
                ? new ShareState(value.snapshotEpoch(), 0, value.leaderEpoch(), value.startOffset(),
                    ShareRecords.batches(value), 0L, 0L)
                : merge(old, value));
            updateCounts.compute(key, (k, old) -> old == null ? 0 : old + 1);
        }
    }

    private static void raise(Map<SharePartitionKey, Integer> epochs, SharePartitionKey key, int epoch) {
        epochs.merge(key, epoch, Math::max);
    }

    /** An update applied to the state it updates: the start offset and leader epoch unless -1, batches combined. */
    private static ShareState merge(ShareState old, ShareUpdateValue update) {
        long startOffset = update.startOffset() == -1 ? old.startOffset() : update.startOffset();
        int leaderEpoch = update.leaderEpoch() == -1 ? old.leaderEpoch() : update.leaderEpoch();
        List<StateBatch> batches = new StateBatchCombiner(old.stateBatches(), ShareRecords.batches(update),
            startOffset).combine();
        return new ShareState(old.snapshotEpoch(), old.stateEpoch(), leaderEpoch, startOffset, batches,
            old.createTimestamp(), old.writeTimestamp());
    }

    @Override
    public void replayEndTransactionMarker(long producerId, short producerEpoch, boolean commit) {
        // The share coordinator writes no transactional records.
    }

    @Override
    public void onLoaded() {
        LOGGER.debug("Share state partition {} loaded with {} share-partition(s)", ctx.partitionIndex(),
            states.size());
    }

    @Override
    public void onUnloaded() {
        tails.clear();
    }

    // ---- what tests and the service may look at

    /** The committed state of {@code key}, if it is initialized. */
    Optional<ShareState> state(SharePartitionKey key) {
        return Optional.ofNullable(states.get(key));
    }

    /** How many updates of {@code key} were applied since its counter was last reset (null: none yet). */
    Integer updateCount(SharePartitionKey key) {
        return updateCounts.get(key);
    }

    // ---- operations

    /** WriteShareGroupState of one share-partition. */
    CompletableFuture<WriteShareGroupStateResponseData.PartitionResult> write(
            String groupId, Uuid topicId, WriteShareGroupStateRequestData.PartitionData data) {
        if (topicId == null) {
            return completed(writeError(data.partition(), Errors.INVALID_REQUEST, NULL_TOPIC_ID));
        }
        if (data.partition() < 0) {
            return completed(writeError(data.partition(), Errors.INVALID_REQUEST, NEGATIVE_PARTITION_ID));
        }
        SharePartitionKey key = new SharePartitionKey(groupId, topicId, data.partition());
        return serialized(key, () -> {
            Errors error = writeError(key, data);
            if (error != null) {
                return completed(writeError(data.partition(), error,
                    error == Errors.INVALID_REQUEST ? WRITE_UNINITIALIZED : error.message()));
            }
            CoordinatorRecord record = stateRecord(key, data.leaderEpoch(), data.stateEpoch(), data.startOffset(),
                batches(data.stateBatches()));
            return commit(record, new WriteShareGroupStateResponseData.PartitionResult()
                .setPartition(data.partition()).setErrorCode(Errors.NONE.code()).setErrorMessage(null));
        });
    }

    private Errors writeError(SharePartitionKey key, WriteShareGroupStateRequestData.PartitionData data) {
        if (!states.containsKey(key)) {
            return Errors.INVALID_REQUEST;
        }
        if (data.leaderEpoch() != -1 && leaderEpochs.getOrDefault(key, Integer.MIN_VALUE) > data.leaderEpoch()) {
            LOGGER.error("Write request leader epoch is smaller than last recorded current: {}, requested: {}.",
                leaderEpochs.get(key), data.leaderEpoch());
            return Errors.FENCED_LEADER_EPOCH;
        }
        if (data.stateEpoch() != -1 && stateEpochs.getOrDefault(key, Integer.MIN_VALUE) > data.stateEpoch()) {
            LOGGER.info("Write request state epoch is smaller than last recorded current: {}, requested: {}.",
                stateEpochs.get(key), data.stateEpoch());
            return Errors.FENCED_STATE_EPOCH;
        }
        return exists(key) ? null : Errors.UNKNOWN_TOPIC_OR_PARTITION;
    }

    /** ReadShareGroupState of one share-partition, recording a new leader epoch the request brings. */
    CompletableFuture<ReadShareGroupStateResponseData.PartitionResult> read(String groupId, Uuid topicId,
                                                                            int partition, int leaderEpoch) {
        if (topicId == null) {
            return completed(readError(partition, Errors.INVALID_REQUEST, NULL_TOPIC_ID));
        }
        if (partition < 0) {
            return completed(readError(partition, Errors.INVALID_REQUEST, NEGATIVE_PARTITION_ID));
        }
        SharePartitionKey key = new SharePartitionKey(groupId, topicId, partition);
        return serialized(key, () -> {
            if (!states.containsKey(key)) {
                return completed(readError(partition, Errors.INVALID_REQUEST, READ_UNINITIALIZED));
            }
            Integer recorded = leaderEpochs.get(key);
            if (recorded != null && recorded > leaderEpoch) {
                LOGGER.error("Read request leader epoch is smaller than last recorded current: {}, requested: {}.",
                    recorded, leaderEpoch);
                return completed(readError(partition, Errors.FENCED_LEADER_EPOCH,
                    Errors.FENCED_LEADER_EPOCH.message()));
            }
            if (!exists(key)) {
                return completed(readError(partition, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                    Errors.UNKNOWN_TOPIC_OR_PARTITION.message()));
            }
            ShareState state = states.get(key);
            List<ReadShareGroupStateResponseData.StateBatch> batches = new ArrayList<>();
            for (StateBatch b : state.stateBatches()) {
                batches.add(new ReadShareGroupStateResponseData.StateBatch().setFirstOffset(b.firstOffset())
                    .setLastOffset(b.lastOffset()).setDeliveryState(b.deliveryState())
                    .setDeliveryCount(b.deliveryCount()));
            }
            ReadShareGroupStateResponseData.PartitionResult result = new ReadShareGroupStateResponseData
                .PartitionResult().setPartition(partition).setErrorCode(Errors.NONE.code()).setErrorMessage(null)
                .setStateEpoch(state.stateEpoch()).setStartOffset(state.startOffset()).setStateBatches(batches);
            if (leaderEpoch == -1 || recorded != null && recorded == leaderEpoch) {
                return completed(result);
            }
            LOGGER.info("Read with leader epoch update call for key {} having new leader epoch {}.", key,
                leaderEpoch);
            return commit(stateRecord(key, leaderEpoch, state.stateEpoch(), state.startOffset(), List.of()), result);
        });
    }

    /** ReadShareGroupStateSummary of one share-partition: the committed state, no write. */
    CompletableFuture<ReadShareGroupStateSummaryResponseData.PartitionResult> readSummary(String groupId,
                                                                                          Uuid topicId,
                                                                                          int partition) {
        ReadShareGroupStateSummaryResponseData.PartitionResult result = new ReadShareGroupStateSummaryResponseData
            .PartitionResult().setPartition(partition);
        if (topicId == null || partition < 0) {
            return completed(result.setErrorCode(Errors.INVALID_REQUEST.code())
                .setErrorMessage(topicId == null ? NULL_TOPIC_ID : NEGATIVE_PARTITION_ID));
        }
        SharePartitionKey key = new SharePartitionKey(groupId, topicId, partition);
        if (!exists(key)) {
            return completed(result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                .setErrorMessage(Errors.UNKNOWN_TOPIC_OR_PARTITION.message()));
        }
        ShareState state = states.get(key);
        result.setErrorCode(Errors.NONE.code()).setErrorMessage(null);
        if (state == null) {
            return completed(result.setStartOffset(-1L).setLeaderEpoch(0).setStateEpoch(0));
        }
        return completed(result.setStartOffset(state.startOffset()).setLeaderEpoch(state.leaderEpoch())
            .setStateEpoch(state.stateEpoch()));
    }

    /** DeleteShareGroupState of one share-partition: a tombstone, or nothing when it has no state. */
    CompletableFuture<DeleteShareGroupStateResponseData.PartitionResult> delete(String groupId, Uuid topicId,
                                                                              int partition) {
        DeleteShareGroupStateResponseData.PartitionResult ok = new DeleteShareGroupStateResponseData
            .PartitionResult().setPartition(partition).setErrorCode(Errors.NONE.code()).setErrorMessage(null);
        if (topicId == null || partition < 0) {
            return completed(new DeleteShareGroupStateResponseData.PartitionResult().setPartition(partition)
                .setErrorCode(Errors.INVALID_REQUEST.code())
                .setErrorMessage(topicId == null ? NULL_TOPIC_ID : NEGATIVE_PARTITION_ID));
        }
        SharePartitionKey key = new SharePartitionKey(groupId, topicId, partition);
        return serialized(key, () -> {
            if (!exists(key)) {
                return completed(new DeleteShareGroupStateResponseData.PartitionResult().setPartition(partition)
                    .setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code())
                    .setErrorMessage(Errors.UNKNOWN_TOPIC_OR_PARTITION.message()));
            }
            if (!states.containsKey(key)) {
                LOGGER.info("Attempted to delete non-existent share partition {}.", key);
                return completed(ok);
            }
            return commit(ShareRecords.tombstone(key), ok);
        });
    }

    /** InitializeShareGroupState of one share-partition: a new snapshot with no batches. */
    CompletableFuture<InitializeShareGroupStateResponseData.PartitionResult> initialize(
            String groupId, Uuid topicId, InitializeShareGroupStateRequestData.PartitionData data) {
        int partition = data.partition();
        if (topicId == null || partition < 0) {
            return completed(new InitializeShareGroupStateResponseData.PartitionResult().setPartition(partition)
                .setErrorCode(Errors.INVALID_REQUEST.code())
                .setErrorMessage(topicId == null ? NULL_TOPIC_ID : NEGATIVE_PARTITION_ID));
        }
        SharePartitionKey key = new SharePartitionKey(groupId, topicId, partition);
        return serialized(key, () -> {
            Errors error = null;
            Integer recorded = stateEpochs.get(key);
            if (data.stateEpoch() != -1 && recorded != null && recorded > data.stateEpoch()) {
                LOGGER.info("Initialize request state epoch is smaller than last recorded current: {}, "
                    + "requested: {}.", recorded, data.stateEpoch());
                error = Errors.FENCED_STATE_EPOCH;
            } else if (!exists(key)) {
                error = Errors.UNKNOWN_TOPIC_OR_PARTITION;
            }
            if (error != null) {
                return completed(new InitializeShareGroupStateResponseData.PartitionResult().setPartition(partition)
                    .setErrorCode(error.code()).setErrorMessage(error.message()));
            }
            ShareState old = states.get(key);
            long now = ctx.nowMs();
            ShareState state = new ShareState(old == null ? 0 : old.snapshotEpoch() + 1, data.stateEpoch(), 0,
                data.startOffset(), List.of(), now, now);
            return commit(ShareRecords.snapshot(key, state), new InitializeShareGroupStateResponseData
                .PartitionResult().setPartition(partition).setErrorCode(Errors.NONE.code()).setErrorMessage(null));
        });
    }

    // ---- helpers

    /**
     * The record of a write to an initialized share-partition (Kafka's {@code generateShareStateRecord}): a snapshot
     * of the combined state when enough updates were written since the last snapshot or the state epoch rises,
     * else an update with the new batches.
     */
    private CoordinatorRecord stateRecord(SharePartitionKey key, int leaderEpoch, int stateEpoch, long startOffset,
                                          List<StateBatch> added) {
        ShareState current = states.get(key);
        if (updateCounts.getOrDefault(key, 0) >= updatesPerSnapshot || stateEpoch > current.stateEpoch()) {
            int newLeaderEpoch = leaderEpoch == -1 ? current.leaderEpoch() : leaderEpoch;
            int newStateEpoch = stateEpoch == -1 ? current.stateEpoch() : stateEpoch;
            long newStartOffset = startOffset == -1 ? current.startOffset() : startOffset;
            long now = ctx.nowMs();
            return ShareRecords.snapshot(key, new ShareState(current.snapshotEpoch() + 1, newStateEpoch,
                newLeaderEpoch, newStartOffset, new StateBatchCombiner(current.stateBatches(), added, newStartOffset)
                    .combine(), now, now));
        }
        return ShareRecords.update(key, current.snapshotEpoch(), leaderEpoch, startOffset,
            new StateBatchCombiner(List.of(), added, startOffset).combine());
    }

    private static List<StateBatch> batches(List<WriteShareGroupStateRequestData.StateBatch> batches) {
        List<StateBatch> result = new ArrayList<>(batches.size());
        batches.forEach(b -> result.add(new StateBatch(b.firstOffset(), b.lastOffset(), b.deliveryState(),
            b.deliveryCount())));
        return result;
    }

    /** Whether the topic and partition of {@code key} exist in the current metadata. */
    private boolean exists(SharePartitionKey key) {
        return image.get().topic(key.topicId()).flatMap(t -> t.partition(key.partition())).isPresent();
    }

    /** Writes {@code record}, applies it once committed and answers {@code result}. */
    private <T> CompletableFuture<T> commit(CoordinatorRecord record, T result) {
        return ctx.write(List.of(record)).thenApply(ignored -> {
            apply(record);
            return result;
        });
    }

    /** Runs {@code op} after the pending writing operation of {@code key}, if any, has finished. */
    private <T> CompletableFuture<T> serialized(SharePartitionKey key, Supplier<CompletableFuture<T>> op) {
        CompletableFuture<Void> tail = tails.get(key);
        CompletableFuture<T> result = tail == null ? run(op) : tail.thenCompose(ignored -> run(op));
        CompletableFuture<Void> next = result.handle((value, failure) -> null);
        tails.put(key, next);
        next.thenRun(() -> tails.remove(key, next));
        return result;
    }

    private static <T> CompletableFuture<T> run(Supplier<CompletableFuture<T>> op) {
        try {
            return op.get();
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static <T> CompletableFuture<T> completed(T value) {
        return CompletableFuture.completedFuture(value);
    }

    private static WriteShareGroupStateResponseData.PartitionResult writeError(int partition, Errors error,
                                                                             String message) {
        return new WriteShareGroupStateResponseData.PartitionResult().setPartition(partition)
            .setErrorCode(error.code()).setErrorMessage(message);
    }

    private static ReadShareGroupStateResponseData.PartitionResult readError(int partition, Errors error,
                                                                           String message) {
        return new ReadShareGroupStateResponseData.PartitionResult().setPartition(partition)
            .setErrorCode(error.code()).setErrorMessage(message);
    }
}
