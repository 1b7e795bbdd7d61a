package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;

/**
 * The {@code __consumer_offsets} records the group coordinator writes (Kafka's {@code GroupCoordinatorRecordHelpers}):
 * committed offsets ({@link OffsetCommitKey}, record type 1) and classic groups ({@link GroupMetadataKey}, type 2),
 * each with its tombstone. {@link GroupRecordSerde} turns them into bytes.
 *
 * <p>Thread-safety: stateless, thread-safe.
 */
public final class GroupRecords {

    /**
     * The version Cairn writes committed offsets with. Kafka 4.1 writes 4 (3 plus a tagged topic id Cairn does not
     * track yet), or 1 for a commit with its own expire timestamp; it reads 3 as well.
     */
    public static final short OFFSET_VALUE_VERSION = 3;
    /** The version Cairn writes group metadata with. */
    public static final short GROUP_VALUE_VERSION = 3;

    private GroupRecords() {
    }

    /** A committed offset. */
    public static CoordinatorRecord offset(OffsetCommitKey key, OffsetCommitValue value) {
        return new CoordinatorRecord(key, GroupRecordSerde.OFFSET_COMMIT_KEY, value, OFFSET_VALUE_VERSION);
    }

    /** The tombstone of a committed offset. */
    public static CoordinatorRecord offsetTombstone(OffsetCommitKey key) {
        return new CoordinatorRecord(key, GroupRecordSerde.OFFSET_COMMIT_KEY, null, OFFSET_VALUE_VERSION);
    }

    /** A classic group's metadata. */
    public static CoordinatorRecord group(String groupId, GroupMetadataValue value) {
        return new CoordinatorRecord(new GroupMetadataKey().setGroup(groupId), GroupRecordSerde.GROUP_METADATA_KEY,
            value, GROUP_VALUE_VERSION);
    }

    /** The tombstone of a classic group. */
    public static CoordinatorRecord groupTombstone(String groupId) {
        return new CoordinatorRecord(new GroupMetadataKey().setGroup(groupId), GroupRecordSerde.GROUP_METADATA_KEY,
            null, GROUP_VALUE_VERSION);
    }
}
