package io.cairn.broker.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;

/** Share coordinator keys: their text and their {@code __share_group_state} partition, as Kafka 4.1.1's. */
class SharePartitionKeyTest {

    @Test
    void coordinatorKeyAndPartitionAreKafkas() {
        Random random = new Random(76);
        for (int i = 0; i < 1_000; i++) {
            Uuid topicId = new Uuid(random.nextLong(), random.nextLong());
            SharePartitionKey key = new SharePartitionKey("group-" + i, topicId, random.nextInt(100));
            org.apache.kafka.server.share.SharePartitionKey kafka = org.apache.kafka.server.share.SharePartitionKey
                .getInstance(key.groupId(), org.apache.kafka.common.Uuid.fromString(topicId.toString()),
                    key.partition());
            assertThat(key.coordinatorKey()).isEqualTo(kafka.asCoordinatorKey());
            assertThat(key.coordinatorPartition(50)).isEqualTo(Utils.abs(kafka.asCoordinatorKey().hashCode()) % 50);
            assertThat(SharePartitionKey.parse(key.coordinatorKey())).isEqualTo(key);
        }
    }

    @Test
    void malformedKeysAreRefusedAsKafkaRefusesThem() {
        for (String bad : List.of("", "g:t", "g:AAAAAAAAAAAAAAAAAAAAAQ:0:1", " :AAAAAAAAAAAAAAAAAAAAAQ:0",
                "g:not-a-uuid:0", "g:AAAAAAAAAAAAAAAAAAAAAQ:x")) {
            assertThatThrownBy(() -> SharePartitionKey.parse(bad)).as(bad)
                .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> org.apache.kafka.server.share.SharePartitionKey.validate(bad)).as(bad)
                .isInstanceOf(IllegalArgumentException.class);
        }
    }
}
