package io.cairn.broker.group;

import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.wire.protocol.ApiMessage;

/**
 * One record of {@code __consumer_offsets}: a key and its value at the versions they are written with; a null value
 * is a tombstone (the offset or group is deleted, and compaction eventually drops the key). Immutable.
 *
 * @param key          an {@link OffsetCommitKey} or a {@link GroupMetadataKey}
 * @param keyVersion   the version the key is written with: 1 for offsets, 2 for groups (Kafka's record types)
 * @param value        the matching {@link OffsetCommitValue} or {@link GroupMetadataValue}, or null
 * @param valueVersion the version the value is written with (3 for both)
 */
public record CoordinatorRecord(ApiMessage key, short keyVersion, ApiMessage value, short valueVersion) {

    /**
     * The version Cairn writes committed offsets with. Kafka 4.1 writes 4 (3 plus a tagged topic id Cairn does not
     * track yet), or 1 for a commit with its own expire timestamp; it reads 3 as well.
     */
    public static final short OFFSET_VALUE_VERSION = 3;
    /** The version Cairn writes group metadata with. */
    public static final short GROUP_VALUE_VERSION = 3;

    /** A committed offset. */
    public static CoordinatorRecord offset(OffsetCommitKey key, OffsetCommitValue value) {
        return new CoordinatorRecord(key, (short) 1, value, OFFSET_VALUE_VERSION);
    }

    /** The tombstone of a committed offset. */
    public static CoordinatorRecord offsetTombstone(OffsetCommitKey key) {
        return new CoordinatorRecord(key, (short) 1, null, OFFSET_VALUE_VERSION);
    }

    /** A classic group's metadata. */
    public static CoordinatorRecord group(String groupId, GroupMetadataValue value) {
        return new CoordinatorRecord(new GroupMetadataKey().setGroup(groupId), (short) 2, value, GROUP_VALUE_VERSION);
    }

    /** The tombstone of a classic group. */
    public static CoordinatorRecord groupTombstone(String groupId) {
        return new CoordinatorRecord(new GroupMetadataKey().setGroup(groupId), (short) 2, null, GROUP_VALUE_VERSION);
    }
}
