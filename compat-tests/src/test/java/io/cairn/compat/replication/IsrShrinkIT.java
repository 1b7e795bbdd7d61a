package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.NotEnoughReplicasException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The leader's ISR expiration end to end, on a three-node Cairn cluster whose followers do not fetch (nothing
 * replicates yet on this branch): after {@code replica.lag.time.max.ms} the leader shrinks the ISR of a topic with
 * three replicas to itself through AlterPartition, the controller commits it, Admin and {@code kafka-topics
 * --describe} show the shrunk ISR, and with {@code min.insync.replicas=2} an acks=all produce is refused with
 * NOT_ENOUGH_REPLICAS while acks=1 is still accepted. Cairn only: the reference Kafka's followers do fetch.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class IsrShrinkIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    @Test
    void followersThatNeverFetchLeaveTheIsrAndAcksAllIsThenRefused() throws Exception {
        // Given
        try (BrokerCluster cluster = BrokerCluster.create(BrokerKind.CAIRN, 3,
                Map.of("replica.lag.time.max.ms", "3000"))) {
            cluster.start();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic("isr-shrink", 1, (short) 3)
                        .configs(Map.of("min.insync.replicas", "2")))).all().get(60, TimeUnit.SECONDS);

                // When the lag time passes without follower fetches
                TopicPartitionInfo shrunk = await().atMost(TIMEOUT).until(() -> partition(admin),
                        p -> p.isr().size() == 1);

                // Then
                Node leader = shrunk.leader();
                assertThat(shrunk.isr()).containsExactly(leader);
                assertThat(shrunk.replicas()).hasSize(3);
                BrokerProcess leaderNode = cluster.node(leader.id());
                assertThat(leaderNode.logLinesContaining("Shrinking ISR from")).isNotEmpty();
                assertThat(leaderNode.logLinesContaining("ISR updated to " + leader.id() + " (under-min-isr)"))
                        .isNotEmpty();
                try (KafkaProducer<String, String> acksAll = producer(cluster, "all");
                     KafkaProducer<String, String> acksOne = producer(cluster, "1")) {
                    assertThatThrownBy(() -> acksAll.send(new ProducerRecord<>("isr-shrink", "k", "v"))
                            .get(60, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                            .hasCauseInstanceOf(NotEnoughReplicasException.class);
                    assertThat(acksOne.send(new ProducerRecord<>("isr-shrink", "k", "v")).get(60, TimeUnit.SECONDS)
                            .offset()).isZero();
                }
                JavaTool.Result described = KafkaDistribution.tool("org.apache.kafka.tools.TopicCommand")
                        .args(List.of("--bootstrap-server", cluster.bootstrapServers(), "--describe", "--topic",
                                "isr-shrink")).timeout(Duration.ofSeconds(90)).build().run();
                assertThat(described.exitCode()).as("%s", described).isZero();
                assertThat(described.stdout()).as("%s", described)
                        .containsPattern("Partition: 0\tLeader: " + leader.id() + "\tReplicas: [0-9,]+\tIsr: "
                                + leader.id() + "(\t|\n|$)");
            }
        }
    }

    private static TopicPartitionInfo partition(Admin admin) throws Exception {
        TopicDescription description = admin.describeTopics(List.of("isr-shrink")).allTopicNames()
                .get(30, TimeUnit.SECONDS).get("isr-shrink");
        return description.partitions().get(0);
    }

    private static KafkaProducer<String, String> producer(BrokerCluster cluster, String acks) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, acks);
        props.put(ProducerConfig.RETRIES_CONFIG, 0);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(props);
    }
}
