package io.cairn.broker.group.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.group.GroupRecordSerde;
import io.cairn.wire.protocol.Uuid;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.coordinator.group.generated.ShareGroupCurrentMemberAssignmentKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupCurrentMemberAssignmentValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupMemberMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupStatePartitionMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupStatePartitionMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMetadataValue;
import org.junit.jupiter.api.Test;

/** The share group records of {@code __consumer_offsets} are Kafka 4.1.1's, byte for byte (its generated classes). */
class ShareGroupRecordsTest {

    private static final Uuid TOPIC = new Uuid(0x1234L, 0x5678L);
    private static final org.apache.kafka.common.Uuid KAFKA_TOPIC = new org.apache.kafka.common.Uuid(0x1234L, 0x5678L);

    private static void assertSameBytes(CoordinatorRecord ours, ApiMessage kafkaKey, ApiMessage kafkaValue) {
        byte[] key = GroupRecordSerde.keyBytes(ours);
        byte[] value = GroupRecordSerde.valueBytes(ours);
        assertThat(key).isEqualTo(MessageUtil.toCoordinatorTypePrefixedBytes(kafkaKey));
        if (kafkaValue == null) {
            assertThat(value).isNull();
        } else {
            assertThat(value).isEqualTo(MessageUtil.toVersionPrefixedBytes((short) 0, kafkaValue));
        }
        assertThat(GroupRecordSerde.decode(ByteBuffer.wrap(key), value == null ? null : ByteBuffer.wrap(value)))
            .contains(ours);
    }

    @Test
    void groupEpochAndMemberSubscriptionAreKafkas() {
        assertSameBytes(ShareGroupRecords.groupEpoch("g", 7), new ShareGroupMetadataKey().setGroupId("g"),
            new ShareGroupMetadataValue().setEpoch(7).setMetadataHash(0L));
        ShareGroupMember member = new ShareGroupMember("m1", 3, 2, "rack", "client", "/127.0.0.1",
            List.of("a", "b"), Map.of());
        assertSameBytes(ShareGroupRecords.memberSubscription("g", member),
            new ShareGroupMemberMetadataKey().setGroupId("g").setMemberId("m1"),
            new ShareGroupMemberMetadataValue().setRackId("rack").setClientId("client").setClientHost("/127.0.0.1")
                .setSubscribedTopicNames(List.of("a", "b")));
    }

    @Test
    void assignmentsAreKafkas() {
        assertSameBytes(ShareGroupRecords.targetAssignment("g", "m1", Map.of(TOPIC, Set.of(2, 0))),
            new ShareGroupTargetAssignmentMemberKey().setGroupId("g").setMemberId("m1"),
            new ShareGroupTargetAssignmentMemberValue().setTopicPartitions(List.of(
                new ShareGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(KAFKA_TOPIC)
                    .setPartitions(List.of(0, 2)))));
        assertSameBytes(ShareGroupRecords.targetAssignmentEpoch("g", 4),
            new ShareGroupTargetAssignmentMetadataKey().setGroupId("g"),
            new ShareGroupTargetAssignmentMetadataValue().setAssignmentEpoch(4));
        ShareGroupMember member = new ShareGroupMember("m1", 4, 3, null, "c", "h", List.of("a"),
            Map.of(TOPIC, Set.of(1)));
        assertSameBytes(ShareGroupRecords.currentAssignment("g", member),
            new ShareGroupCurrentMemberAssignmentKey().setGroupId("g").setMemberId("m1"),
            new ShareGroupCurrentMemberAssignmentValue().setMemberEpoch(4).setPreviousMemberEpoch(3).setState((byte) 0)
                .setAssignedPartitions(List.of(new ShareGroupCurrentMemberAssignmentValue.TopicPartitions()
                    .setTopicId(KAFKA_TOPIC).setPartitions(List.of(1)))));
    }

    @Test
    void statePartitionMetadataIsKafkas() {
        SharePartitionStates states = new SharePartitionStates(
            Map.of(TOPIC, new SharePartitionStates.Topic("t", Set.of(1, 0), 5L)),
            Map.of(new Uuid(9L, 9L), new SharePartitionStates.Topic("u", Set.of(0), 5L)),
            Map.of(new Uuid(7L, 7L), "v"));
        assertSameBytes(ShareGroupRecords.statePartitions("g", states),
            new ShareGroupStatePartitionMetadataKey().setGroupId("g"),
            new ShareGroupStatePartitionMetadataValue()
                .setInitializingTopics(List.of(new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo()
                    .setTopicId(KAFKA_TOPIC).setTopicName("t").setPartitions(List.of(0, 1))))
                .setInitializedTopics(List.of(new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo()
                    .setTopicId(new org.apache.kafka.common.Uuid(9L, 9L)).setTopicName("u")
                    .setPartitions(List.of(0))))
                .setDeletingTopics(List.of(new ShareGroupStatePartitionMetadataValue.TopicInfo()
                    .setTopicId(new org.apache.kafka.common.Uuid(7L, 7L)).setTopicName("v"))));
    }

    @Test
    void tombstonesAreKafkasInKafkasOrder() {
        List<CoordinatorRecord> tombstones = ShareGroupRecords.memberTombstones("g", "m1");
        assertSameBytes(tombstones.get(0), new ShareGroupCurrentMemberAssignmentKey().setGroupId("g")
            .setMemberId("m1"), null);
        assertSameBytes(tombstones.get(1), new ShareGroupTargetAssignmentMemberKey().setGroupId("g")
            .setMemberId("m1"), null);
        assertSameBytes(tombstones.get(2), new ShareGroupMemberMetadataKey().setGroupId("g").setMemberId("m1"), null);
        ShareGroup group = new ShareGroup("g");
        List<CoordinatorRecord> deleted = ShareGroupRecords.groupTombstones(group);
        assertThat(deleted).extracting(CoordinatorRecord::keyVersion)
            .containsExactly((short) 12, (short) 15, (short) 11);
    }
}
