package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorWriteErrors;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.log.producer.VerificationGuard;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.OffsetCommitRequestData;
import io.cairn.wire.message.OffsetCommitRequestData.OffsetCommitRequestPartition;
import io.cairn.wire.message.OffsetCommitRequestData.OffsetCommitRequestTopic;
import io.cairn.wire.message.OffsetCommitResponseData;
import io.cairn.wire.message.OffsetCommitResponseData.OffsetCommitResponsePartition;
import io.cairn.wire.message.OffsetCommitResponseData.OffsetCommitResponseTopic;
import io.cairn.wire.message.OffsetDeleteRequestData;
import io.cairn.wire.message.OffsetDeleteRequestData.OffsetDeleteRequestPartition;
import io.cairn.wire.message.OffsetDeleteRequestData.OffsetDeleteRequestTopic;
import io.cairn.wire.message.OffsetDeleteResponseData;
import io.cairn.wire.message.OffsetDeleteResponseData.OffsetDeleteResponsePartition;
import io.cairn.wire.message.OffsetDeleteResponseData.OffsetDeleteResponseTopic;
import io.cairn.wire.message.TxnOffsetCommitRequestData;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition;
import io.cairn.wire.message.TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic;
import io.cairn.wire.message.TxnOffsetCommitResponseData;
import io.cairn.wire.message.TxnOffsetCommitResponseData.TxnOffsetCommitResponsePartition;
import io.cairn.wire.message.TxnOffsetCommitResponseData.TxnOffsetCommitResponseTopic;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import java.util.function.Function;
import org.apache.logging.log4j.Logger;

/**
 * The committed offsets of the groups of one coordinator shard (Kafka's {@code OffsetMetadataManager}): commits are
 * written to {@code __consumer_offsets} and become visible once the write is committed, fetches read the in-memory
 * map, deletes write tombstones, and offsets of groups that stayed empty longer than {@code offsets.retention.minutes}
 * expire (KIP-211). Transactional commits (TxnOffsetCommit) stay pending until their producer's marker: a COMMIT
 * makes them visible (unless a later record of the partition was committed meanwhile: the record offsets decide, as
 * Kafka's, so that compaction of the topic cannot bring back an older offset), an ABORT drops them.
 *
 * <p>Thread-safety: confined to the coordinator thread, like every shard state machine.
 */
public final class OffsetManager {

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(OffsetManager.class);

    /**
     * The committed offset of one partition, as its last record says.
     *
     * @param recordOffset the offset of that record in {@code __consumer_offsets}
     */
    public record CommittedOffset(long offset, int leaderEpoch, String metadata, long commitTimestampMs,
                                  long expireTimestampMs, long recordOffset) {

        CommittedOffset at(long newRecordOffset) {
            return new CommittedOffset(offset, leaderEpoch, metadata, commitTimestampMs, expireTimestampMs,
                newRecordOffset);
        }
    }

    /** A topic partition of a commit (the group's key space); compared by name and index. */
    public record TopicPartitionKey(String topic, int partition) implements Comparable<TopicPartitionKey> {
        @Override
        public int compareTo(TopicPartitionKey o) {
            int byTopic = topic.compareTo(o.topic);
            return byTopic != 0 ? byTopic : Integer.compare(partition, o.partition);
        }
    }

    private final ShardContext<CoordinatorRecord> ctx;
    private final GroupConfig config;
    private final Map<String, TreeMap<TopicPartitionKey, CommittedOffset>> offsets = new HashMap<>();
    private final PendingTransactionalOffsets pending = new PendingTransactionalOffsets();

    private final GroupCounters counters;

    /** @param counters counts the offsets OffsetCommit writes and OffsetDelete removes, shared by the shards */
    public OffsetManager(ShardContext<CoordinatorRecord> ctx, GroupConfig config, GroupCounters counters) {
        this.ctx = ctx;
        this.config = config;
        this.counters = counters;
    }

    /**
     * Writes the commit after {@code validation} (the group's verdict: NONE or the error every partition gets) and
     * completes with the response once the records are committed. Partitions with oversized metadata get
     * OFFSET_METADATA_TOO_LARGE and are not written; a failed write answers every written partition with the
     * mapped error (Kafka's: NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, INVALID_COMMIT_OFFSET_SIZE).
     *
     * @param unknownPartition tells whether a topic partition is unknown to the cluster (no such topic, or an index
     *                         the topic does not have): it gets UNKNOWN_TOPIC_OR_PARTITION whatever the group's
     *                         verdict and is not written, as Kafka's KafkaApis filters it before the coordinator
     */
    public CompletableFuture<OffsetCommitResponseData> commit(OffsetCommitRequestData request, short version,
                                                             Errors validation,
                                                             BiPredicate<String, Integer> unknownPartition) {
        OffsetCommitResponseData response = new OffsetCommitResponseData();
        long now = ctx.nowMs();
        long expireTimestamp = version <= 4 && request.retentionTimeMs() >= 0
            ? now + request.retentionTimeMs() : -1L;
        List<CoordinatorRecord> records = new ArrayList<>();
        List<Map.Entry<TopicPartitionKey, CommittedOffset>> written = new ArrayList<>();
        List<OffsetCommitResponsePartition> writtenResults = new ArrayList<>();
        for (OffsetCommitRequestTopic topic : request.topics()) {
            OffsetCommitResponseTopic topicResult = new OffsetCommitResponseTopic().setName(topic.name())
                .setTopicId(topic.topicId());
            response.topics().add(topicResult);
            for (OffsetCommitRequestPartition p : topic.partitions()) {
                OffsetCommitResponsePartition result = new OffsetCommitResponsePartition()
                    .setPartitionIndex(p.partitionIndex());
                topicResult.partitions().add(result);
                Errors error = unknownPartition.test(topic.name(), p.partitionIndex())
                    ? Errors.UNKNOWN_TOPIC_OR_PARTITION
                    : validation != Errors.NONE ? validation
                    : metadataTooLarge(p.committedMetadata()) ? Errors.OFFSET_METADATA_TOO_LARGE : Errors.NONE;
                result.setErrorCode(error.code());
                if (error != Errors.NONE) {
                    continue;
                }
                String metadata = p.committedMetadata() == null ? "" : p.committedMetadata();
                CommittedOffset offset = new CommittedOffset(p.committedOffset(), p.committedLeaderEpoch(),
                    metadata, now, expireTimestamp, -1L);
                TopicPartitionKey key = new TopicPartitionKey(topic.name(), p.partitionIndex());
                written.add(Map.entry(key, offset));
                writtenResults.add(result);
                records.add(offsetRecord(request.groupId(), key, offset));
            }
        }
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(response);
        }
        counters.offsetsCommitted(records.size());
        return ctx.write(records, -1L, (short) -1).handle((firstOffset, failure) -> {
            if (failure != null) {
                Errors error = commitError(failure);
                writtenResults.forEach(r -> r.setErrorCode(error.code()));
                return response;
            }
            for (int i = 0; i < written.size(); i++) {
                put(request.groupId(), written.get(i).getKey(), written.get(i).getValue().at(firstOffset + i));
            }
            return response;
        });
    }

    /**
     * TxnOffsetCommit (Kafka's {@code commitTransactionalOffset}): after {@code validation} (the group's verdict, the
     * error of every partition when not NONE), writes the partitions as one transactional batch of the request's
     * producer; once committed they are pending until the producer's marker. Oversized metadata gets
     * OFFSET_METADATA_TOO_LARGE, an unknown partition UNKNOWN_TOPIC_OR_PARTITION, and a failed write the error Kafka's
     * {@code GroupCoordinatorService} maps it to.
     */
    public CompletableFuture<TxnOffsetCommitResponseData> commitTransactional(TxnOffsetCommitRequestData request,
                                                                             Errors validation,
                                                                             BiPredicate<String, Integer> unknown) {
        return commitTransactional(request, validation, unknown, null);
    }

    /**
     * As above, the write carrying {@code verification}, the guard of the transaction verification of the offsets
     * partition (KIP-890; null: none), so that a commit outside an ongoing transaction gets INVALID_TXN_STATE.
     */
    public CompletableFuture<TxnOffsetCommitResponseData> commitTransactional(TxnOffsetCommitRequestData request,
                                                                             Errors validation,
                                                                             BiPredicate<String, Integer> unknown,
                                                                             VerificationGuard verification) {
        TxnOffsetCommitResponseData response = new TxnOffsetCommitResponseData();
        long now = ctx.nowMs();
        List<CoordinatorRecord> records = new ArrayList<>();
        List<Map.Entry<TopicPartitionKey, CommittedOffset>> written = new ArrayList<>();
        List<TxnOffsetCommitResponsePartition> writtenResults = new ArrayList<>();
        for (TxnOffsetCommitRequestTopic topic : request.topics()) {
            TxnOffsetCommitResponseTopic topicResult = new TxnOffsetCommitResponseTopic().setName(topic.name());
            response.topics().add(topicResult);
            for (TxnOffsetCommitRequestPartition p : topic.partitions()) {
                TxnOffsetCommitResponsePartition result = new TxnOffsetCommitResponsePartition()
                    .setPartitionIndex(p.partitionIndex());
                topicResult.partitions().add(result);
                Errors error = unknown.test(topic.name(), p.partitionIndex()) ? Errors.UNKNOWN_TOPIC_OR_PARTITION
                    : validation != Errors.NONE ? validation
                    : metadataTooLarge(p.committedMetadata()) ? Errors.OFFSET_METADATA_TOO_LARGE : Errors.NONE;
                result.setErrorCode(error.code());
                if (error != Errors.NONE) {
                    continue;
                }
                String metadata = p.committedMetadata() == null ? "" : p.committedMetadata();
                CommittedOffset offset = new CommittedOffset(p.committedOffset(), p.committedLeaderEpoch(), metadata,
                    now, -1L, -1L);
                TopicPartitionKey key = new TopicPartitionKey(topic.name(), p.partitionIndex());
                written.add(Map.entry(key, offset));
                writtenResults.add(result);
                records.add(offsetRecord(request.groupId(), key, offset));
            }
        }
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(response);
        }
        return ctx.write(records, request.producerId(), request.producerEpoch(), verification)
            .handle((firstOffset, failure) -> {
                if (failure != null) {
                    Errors error = txnCommitError(failure);
                    writtenResults.forEach(r -> r.setErrorCode(error.code()));
                    return response;
                }
                for (int i = 0; i < written.size(); i++) {
                    pending.put(request.producerId(), request.groupId(), written.get(i).getKey(),
                        written.get(i).getValue().at(firstOffset + i));
                }
                return response;
            });
    }

    /** Kafka's {@code GroupCoordinatorService.handleOperationException} for a failed transactional commit. */
    public static Errors txnCommitError(Throwable failure) {
        return CoordinatorWriteErrors.operationError(failure);
    }

    private boolean metadataTooLarge(String metadata) {
        return metadata != null && metadata.length() > config.offsetMetadataMaxBytes();
    }

    /** Kafka's mapping of a failed offset write to the error the committing client sees. */
    static Errors commitError(Throwable failure) {
        Errors error = Errors.forException(failure);
        switch (error) {
            case NOT_LEADER_OR_FOLLOWER:
            case NOT_COORDINATOR:
                return Errors.NOT_COORDINATOR;
            case UNKNOWN_TOPIC_OR_PARTITION:
            case NOT_ENOUGH_REPLICAS:
            case NOT_ENOUGH_REPLICAS_AFTER_APPEND:
            case REQUEST_TIMED_OUT:
            case COORDINATOR_NOT_AVAILABLE:
            case KAFKA_STORAGE_ERROR:
                return Errors.COORDINATOR_NOT_AVAILABLE;
            case MESSAGE_TOO_LARGE:
            case RECORD_LIST_TOO_LARGE:
            case INVALID_FETCH_SIZE:
                return Errors.INVALID_COMMIT_OFFSET_SIZE;
            default:
                LOGGER.warn("Offset commit failed with an unexpected error", failure);
                return Errors.UNKNOWN_SERVER_ERROR;
        }
    }

    private static CoordinatorRecord offsetRecord(String groupId, TopicPartitionKey key, CommittedOffset offset) {
        OffsetCommitKey recordKey = new OffsetCommitKey().setGroup(groupId).setTopic(key.topic())
            .setPartition(key.partition());
        // Kafka writes version 1 only for a commit with its own retention (OffsetCommit v2-v4 retention_time_ms);
        // that version has no leader epoch.
        boolean withExpiry = offset.expireTimestampMs() >= 0;
        OffsetCommitValue value = new OffsetCommitValue().setOffset(offset.offset())
            .setLeaderEpoch(withExpiry ? -1 : offset.leaderEpoch()).setMetadata(offset.metadata())
            .setCommitTimestamp(offset.commitTimestampMs()).setExpireTimestamp(offset.expireTimestampMs());
        short valueVersion = withExpiry ? 1 : GroupRecords.OFFSET_VALUE_VERSION;
        return new CoordinatorRecord(recordKey, (short) 1, value, valueVersion);
    }

    private void put(String groupId, TopicPartitionKey key, CommittedOffset offset) {
        offsets.computeIfAbsent(groupId, g -> new TreeMap<>()).put(key, offset);
    }

    private void remove(String groupId, TopicPartitionKey key) {
        pending.remove(groupId, key);
        TreeMap<TopicPartitionKey, CommittedOffset> group = offsets.get(groupId);
        if (group != null) {
            group.remove(key);
            if (group.isEmpty()) {
                offsets.remove(groupId);
            }
        }
    }

    /** The committed offset, or null. */
    public CommittedOffset offset(String groupId, String topic, int partition) {
        TreeMap<TopicPartitionKey, CommittedOffset> group = offsets.get(groupId);
        return group == null ? null : group.get(new TopicPartitionKey(topic, partition));
    }

    /** Every committed offset of the group, ordered by topic and partition (empty when none). */
    public Map<TopicPartitionKey, CommittedOffset> offsets(String groupId) {
        TreeMap<TopicPartitionKey, CommittedOffset> group = offsets.get(groupId);
        return group == null ? Map.of() : Collections.unmodifiableMap(group);
    }

    /** Whether the group has any committed offset. */
    public boolean hasOffsets(String groupId) {
        return offsets.containsKey(groupId);
    }

    /** Groups with committed offsets. */
    public Set<String> groupIds() {
        return Collections.unmodifiableSet(offsets.keySet());
    }

    /**
     * The tombstones of every committed and pending transactional offset of the group (DeleteGroups writes them with
     * the group's own).
     */
    public List<CoordinatorRecord> deleteAllRecords(String groupId) {
        Set<TopicPartitionKey> keys = new TreeSet<>(offsets(groupId).keySet());
        keys.addAll(pending.partitions(groupId));
        List<CoordinatorRecord> records = new ArrayList<>();
        keys.forEach(key -> records.add(GroupRecords.offsetTombstone(
            new OffsetCommitKey().setGroup(groupId).setTopic(key.topic()).setPartition(key.partition()))));
        return records;
    }

    /** Forgets every offset of the group once its tombstones are written. */
    public void forgetGroup(String groupId) {
        pending.partitions(groupId).forEach(key -> pending.remove(groupId, key));
        offsets.remove(groupId);
    }

    /**
     * OffsetDelete: every partition of a topic the group allows to delete (NONE from {@code topicCheck}) loses its
     * committed offset through a tombstone; the others carry the check's error.
     */
    public CompletableFuture<OffsetDeleteResponseData> delete(OffsetDeleteRequestData request,
                                                              BiFunction<String, String, Errors> topicCheck) {
        OffsetDeleteResponseData response = new OffsetDeleteResponseData().setErrorCode(Errors.NONE.code());
        List<CoordinatorRecord> records = new ArrayList<>();
        List<TopicPartitionKey> deleted = new ArrayList<>();
        String groupId = request.groupId();
        for (OffsetDeleteRequestTopic topic : request.topics()) {
            OffsetDeleteResponseTopic topicResult = new OffsetDeleteResponseTopic().setName(topic.name());
            response.topics().add(topicResult);
            Errors error = topicCheck.apply(groupId, topic.name());
            for (OffsetDeleteRequestPartition p : topic.partitions()) {
                topicResult.partitions().add(new OffsetDeleteResponsePartition().setPartitionIndex(p.partitionIndex())
                    .setErrorCode(error.code()));
                TopicPartitionKey key = new TopicPartitionKey(topic.name(), p.partitionIndex());
                if (error == Errors.NONE && offset(groupId, topic.name(), p.partitionIndex()) != null) {
                    deleted.add(key);
                    records.add(GroupRecords.offsetTombstone(new OffsetCommitKey().setGroup(groupId)
                        .setTopic(key.topic()).setPartition(key.partition())));
                }
            }
        }
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(response);
        }
        return ctx.write(records).handle((ignored, failure) -> {
            if (failure != null) {
                return new OffsetDeleteResponseData().setErrorCode(commitError(failure).code());
            }
            deleted.forEach(key -> remove(groupId, key));
            counters.offsetsDeleted(deleted.size());
            return response;
        });
    }

    /**
     * Loading: applies one offset record of the log at {@code recordOffset} (a null value deletes the offset and any
     * pending transactional offset of the partition); a record of a transaction ({@code producerId} ≥ 0) stays
     * pending until its producer's marker.
     */
    public void replay(long recordOffset, long producerId, OffsetCommitKey key, OffsetCommitValue valueOrNull) {
        TopicPartitionKey tp = new TopicPartitionKey(key.topic(), key.partition());
        if (valueOrNull == null) {
            remove(key.group(), tp);
            return;
        }
        CommittedOffset offset = new CommittedOffset(valueOrNull.offset(), valueOrNull.leaderEpoch(),
            valueOrNull.metadata(), valueOrNull.commitTimestamp(), valueOrNull.expireTimestamp(), recordOffset);
        if (producerId >= 0) {
            pending.put(producerId, key.group(), tp, offset);
        } else {
            put(key.group(), tp, offset);
        }
    }

    /**
     * Kafka's {@code replayEndTransactionMarker}: ends {@code producerId}'s transaction; on COMMIT its offsets become
     * the committed ones, except where a later record of the partition is committed already.
     */
    public void replayEndTransactionMarker(long producerId, boolean commit) {
        Map<String, TreeMap<TopicPartitionKey, CommittedOffset>> ended = pending.end(producerId);
        if (!commit) {
            return;
        }
        ended.forEach((groupId, partitions) -> partitions.forEach((key, offset) -> {
            CommittedOffset existing = offset(groupId, key.topic(), key.partition());
            if (existing == null || offset.recordOffset() > existing.recordOffset()) {
                put(groupId, key, offset);
            } else {
                LOGGER.info("Skipped the transactional offset {} of producer {} for group {} and {}-{}: the committed "
                    + "offset's record {} is later", offset.offset(), producerId, groupId, key.topic(),
                    key.partition(), existing.recordOffset());
            }
        }));
    }

    /** Whether an open transaction holds an offset of this partition for the group (require_stable's check). */
    public boolean hasPendingTransactionalOffset(String groupId, String topic, int partition) {
        return pending.hasPending(groupId, new TopicPartitionKey(topic, partition));
    }

    /** Whether the group has an open transaction with offsets. */
    public boolean hasOpenTransaction(String groupId) {
        return pending.hasOpenTransaction(groupId);
    }

    /** Groups with committed or pending transactional offsets. */
    public Set<String> groupIdsWithAnyOffsets() {
        Set<String> ids = new TreeSet<>(offsets.keySet());
        ids.addAll(pending.groupIds());
        return ids;
    }

    /**
     * The tombstones of offsets that have expired (Kafka's rule, KIP-211): offsets of a group without members
     * expire {@code offsets.retention.minutes} after the group became empty (or after their commit, when that is
     * later or the group's empty time is unknown); a commit made with its own retention (OffsetCommit v2-v4)
     * expires at its expire timestamp. Groups with members keep their offsets.
     *
     * @param emptySince for a group id, when its group became empty, -1 if unknown, or null if it has members
     */
    public Map<String, List<TopicPartitionKey>> expiredOffsets(Function<String, Long> emptySince) {
        long now = ctx.nowMs();
        Map<String, List<TopicPartitionKey>> expired = new TreeMap<>();
        for (Map.Entry<String, TreeMap<TopicPartitionKey, CommittedOffset>> group : offsets.entrySet()) {
            Long since = emptySince.apply(group.getKey());
            if (since == null) {
                continue;
            }
            for (Iterator<Map.Entry<TopicPartitionKey, CommittedOffset>> it = group.getValue().entrySet().iterator();
                 it.hasNext(); ) {
                Map.Entry<TopicPartitionKey, CommittedOffset> entry = it.next();
                CommittedOffset offset = entry.getValue();
                boolean gone = offset.expireTimestampMs() >= 0
                    ? now >= offset.expireTimestampMs()
                    : now - Math.max(since, offset.commitTimestampMs()) >= config.offsetsRetentionMs();
                if (gone && !pending.hasPending(group.getKey(), entry.getKey())) {
                    expired.computeIfAbsent(group.getKey(), g -> new ArrayList<>()).add(entry.getKey());
                }
            }
        }
        return expired;
    }

    /** The committed offsets of {@code topics}, by group (what a topic deletion removes). */
    public Map<String, List<TopicPartitionKey>> offsetsOfTopics(Set<String> topics) {
        Map<String, List<TopicPartitionKey>> found = new TreeMap<>();
        offsets.forEach((groupId, group) -> group.keySet().stream().filter(key -> topics.contains(key.topic()))
            .forEach(key -> found.computeIfAbsent(groupId, g -> new ArrayList<>()).add(key)));
        return found;
    }

    /** Writes the tombstones of {@code gone} and forgets those offsets once written; {@code why} is for the log. */
    public CompletableFuture<Void> remove(Map<String, List<TopicPartitionKey>> gone, String why) {
        List<CoordinatorRecord> records = new ArrayList<>();
        gone.forEach((groupId, keys) -> keys.forEach(key -> records.add(GroupRecords.offsetTombstone(
            new OffsetCommitKey().setGroup(groupId).setTopic(key.topic()).setPartition(key.partition())))));
        if (records.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return ctx.write(records).thenRun(() -> {
            gone.forEach((groupId, keys) -> keys.forEach(key -> remove(groupId, key)));
            LOGGER.info("Removed {} offset(s) {} of {} group(s) in __consumer_offsets-{}", records.size(), why,
                gone.size(), ctx.partitionIndex());
        });
    }
}
