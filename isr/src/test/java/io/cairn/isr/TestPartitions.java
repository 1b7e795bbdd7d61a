package io.cairn.isr;

import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.protocol.Uuid;

/** Opens {@link Partition}'s package-private lifecycle to the tests of other packages (the fetchers). */
public final class TestPartitions {

    private TestPartitions() {
    }

    /** A partition of {@code log} hosted by {@code brokerId} under {@code registration}. */
    public static Partition create(TopicPartition tp, Uuid topicId, int brokerId, PartitionLog log,
                                   PartitionRegistration registration, PartitionListener listener, Time time) {
        return new Partition(tp, topicId, brokerId, log, registration, 1, listener, time, IsrHarness.quiet());
    }

    /** Applies a committed registration, as the replica manager does. */
    public static void update(Partition partition, PartitionRegistration registration) {
        partition.update(registration);
    }
}
