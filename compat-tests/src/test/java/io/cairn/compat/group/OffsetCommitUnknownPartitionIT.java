package io.cairn.compat.group;

import static io.cairn.compat.group.GroupClients.TIMEOUT_S;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConsumerGroupOffsetsResult;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An offset commit to a partition the topic does not have, with the stock Admin against Cairn and the reference
 * Kafka: that partition gets UNKNOWN_TOPIC_OR_PARTITION (Kafka's KafkaApis drops it before the coordinator), the
 * others of the same request are committed.
 */
@Timeout(120)
@ExtendWith(BrokerLogsExtension.class)
class OffsetCommitUnknownPartitionIT {

    @ParameterizedTest
    @MethodSource("io.cairn.compat.group.GroupClients#kinds")
    void aCommitToPartitionSevenOfAThreePartitionTopicIsUnknownTopicOrPartition(BrokerKind kind) throws Exception {
        // Given
        BrokerProcess broker = kind.shared();
        String topic = GroupClients.createTopic(broker, "commit-beyond", 3);
        String group = GroupClients.uniqueName("commit-beyond");
        TopicPartition existing = new TopicPartition(topic, 1);
        TopicPartition beyond = new TopicPartition(topic, 7);
        try (Admin admin = GroupClients.admin(broker)) {

            // When
            AlterConsumerGroupOffsetsResult result = admin.alterConsumerGroupOffsets(group,
                    Map.of(existing, new OffsetAndMetadata(5), beyond, new OffsetAndMetadata(5)));

            // Then
            result.partitionResult(existing).get(TIMEOUT_S, TimeUnit.SECONDS);
            assertThatThrownBy(() -> result.partitionResult(beyond).get(TIMEOUT_S, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(UnknownTopicOrPartitionException.class);
            assertThat(admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(TIMEOUT_S, TimeUnit.SECONDS)).isEqualTo(Map.of(existing, new OffsetAndMetadata(5)));
        }
    }
}
