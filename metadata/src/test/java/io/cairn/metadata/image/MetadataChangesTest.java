package io.cairn.metadata.image;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.record.BrokerRegistrationChangeRecord;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.ProducerIdsRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.RemoveTopicRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import org.junit.jupiter.api.Test;

class MetadataChangesTest {

    private static final Uuid OLD_ORDERS = new Uuid(1L, 1L);
    private static final Uuid NEW_ORDERS = new Uuid(1L, 2L);
    private static final Uuid PAYMENTS = new Uuid(2L, 2L);

    private static PartitionRecord partition(Uuid topic, int index, int leader) {
        return new PartitionRecord().setTopicId(topic).setPartitionId(index).setReplicas(List.of(1, 2))
                .setIsr(List.of(1, 2)).setLeader(leader);
    }

    @Test
    void betweenTwoImagesReportsWhatAReplayOfTheRecordsInBetweenWould() {
        // Given
        MetadataImage previous = new MetadataDelta(MetadataImage.EMPTY).replayAll(List.of(
                new RegisterBrokerRecord().setBrokerId(1).setBrokerEpoch(1).setFenced(false),
                new RegisterBrokerRecord().setBrokerId(2).setBrokerEpoch(2).setFenced(false),
                new TopicRecord().setName("orders").setTopicId(OLD_ORDERS), partition(OLD_ORDERS, 0, 1),
                new TopicRecord().setName("payments").setTopicId(PAYMENTS), partition(PAYMENTS, 0, 1),
                partition(PAYMENTS, 1, 1),
                new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName("orders")
                        .setName("retention.ms").setValue("1000"),
                new ConfigRecord().setResourceType(ConfigResource.TOPIC).setResourceName("payments")
                        .setName("retention.ms").setValue("5"))).apply(10);
        // orders deleted and recreated under a new id, payments-1 moved, broker 2 fenced, producer ids handed out
        MetadataImage next = new MetadataDelta(previous).replayAll(List.of(
                new RemoveTopicRecord().setTopicId(OLD_ORDERS),
                new TopicRecord().setName("orders").setTopicId(NEW_ORDERS), partition(NEW_ORDERS, 0, 2),
                partition(PAYMENTS, 1, 2),
                new BrokerRegistrationChangeRecord().setBrokerId(2).setBrokerEpoch(2).setFenced((byte) 1),
                new ProducerIdsRecord().setBrokerId(1).setBrokerEpoch(1).setNextProducerId(1000))).apply(20);

        // When
        MetadataChanges changes = MetadataChanges.between(previous, next);

        // Then
        assertThat(changes.deletedTopics()).extracting(TopicImage::id).containsExactly(OLD_ORDERS);
        assertThat(changes.createdTopics()).containsExactly("orders");
        assertThat(changes.changedPartitions()).containsOnlyKeys(new TopicPartition("orders", 0),
                new TopicPartition("payments", 1));
        assertThat(changes.changedBrokers()).containsExactly(2);
        assertThat(changes.changedConfigs()).containsExactly(ConfigResource.topic("orders"));
        assertThat(changes.producerIdsChanged()).isTrue();
        assertThat(changes.aclsChanged() || changes.scramChanged() || changes.featuresChanged()
                || changes.controllerChanged()).isFalse();
        assertThat(MetadataChanges.between(next, next).isEmpty()).isTrue();
        assertThat(MetadataChanges.between(MetadataImage.EMPTY, next).createdTopics())
                .containsExactlyInAnyOrder("orders", "payments");
    }
}
