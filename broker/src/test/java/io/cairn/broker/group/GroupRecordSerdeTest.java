package io.cairn.broker.group;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.CoordinatorSerde;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.broker.group.record.ConsumerGroupCurrentMemberAssignmentKey;
import io.cairn.broker.group.record.ConsumerGroupCurrentMemberAssignmentValue;
import io.cairn.broker.group.record.ConsumerGroupMemberMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupMemberMetadataValue;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMemberKey;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMemberValue;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMetadataKey;
import io.cairn.broker.group.record.ConsumerGroupTargetAssignmentMetadataValue;
import io.cairn.broker.group.record.GroupMetadataKey;
import io.cairn.broker.group.record.GroupMetadataValue;
import io.cairn.broker.group.record.OffsetCommitKey;
import io.cairn.broker.group.record.OffsetCommitValue;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataValue;
import org.junit.jupiter.api.Test;

/**
 * Byte-for-byte compatibility of {@link GroupRecordSerde} with Kafka 4.1.1's own {@code __consumer_offsets} records
 * (its generated classes in {@code org.apache.kafka.coordinator.group.generated}, serialized as Kafka's coordinator
 * runtime does: keys with {@code MessageUtil.toCoordinatorTypePrefixedBytes}, values with
 * {@code MessageUtil.toVersionPrefixedBytes}).
 */
class GroupRecordSerdeTest {

    private static final long COMMIT_TS = 1_764_500_000_000L;

    @Test
    void anOffsetCommitIsWrittenAsKafkaWritesItAtValueVersion3() {
        // Given
        CoordinatorRecord record = GroupRecords.offset(offsetKey("group-a", "orders", 7),
                new OffsetCommitValue().setOffset(12_345L).setLeaderEpoch(4).setMetadata("meta")
                        .setCommitTimestamp(COMMIT_TS));

        // When
        byte[] key = GroupRecordSerde.keyBytes(record);
        byte[] value = GroupRecordSerde.valueBytes(record);

        // Then
        assertThat(key).isEqualTo(MessageUtil.toCoordinatorTypePrefixedBytes(kafkaOffsetKey("group-a", "orders", 7)));
        assertThat(key).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 1,
                kafkaOffsetKey("group-a", "orders", 7)));
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 3,
                kafkaOffsetValue(12_345L, 4, "meta").setCommitTimestamp(COMMIT_TS)));
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(key), ByteBuffer.wrap(value))).contains(record);
    }

    @Test
    void anOffsetCommitWithEmptyMetadataAndNoLeaderEpochIsWrittenAsKafkaWritesIt() {
        // Given
        CoordinatorRecord record = GroupRecords.offset(offsetKey("g", "t", 0),
                new OffsetCommitValue().setOffset(0L).setMetadata("").setCommitTimestamp(COMMIT_TS));

        // When
        byte[] value = GroupRecordSerde.valueBytes(record);

        // Then
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 3,
                kafkaOffsetValue(0L, -1, "").setCommitTimestamp(COMMIT_TS)));
        assertThat(((OffsetCommitValue) decode(GroupRecordSerde.keyBytes(record), value).value()).leaderEpoch())
                .isEqualTo(-1);
    }

    @Test
    void kafkasVersion4OffsetCommitWithATopicIdDecodesAndIsWrittenTheSame() {
        // Given: Kafka 4.1 writes version 4 with the topic id as a tagged field
        byte[] kafkaKey = MessageUtil.toCoordinatorTypePrefixedBytes(kafkaOffsetKey("g", "orders", 3));
        byte[] kafkaValue = MessageUtil.toVersionPrefixedBytes((short) 4, kafkaOffsetValue(99L, 2, "m")
                .setCommitTimestamp(COMMIT_TS).setTopicId(new org.apache.kafka.common.Uuid(11L, 22L)));

        // When
        CoordinatorRecord record = decode(kafkaKey, kafkaValue);

        // Then
        assertThat(record.key()).isEqualTo(offsetKey("g", "orders", 3));
        assertThat(record.keyVersion()).isEqualTo((short) 1);
        assertThat(record.valueVersion()).isEqualTo((short) 4);
        assertThat(record.value()).isEqualTo(new OffsetCommitValue().setOffset(99L).setLeaderEpoch(2).setMetadata("m")
                .setCommitTimestamp(COMMIT_TS).setTopicId(new Uuid(11L, 22L)));
        assertThat(GroupRecordSerde.valueBytes(record)).isEqualTo(kafkaValue);
        assertThat(GroupRecordSerde.keyBytes(record)).isEqualTo(kafkaKey);
    }

    @Test
    void kafkasVersion4OffsetCommitWithoutATopicIdIsWrittenTheSame() {
        // Given
        CoordinatorRecord record = new CoordinatorRecord(offsetKey("g", "t", 1), (short) 1,
                new OffsetCommitValue().setOffset(5L).setMetadata("").setCommitTimestamp(COMMIT_TS), (short) 4);

        // When
        byte[] value = GroupRecordSerde.valueBytes(record);

        // Then
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 4,
                kafkaOffsetValue(5L, -1, "").setCommitTimestamp(COMMIT_TS)));
    }

    @Test
    void aVersion1OffsetCommitKeepsItsExpireTimestampBothWays() {
        // Given: Kafka writes version 1 when a commit has an expire timestamp
        byte[] kafkaValue = MessageUtil.toVersionPrefixedBytes((short) 1, kafkaOffsetValue(42L, -1, "x")
                .setCommitTimestamp(COMMIT_TS).setExpireTimestamp(COMMIT_TS + 86_400_000L));
        byte[] kafkaKey = MessageUtil.toCoordinatorTypePrefixedBytes(kafkaOffsetKey("g", "t", 2));

        // When
        CoordinatorRecord record = decode(kafkaKey, kafkaValue);

        // Then
        OffsetCommitValue value = (OffsetCommitValue) record.value();
        assertThat(record.valueVersion()).isEqualTo((short) 1);
        assertThat(value.offset()).isEqualTo(42L);
        assertThat(value.metadata()).isEqualTo("x");
        assertThat(value.commitTimestamp()).isEqualTo(COMMIT_TS);
        assertThat(value.expireTimestamp()).isEqualTo(COMMIT_TS + 86_400_000L);
        assertThat(value.leaderEpoch()).isEqualTo(-1);
        assertThat(GroupRecordSerde.valueBytes(record)).isEqualTo(kafkaValue);
    }

    @Test
    void aVersion0OffsetKeyOfAnOldKafkaIsReadAsAnOffsetCommit() {
        // Given: before 0.10 the offset key's record type was 0 (and its value version 0)
        byte[] key = MessageUtil.toVersionPrefixedBytes((short) 0, kafkaOffsetKey("old", "t", 9));
        byte[] value = MessageUtil.toVersionPrefixedBytes((short) 0, kafkaOffsetValue(8L, -1, "")
                .setCommitTimestamp(COMMIT_TS));

        // When
        CoordinatorRecord record = decode(key, value);

        // Then
        assertThat(record.keyVersion()).isEqualTo((short) 0);
        assertThat(record.key()).isEqualTo(offsetKey("old", "t", 9));
        assertThat(((OffsetCommitValue) record.value()).offset()).isEqualTo(8L);
        assertThat(GroupRecordSerde.keyBytes(record)).isEqualTo(key);
        assertThat(GroupRecordSerde.valueBytes(record)).isEqualTo(value);
    }

    @Test
    void aGroupWithTwoMembersIsWrittenAsKafkaWritesItAtValueVersion3() {
        // Given: one dynamic member and one static member (with an instance id)
        GroupMetadataValue value = new GroupMetadataValue().setProtocolType("consumer").setGeneration(5)
                .setProtocol("range").setLeader("m-1").setCurrentStateTimestamp(COMMIT_TS)
                .setMembers(List.of(
                        member("m-1", null, "client-1", "/10.0.0.1", 300_000, 45_000, "sub-1", "asg-1"),
                        member("m-2", "instance-2", "client-2", "/10.0.0.2", 60_000, 10_000, "sub-2", "")));
        CoordinatorRecord record = GroupRecords.group("group-b", value);

        // When
        byte[] key = GroupRecordSerde.keyBytes(record);
        byte[] bytes = GroupRecordSerde.valueBytes(record);

        // Then
        org.apache.kafka.coordinator.group.generated.GroupMetadataValue kafka =
                new org.apache.kafka.coordinator.group.generated.GroupMetadataValue().setProtocolType("consumer")
                        .setGeneration(5).setProtocol("range").setLeader("m-1").setCurrentStateTimestamp(COMMIT_TS)
                        .setMembers(List.of(
                                kafkaMember("m-1", null, "client-1", "/10.0.0.1", 300_000, 45_000, "sub-1", "asg-1"),
                                kafkaMember("m-2", "instance-2", "client-2", "/10.0.0.2", 60_000, 10_000, "sub-2",
                                        "")));
        assertThat(key).isEqualTo(MessageUtil.toCoordinatorTypePrefixedBytes(
                new org.apache.kafka.coordinator.group.generated.GroupMetadataKey().setGroup("group-b")));
        assertThat(bytes).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 3, kafka));
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(key), ByteBuffer.wrap(bytes))).contains(record);
    }

    @Test
    void anEmptyGroupWithNoProtocolNorLeaderIsWrittenAsKafkaWritesIt() {
        // Given
        GroupMetadataValue value = new GroupMetadataValue().setProtocolType("consumer").setGeneration(6)
                .setProtocol(null).setLeader(null).setCurrentStateTimestamp(COMMIT_TS).setMembers(List.of());
        CoordinatorRecord record = GroupRecords.group("empty", value);

        // When
        byte[] bytes = GroupRecordSerde.valueBytes(record);

        // Then
        byte[] kafka = MessageUtil.toVersionPrefixedBytes((short) 3,
                new org.apache.kafka.coordinator.group.generated.GroupMetadataValue().setProtocolType("consumer")
                        .setGeneration(6).setProtocol(null).setLeader(null).setCurrentStateTimestamp(COMMIT_TS)
                        .setMembers(List.of()));
        assertThat(bytes).isEqualTo(kafka);
        GroupMetadataValue decoded = (GroupMetadataValue) decode(GroupRecordSerde.keyBytes(record), kafka).value();
        assertThat(decoded.protocol()).isNull();
        assertThat(decoded.leader()).isNull();
        assertThat(decoded.members()).isEmpty();
    }

    @Test
    void kafkasGroupBytesDecodeIntoTheSameGroupAtEveryValueVersion() {
        for (short version = 0; version <= 4; version++) {
            // Given: a Kafka group value at each version (the static member's instance id exists from version 3)
            String instanceId = version >= 3 ? "static-1" : null;
            byte[] kafkaValue = MessageUtil.toVersionPrefixedBytes(version,
                    new org.apache.kafka.coordinator.group.generated.GroupMetadataValue().setProtocolType("consumer")
                            .setGeneration(2).setProtocol("roundrobin").setLeader("a")
                            .setCurrentStateTimestamp(version >= 2 ? COMMIT_TS : -1L)
                            .setMembers(List.of(kafkaMember("a", instanceId, "c", "/h", version >= 1 ? 1000 : -1,
                                    500, "s", "x"))));
            byte[] kafkaKey = MessageUtil.toCoordinatorTypePrefixedBytes(
                    new org.apache.kafka.coordinator.group.generated.GroupMetadataKey().setGroup("vg"));

            // When
            CoordinatorRecord record = decode(kafkaKey, kafkaValue);

            // Then
            assertThat(record.key()).isEqualTo(new GroupMetadataKey().setGroup("vg"));
            assertThat(record.valueVersion()).isEqualTo(version);
            assertThat(record.value()).isEqualTo(new GroupMetadataValue().setProtocolType("consumer").setGeneration(2)
                    .setProtocol("roundrobin").setLeader("a").setCurrentStateTimestamp(version >= 2 ? COMMIT_TS : -1L)
                    .setMembers(List.of(member("a", instanceId, "c", "/h", version >= 1 ? 1000 : -1, 500, "s",
                            "x"))));
            assertThat(GroupRecordSerde.valueBytes(record)).isEqualTo(kafkaValue);
        }
    }

    @Test
    void tombstonesHaveNoValueAndDecodeBackToTombstones() {
        // Given
        CoordinatorRecord offset = GroupRecords.offsetTombstone(offsetKey("g", "t", 4));
        CoordinatorRecord group = GroupRecords.groupTombstone("g");

        // When
        byte[] offsetKey = GroupRecordSerde.keyBytes(offset);
        byte[] groupKey = GroupRecordSerde.keyBytes(group);

        // Then
        assertThat(GroupRecordSerde.valueBytes(offset)).isNull();
        assertThat(GroupRecordSerde.valueBytes(group)).isNull();
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(offsetKey), null)).contains(offset);
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(groupKey), null)).contains(group);
    }

    @Test
    void kip848ConsumerGroupRecordsAreWrittenAndReadAsKafkaWritesThem() {
        // Given: one record of each type 3, 5, 6, 7 and 8, as Cairn and as Kafka 4.1.1 build them
        Uuid topicId = new Uuid(0x1234L, 0x5678L);
        org.apache.kafka.common.Uuid kafkaTopicId = new org.apache.kafka.common.Uuid(0x1234L, 0x5678L);
        List<CoordinatorRecord> ours = List.of(
            new CoordinatorRecord(new io.cairn.broker.group.record.ConsumerGroupMetadataKey().setGroupId("g"),
                GroupRecordSerde.CONSUMER_GROUP_METADATA_KEY,
                new io.cairn.broker.group.record.ConsumerGroupMetadataValue().setEpoch(3), (short) 0),
            new CoordinatorRecord(new ConsumerGroupMemberMetadataKey().setGroupId("g").setMemberId("m"),
                GroupRecordSerde.CONSUMER_GROUP_MEMBER_METADATA_KEY, new ConsumerGroupMemberMetadataValue()
                    .setInstanceId("i").setRackId(null).setClientId("c").setClientHost("/127.0.0.1")
                    .setSubscribedTopicNames(List.of("a", "b")).setRebalanceTimeoutMs(300_000)
                    .setServerAssignor("uniform"), (short) 0),
            new CoordinatorRecord(new ConsumerGroupTargetAssignmentMetadataKey().setGroupId("g"),
                GroupRecordSerde.CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
                new ConsumerGroupTargetAssignmentMetadataValue().setAssignmentEpoch(3), (short) 0),
            new CoordinatorRecord(new ConsumerGroupTargetAssignmentMemberKey().setGroupId("g").setMemberId("m"),
                GroupRecordSerde.CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
                new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(List.of(
                    new ConsumerGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(topicId)
                        .setPartitions(List.of(0, 2)))), (short) 0),
            new CoordinatorRecord(new ConsumerGroupCurrentMemberAssignmentKey().setGroupId("g").setMemberId("m"),
                GroupRecordSerde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
                new ConsumerGroupCurrentMemberAssignmentValue().setMemberEpoch(3).setPreviousMemberEpoch(2)
                    .setState((byte) 1).setAssignedPartitions(List.of(
                        new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(topicId)
                            .setPartitions(List.of(0))))
                    .setPartitionsPendingRevocation(List.of(
                        new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(topicId)
                            .setPartitions(List.of(2)))), (short) 0));
        List<org.apache.kafka.common.protocol.ApiMessage> kafkaKeys = List.of(
            new ConsumerGroupMetadataKey().setGroupId("g"),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataKey().setGroupId("g")
                .setMemberId("m"),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataKey()
                .setGroupId("g"),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberKey().setGroupId("g")
                .setMemberId("m"),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentKey()
                .setGroupId("g").setMemberId("m"));
        List<org.apache.kafka.common.protocol.ApiMessage> kafkaValues = List.of(
            new ConsumerGroupMetadataValue().setEpoch(3),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue().setInstanceId("i")
                .setRackId(null).setClientId("c").setClientHost("/127.0.0.1").setSubscribedTopicNames(List.of("a", "b"))
                .setRebalanceTimeoutMs(300_000).setServerAssignor("uniform"),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataValue()
                .setAssignmentEpoch(3),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue()
                .setTopicPartitions(List.of(new org.apache.kafka.coordinator.group.generated
                    .ConsumerGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(kafkaTopicId)
                    .setPartitions(List.of(0, 2)))),
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentValue()
                .setMemberEpoch(3).setPreviousMemberEpoch(2).setState((byte) 1)
                .setAssignedPartitions(List.of(new org.apache.kafka.coordinator.group.generated
                    .ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(kafkaTopicId)
                    .setPartitions(List.of(0))))
                .setPartitionsPendingRevocation(List.of(new org.apache.kafka.coordinator.group.generated
                    .ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(kafkaTopicId)
                    .setPartitions(List.of(2)))));

        for (int i = 0; i < ours.size(); i++) {
            // When
            byte[] key = GroupRecordSerde.keyBytes(ours.get(i));
            byte[] value = GroupRecordSerde.valueBytes(ours.get(i));

            // Then
            assertThat(key).as("key %d", i)
                .isEqualTo(MessageUtil.toCoordinatorTypePrefixedBytes(kafkaKeys.get(i)));
            assertThat(value).as("value %d", i)
                .isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 0, kafkaValues.get(i)));
            assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(key), ByteBuffer.wrap(value))).contains(ours.get(i));
            assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(key), null)).contains(new CoordinatorRecord(
                ours.get(i).key(), ours.get(i).keyVersion(), null, (short) 0));
        }
    }

    @Test
    void aClassicMemberOfAConsumerGroupIsWrittenAndReadAsKafkaWritesIt() {
        // Given: a type 5 record with its classic member metadata (tag 0), as Cairn and as Kafka 4.1.1 build it
        CoordinatorRecord ours = new CoordinatorRecord(new ConsumerGroupMemberMetadataKey().setGroupId("g")
            .setMemberId("m"), GroupRecordSerde.CONSUMER_GROUP_MEMBER_METADATA_KEY,
            new ConsumerGroupMemberMetadataValue().setClientId("c").setClientHost("/127.0.0.1")
                .setSubscribedTopicNames(List.of("a")).setSubscribedTopicRegex("").setRebalanceTimeoutMs(300_000)
                .setClassicMemberMetadata(new ConsumerGroupMemberMetadataValue.ClassicMemberMetadata()
                    .setSessionTimeoutMs(45_000).setSupportedProtocols(List.of(
                        new ConsumerGroupMemberMetadataValue.ClassicProtocol().setName("range")
                            .setMetadata(new byte[] {0, 1, 2}),
                        new ConsumerGroupMemberMetadataValue.ClassicProtocol().setName("cooperative-sticky")
                            .setMetadata(new byte[] {3})))), (short) 0);
        org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue kafka =
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue().setClientId("c")
                .setClientHost("/127.0.0.1").setSubscribedTopicNames(List.of("a")).setSubscribedTopicRegex("")
                .setRebalanceTimeoutMs(300_000).setClassicMemberMetadata(
                    new org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue
                        .ClassicMemberMetadata().setSessionTimeoutMs(45_000).setSupportedProtocols(List.of(
                            new org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue
                                .ClassicProtocol().setName("range").setMetadata(new byte[] {0, 1, 2}),
                            new org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue
                                .ClassicProtocol().setName("cooperative-sticky").setMetadata(new byte[] {3}))));

        // When
        byte[] value = GroupRecordSerde.valueBytes(ours);

        // Then
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 0, kafka));
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(GroupRecordSerde.keyBytes(ours)), ByteBuffer.wrap(value)))
            .contains(ours);
    }

    @Test
    void aResolvedRegularExpressionIsWrittenAndReadAsKafkaWritesIt() {
        // Given: a type 16 record, as Cairn and as Kafka 4.1.1 build it
        CoordinatorRecord ours = new CoordinatorRecord(
            new io.cairn.broker.group.record.ConsumerGroupRegularExpressionKey().setGroupId("g").setRegularExpression("orders-.*"), (short) 16,
            new io.cairn.broker.group.record.ConsumerGroupRegularExpressionValue()
                .setTopics(List.of("orders-1", "orders-2")).setVersion(42L).setTimestamp(1_700_000_000_000L),
            (short) 0);
        org.apache.kafka.common.protocol.ApiMessage kafkaKey =
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionKey().setGroupId("g")
                .setRegularExpression("orders-.*");
        org.apache.kafka.common.protocol.ApiMessage kafkaValue =
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionValue()
                .setTopics(List.of("orders-1", "orders-2")).setVersion(42L).setTimestamp(1_700_000_000_000L);

        // When
        byte[] key = GroupRecordSerde.keyBytes(ours);
        byte[] value = GroupRecordSerde.valueBytes(ours);

        // Then
        assertThat(key).isEqualTo(MessageUtil.toCoordinatorTypePrefixedBytes(kafkaKey));
        assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 0, kafkaValue));
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(key), ByteBuffer.wrap(value))).contains(ours);
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(key), null))
            .contains(new CoordinatorRecord(ours.key(), (short) 16, null, (short) 0));
    }

    @Test
    void recordTypesCairnDoesNotReadAreSkipped() {
        // Given: a type 4 (consumer group partition metadata) and a type 9 key
        byte[] partitionMetadataKey = MessageUtil.toCoordinatorTypePrefixedBytes(
            new org.apache.kafka.coordinator.group.generated.ConsumerGroupPartitionMetadataKey().setGroupId("g"));
        byte[] type9 = {0, 9, 0, 1, 'g'};

        // When
        Optional<CoordinatorRecord> partitionMetadata = GroupRecordSerde.decode(ByteBuffer.wrap(partitionMetadataKey),
            null);

        // Then
        assertThat(partitionMetadataKey[1]).isEqualTo((byte) 4);
        assertThat(partitionMetadata).isEmpty();
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(type9), null)).isEmpty();
    }

    @Test
    void decodingLeavesTheCallersBuffersWhereTheyWere() {
        // Given
        CoordinatorRecord record = GroupRecords.offset(offsetKey("g", "t", 0),
                new OffsetCommitValue().setOffset(1L).setMetadata("").setCommitTimestamp(COMMIT_TS));
        ByteBuffer key = ByteBuffer.wrap(GroupRecordSerde.keyBytes(record));
        ByteBuffer value = ByteBuffer.wrap(GroupRecordSerde.valueBytes(record));

        // When
        GroupRecordSerde.decode(key, value);

        // Then
        assertThat(key.position()).isZero();
        assertThat(value.position()).isZero();
        assertThat(GroupRecordSerde.decode(key, value)).contains(record);
    }

    @Test
    void aTruncatedKeyIsAMalformedRecordNamingWhatFailed() {
        // Given
        byte[] key = MessageUtil.toCoordinatorTypePrefixedBytes(kafkaOffsetKey("group", "topic", 1));
        ByteBuffer truncated = ByteBuffer.wrap(key, 0, key.length - 2);

        // When / Then
        assertThatThrownBy(() -> GroupRecordSerde.decode(truncated, null))
                .isInstanceOf(CoordinatorSerde.MalformedRecordException.class)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("key").hasMessageContaining("OffsetCommitKey");
        assertThatThrownBy(() -> GroupRecordSerde.decode(ByteBuffer.wrap(new byte[] {0}), null))
                .isInstanceOf(CoordinatorSerde.MalformedRecordException.class)
                .hasMessageContaining("too few for its version");
        assertThatThrownBy(() -> GroupRecordSerde.decode(null, null))
                .isInstanceOf(CoordinatorSerde.MalformedRecordException.class)
                .hasMessageContaining("no key");
    }

    @Test
    void aValueOfAnUnknownVersionOrTruncatedIsAMalformedRecordNamingItsKey() {
        // Given
        ByteBuffer key = ByteBuffer.wrap(MessageUtil.toCoordinatorTypePrefixedBytes(kafkaOffsetKey("g1", "t1", 1)));
        byte[] value = MessageUtil.toVersionPrefixedBytes((short) 3, kafkaOffsetValue(1L, 0, "metadata"));
        ByteBuffer unknownVersion = ByteBuffer.wrap(value.clone()).putShort(0, (short) 9);
        ByteBuffer truncated = ByteBuffer.wrap(value, 0, value.length - 3);
        ByteBuffer groupKey = ByteBuffer.wrap(GroupRecordSerde.keyBytes(GroupRecords.groupTombstone("g2")));

        // When / Then
        assertThatThrownBy(() -> GroupRecordSerde.decode(key, unknownVersion))
                .isInstanceOf(CoordinatorSerde.MalformedRecordException.class)
                .hasMessageContaining("Unsupported version 9 of OffsetCommitValue").hasMessageContaining("g1");
        assertThatThrownBy(() -> GroupRecordSerde.decode(key, truncated))
                .isInstanceOf(CoordinatorSerde.MalformedRecordException.class)
                .hasMessageContaining("value of").hasMessageContaining("t1");
        assertThatThrownBy(() -> GroupRecordSerde.decode(groupKey, ByteBuffer.wrap(new byte[] {0, 3, 0, 1})))
                .isInstanceOf(CoordinatorSerde.MalformedRecordException.class)
                .hasMessageContaining("GroupMetadataValue");
    }

    @Test
    void aRecordWhoseKeyVersionDoesNotFitItsMessagesIsRefusedWhenWritten() {
        // Given
        CoordinatorRecord wrongType = new CoordinatorRecord(offsetKey("g", "t", 0), (short) 2, null, (short) 3);
        CoordinatorRecord unknownType = new CoordinatorRecord(offsetKey("g", "t", 0), (short) 9, null, (short) 3);
        CoordinatorRecord wrongValue = new CoordinatorRecord(offsetKey("g", "t", 0), (short) 1,
                new GroupMetadataValue(), (short) 3);
        CoordinatorRecord badVersion = new CoordinatorRecord(offsetKey("g", "t", 0), (short) 1,
                new OffsetCommitValue(), (short) 5);

        // When / Then
        assertThatThrownBy(() -> GroupRecordSerde.keyBytes(wrongType)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Key version 2");
        assertThatThrownBy(() -> GroupRecordSerde.keyBytes(unknownType)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GroupRecordSerde.valueBytes(wrongValue)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("GroupMetadataValue");
        assertThatThrownBy(() -> GroupRecordSerde.valueBytes(badVersion)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("Unsupported version 5");
    }

    private static CoordinatorRecord decode(byte[] key, byte[] value) {
        return GroupRecordSerde.decode(ByteBuffer.wrap(key), value == null ? null : ByteBuffer.wrap(value))
                .orElseThrow();
    }

    private static OffsetCommitKey offsetKey(String group, String topic, int partition) {
        return new OffsetCommitKey().setGroup(group).setTopic(topic).setPartition(partition);
    }

    private static org.apache.kafka.coordinator.group.generated.OffsetCommitKey kafkaOffsetKey(String group,
                                                                                           String topic,
                                                                                           int partition) {
        return new org.apache.kafka.coordinator.group.generated.OffsetCommitKey().setGroup(group).setTopic(topic)
                .setPartition(partition);
    }

    private static org.apache.kafka.coordinator.group.generated.OffsetCommitValue kafkaOffsetValue(long offset,
                                                                                               int leaderEpoch,
                                                                                               String metadata) {
        return new org.apache.kafka.coordinator.group.generated.OffsetCommitValue().setOffset(offset)
                .setLeaderEpoch(leaderEpoch).setMetadata(metadata);
    }

    private static GroupMetadataValue.MemberMetadata member(String id, String instanceId, String clientId,
                                                            String host, int rebalanceTimeout, int sessionTimeout,
                                                            String subscription, String assignment) {
        return new GroupMetadataValue.MemberMetadata().setMemberId(id).setGroupInstanceId(instanceId)
                .setClientId(clientId).setClientHost(host).setRebalanceTimeout(rebalanceTimeout)
                .setSessionTimeout(sessionTimeout).setSubscription(bytes(subscription))
                .setAssignment(bytes(assignment));
    }

    private static org.apache.kafka.coordinator.group.generated.GroupMetadataValue.MemberMetadata kafkaMember(
            String id, String instanceId, String clientId, String host, int rebalanceTimeout, int sessionTimeout,
            String subscription, String assignment) {
        return new org.apache.kafka.coordinator.group.generated.GroupMetadataValue.MemberMetadata().setMemberId(id)
                .setGroupInstanceId(instanceId).setClientId(clientId).setClientHost(host)
                .setRebalanceTimeout(rebalanceTimeout).setSessionTimeout(sessionTimeout)
                .setSubscription(bytes(subscription)).setAssignment(bytes(assignment));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
