package io.cairn.metadata.controller;

import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.record.BrokerRegistrationChangeRecord;
import io.cairn.metadata.record.PartitionRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.TopicRecord;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.List;

/** Builds images with chosen broker states and partition registrations straight from records, for unit tests. */
final class PartitionImages {

    private final List<ApiMessage> records = new ArrayList<>();
    private int topics;

    /** Brokers 1..count, registered and unfenced (epoch = id). */
    PartitionImages brokers(int count) {
        for (int id = 1; id <= count; id++) {
            records.add(new RegisterBrokerRecord().setBrokerId(id).setBrokerEpoch(id)
                    .setIncarnationId(new Uuid(7, id)).setFenced(false));
        }
        return this;
    }

    PartitionImages fenced(int id) {
        records.add(new BrokerRegistrationChangeRecord().setBrokerId(id).setBrokerEpoch(id).setFenced((byte) 1));
        return this;
    }

    PartitionImages shuttingDown(int id) {
        records.add(new BrokerRegistrationChangeRecord().setBrokerId(id).setBrokerEpoch(id)
                .setInControlledShutdown((byte) 1));
        return this;
    }

    /** A topic whose partition i has {@code partitions[i]} (the epochs are ignored and start at 0). */
    PartitionImages topic(String name, PartitionRegistration... partitions) {
        Uuid id = new Uuid(1, ++topics);
        records.add(new TopicRecord().setName(name).setTopicId(id));
        for (int i = 0; i < partitions.length; i++) {
            PartitionRegistration p = partitions[i];
            records.add(new PartitionRecord().setTopicId(id).setPartitionId(i).setReplicas(p.replicas())
                    .setIsr(p.isr()).setLeader(p.leader()).setRemovingReplicas(p.removingReplicas())
                    .setAddingReplicas(p.addingReplicas()));
        }
        return this;
    }

    MetadataImage image() {
        return ControllerLogic.apply(MetadataImage.EMPTY, records);
    }

    static PartitionRegistration partition(List<Integer> replicas, List<Integer> isr, int leader) {
        return new PartitionRegistration(replicas, isr, leader, 0, 0);
    }

    static PartitionRegistration partition(MetadataImage image, String topic, int index) {
        return image.topic(topic).flatMap(t -> t.partition(index)).orElseThrow();
    }

    static TopicImage topic(MetadataImage image, String topic) {
        return image.topic(topic).orElseThrow();
    }
}
