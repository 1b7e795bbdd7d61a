package io.cairn.metadata.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.PartitionChangeRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.RemoveTopicRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.metadata.record.UserScramCredentialRecord;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.MessageDecodeException;
import io.cairn.wire.protocol.Uuid;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class MetadataDeltaTest {

    private static final Uuid TOPIC_ID = new Uuid(7L, 9L);

    private static List<ApiMessage> topicWithOnePartition() {
        return List.of(
                new RegisterBrokerRecord().setBrokerId(1).setBrokerEpoch(1).setFenced(false).setRack("r1"),
                new RegisterBrokerRecord().setBrokerId(2).setBrokerEpoch(2).setFenced(false),
                new TopicRecord().setName("orders").setTopicId(TOPIC_ID),
                new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(0).setReplicas(List.of(1, 2))
                        .setIsr(List.of(1, 2)).setLeader(1),
                new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName("orders")
                        .setName("retention.ms").setValue("1000"));
    }

    @Test
    void recordsBuildTheImageAndReportWhatChanged() {
        // Given / When
        MetadataDelta delta = new MetadataDelta(MetadataImage.EMPTY).replayAll(topicWithOnePartition());
        MetadataImage image = delta.apply(5);

        // Then
        assertThat(image.offset()).isEqualTo(5);
        assertThat(image.broker(1).orElseThrow().rack()).contains("r1");
        assertThat(image.lastBrokerEpoch()).isEqualTo(2);
        assertThat(image.topic("orders").orElseThrow().partitions().get(0).leader()).isEqualTo(1);
        assertThat(image.configs(ConfigResource.topic("orders"))).containsEntry("retention.ms", "1000");
        assertThat(delta.changes().createdTopics()).containsExactly("orders");
        assertThat(delta.changes().changedPartitions()).containsKey(new TopicPartition("orders", 0));
        assertThat(delta.changes().changedBrokers()).containsExactlyInAnyOrder(1, 2);
    }

    @Test
    void aLeaderChangeBumpsBothEpochsAndAnIsrChangeOnlyThePartitionEpoch() {
        // Given
        MetadataImage image = new MetadataDelta(MetadataImage.EMPTY).replayAll(topicWithOnePartition()).apply(1);

        // When
        MetadataImage shrunk = new MetadataDelta(image).replay(new PartitionChangeRecord().setTopicId(TOPIC_ID)
                .setPartitionId(0).setIsr(List.of(1))).apply(2);
        MetadataImage moved = new MetadataDelta(image).replay(new PartitionChangeRecord().setTopicId(TOPIC_ID)
                .setPartitionId(0).setLeader(2).setIsr(List.of(2))).apply(2);

        // Then
        PartitionRegistration afterShrink = shrunk.topic("orders").orElseThrow().partitions().get(0);
        assertThat(afterShrink.isr()).containsExactly(1);
        assertThat(afterShrink.leaderEpoch()).isZero();
        assertThat(afterShrink.partitionEpoch()).isEqualTo(1);
        PartitionRegistration afterMove = moved.topic("orders").orElseThrow().partitions().get(0);
        assertThat(afterMove.leader()).isEqualTo(2);
        assertThat(afterMove.leaderEpoch()).isEqualTo(1);
        assertThat(afterMove.partitionEpoch()).isEqualTo(1);
        assertThat(image.topic("orders").orElseThrow().partitions().get(0).isr()).containsExactly(1, 2);
    }

    @Test
    void removingATopicDropsItsPartitionsAndConfigsAndLaterChangesToItAreSkipped() {
        // Given
        MetadataImage image = new MetadataDelta(MetadataImage.EMPTY).replayAll(topicWithOnePartition()).apply(1);

        // When
        MetadataDelta delta = new MetadataDelta(image).replay(new RemoveTopicRecord().setTopicId(TOPIC_ID))
                .replay(new PartitionChangeRecord().setTopicId(TOPIC_ID).setPartitionId(0).setLeader(2));
        MetadataImage after = delta.apply(2);

        // Then
        assertThat(after.topicsById()).isEmpty();
        assertThat(after.topicIds()).isEmpty();
        assertThat(after.configs()).isEmpty();
        assertThat(delta.changes().deletedTopics()).extracting(TopicImage::name).containsExactly("orders");
    }

    @Test
    void anImageWrittenAsRecordsAndReplayedIsEqualAndItsBytesAreCanonical() {
        // Given
        List<ApiMessage> records = new java.util.ArrayList<>(topicWithOnePartition());
        records.add(new UserScramCredentialRecord().setName("alice").setMechanism((byte) 1)
                .setSalt(new byte[] {1}).setStoredKey(new byte[] {2}).setServerKey(new byte[] {3})
                .setIterations(4096));
        MetadataImage image = new MetadataDelta(MetadataImage.EMPTY).replayAll(records).apply(9);

        // When
        byte[] bytes = MetadataRecords.encode(ImageRecords.of(image));
        MetadataImage rebuilt = new MetadataDelta(MetadataImage.EMPTY).replayAll(MetadataRecords.decode(bytes))
                .apply(9);

        // Then
        assertThat(rebuilt).isEqualTo(image);
        assertThat(MetadataRecords.encode(ImageRecords.of(rebuilt))).isEqualTo(bytes);
    }

    @Test
    void aTruncatedOrUnknownBatchFailsToDecode() {
        // Given
        byte[] bytes = MetadataRecords.encode(topicWithOnePartition());

        // Then
        assertThatThrownBy(() -> MetadataRecords.decode(Arrays.copyOf(bytes, bytes.length - 3)))
                .isInstanceOf(MessageDecodeException.class);
        byte[] unknown = bytes.clone();
        unknown[4] = 0x7f;
        assertThatThrownBy(() -> MetadataRecords.decode(unknown)).isInstanceOf(MessageDecodeException.class);
    }
}
