package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.group.GroupClients;
import io.cairn.isr.fetcher.LeaderEndpoint;
import io.cairn.isr.fetcher.RemoteLeaderEndpoint;
import io.cairn.isr.fetcher.ReplicaFetcherConfig;
import io.cairn.isr.client.SourceBroker;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.wire.error.Errors;
import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Cairn's replica client ({@link RemoteLeaderEndpoint}) against a real broker of each kind: after ApiVersions it
 * asks ListOffsets and OffsetForLeaderEpoch as a replica and gets the leader's log start, log end and epoch end; a
 * Fetch from a broker id that is not a replica of the partition is refused as Kafka refuses it (UNKNOWN_LEADER_EPOCH,
 * since the fetch names its leader epoch), also in the fetch session that follows.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class RemoteLeaderEndpointIT {

    private static final int RECORDS = 100;

    static List<BrokerKind> kinds() {
        return GroupClients.kinds().toList();
    }

    @ParameterizedTest
    @MethodSource("kinds")
    void theReplicaClientSpeaksToTheLeaderAsKafkasFollowersDo(BrokerKind kind) throws Exception {
        // Given
        try (BrokerProcess broker = kind.start()) {
            String topic = GroupClients.createTopic(broker, "endpoint", 1);
            Uuid topicId;
            try (Admin admin = GroupClients.admin(broker)) {
                org.apache.kafka.common.Uuid id = admin.describeTopics(List.of(topic)).allTopicNames()
                        .get(30, TimeUnit.SECONDS).get(topic).topicId();
                topicId = new Uuid(id.getMostSignificantBits(), id.getLeastSignificantBits());
            }
            produce(broker, topic);
            TopicPartition tp = new TopicPartition(topic, 0);
            try (RemoteLeaderEndpoint leader = new RemoteLeaderEndpoint(new SourceBroker(1, broker.host(),
                    broker.port()), 7, () -> -1L, ReplicaFetcherConfig.defaults(), "broker-7-fetcher-0")) {

                // When / Then: the leader's offsets as a replica sees them
                assertThat(leader.fetchEarliestOffset(tp, 0).offset()).isZero();
                assertThat(leader.fetchLatestOffset(tp, 0).offset()).isEqualTo(RECORDS);
                assertThat(leader.fetchEpochEndOffsets(Map.of(tp, new LeaderEndpoint.EpochRequest(0, 0))))
                        .containsEntry(tp, new LeaderEndpoint.EpochEndOffsetResult(Errors.NONE, 0, RECORDS));

                // When / Then: broker 7 is no replica of the partition
                LeaderEndpoint.PartitionFetchRequest fetch = new LeaderEndpoint.PartitionFetchRequest(topicId, 0L, 0L,
                        1 << 20, 0, -1);
                Map<TopicPartition, LeaderEndpoint.FetchedPartition> full = leader.fetch(Map.of(tp, fetch));
                assertThat(full.get(tp).error()).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH);
                assertThat(full.get(tp).records().remaining()).isZero();
                Map<TopicPartition, LeaderEndpoint.FetchedPartition> next = leader.fetch(Map.of(tp, fetch));
                assertThat(next.get(tp).error()).isEqualTo(Errors.UNKNOWN_LEADER_EPOCH);
            }
        }
    }

    private static void produce(BrokerProcess broker, String topic) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            for (int i = 0; i < RECORDS; i++) {
                producer.send(new ProducerRecord<>(topic, 0, "k" + i, "v" + i));
            }
            producer.flush();
        }
    }
}
