package io.cairn.compat.share;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.KafkaReferenceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Group-level share configs (Kafka 4.1's {@code GroupConfig}) set with {@code Admin.incrementalAlterConfigs} on GROUP
 * resources, as {@code kafka-configs --entity-type groups} sets them, and honoured by the share group:
 * {@code share.auto.offset.reset=earliest} starts a new share group at the log start (the default, latest, would
 * skip what was produced before), {@code share.isolation.level=read_committed} delivers only committed transactional
 * records; DescribeConfigs shows the group's value and the broker's defaults; a value out of the broker's range is
 * INVALID_CONFIG.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class ShareGroupConfigIT {

    private static final Map<BrokerKind, BrokerProcess> NODES = new EnumMap<>(BrokerKind.class);

    @AfterAll
    static void stopNodes() {
        NODES.values().forEach(BrokerProcess::close);
        NODES.clear();
    }

    private static synchronized BrokerProcess node(BrokerKind kind) {
        BrokerProcess started = NODES.get(kind);
        if (started != null) {
            return started;
        }
        BrokerProcess broker = kind == BrokerKind.CAIRN
            ? CairnProcess.builder().config("group.share.enable", "true").build()
            : KafkaReferenceProcess.builder().config("group.share.enable", "true").build();
        try {
            broker.start();
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
        NODES.put(kind, broker);
        return broker;
    }

    @KafkaHalfInFaults
    void earliestSetOnTheGroupStartsItAtTheLogStart(BrokerKind kind) throws Exception {
        // Given three records produced before the share group exists
        BrokerProcess broker = node(kind);
        String topic = "reset-earliest";
        String group = "earliest-group";
        try (Admin admin = admin(broker)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            try (KafkaProducer<String, String> producer = producer(broker, null)) {
                for (int i = 0; i < 3; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, "k" + i, "e" + i)).get(30, TimeUnit.SECONDS);
                }
            }

            // When share.auto.offset.reset=earliest is set on the group, and a lock duration above the broker's
            // maximum (60000) is refused
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            alter(admin, resource, "share.auto.offset.reset", "earliest");
            assertThatThrownBy(() -> alter(admin, resource, "share.record.lock.duration.ms", "70000"))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("share.record.lock.duration.ms must be less than or equal to"
                    + " group.share.max.record.lock.duration.ms");

            // Then DescribeConfigs shows the group's value and the broker's default lock duration
            Config described = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS)
                .get(resource);
            ConfigEntry reset = described.get("share.auto.offset.reset");
            assertThat(reset.value()).isEqualTo("earliest");
            assertThat(reset.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            ConfigEntry lock = described.get("share.record.lock.duration.ms");
            assertThat(lock.value()).isEqualTo("30000");
            assertThat(lock.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }

        // And a new member of the group reads the records from the log start, each delivered once
        List<ConsumerRecord<String, String>> read = readUntil(broker, group, topic, 3, Duration.ofSeconds(30));
        assertThat(read).extracting(ConsumerRecord::value).containsExactly("e0", "e1", "e2");
        assertThat(read).allSatisfy(r -> assertThat(r.deliveryCount()).contains((short) 1));
    }

    @KafkaHalfInFaults
    void aConsumerGroupsTimeoutsAreCheckedAgainstTheBrokersRangeAndDescribed(BrokerKind kind) throws Exception {
        // Given a group name and the broker's defaults (group.consumer.min.session.timeout.ms 45000, max 60000)
        BrokerProcess broker = node(kind);
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, "consumer-configs-group");
        try (Admin admin = admin(broker)) {
            // When consumer.heartbeat.interval.ms is set, and a session timeout below the broker's minimum is tried
            alter(admin, resource, "consumer.heartbeat.interval.ms", "7000");
            assertThatThrownBy(() -> alter(admin, resource, "consumer.session.timeout.ms", "30000"))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("consumer.session.timeout.ms must be greater than or equal to"
                    + " group.consumer.min.session.timeout.ms");

            // Then DescribeConfigs shows the group's interval and the broker's session timeout
            Config described = admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS)
                .get(resource);
            ConfigEntry interval = described.get("consumer.heartbeat.interval.ms");
            assertThat(interval.value()).isEqualTo("7000");
            assertThat(interval.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_GROUP_CONFIG);
            ConfigEntry session = described.get("consumer.session.timeout.ms");
            assertThat(session.value()).isEqualTo("45000");
            assertThat(session.source()).isEqualTo(ConfigEntry.ConfigSource.DEFAULT_CONFIG);
        }
    }

    @KafkaHalfInFaults
    void readCommittedGroupSkipsAbortedTransactionsAReadUncommittedGroupDoesNot(BrokerKind kind) throws Exception {
        // Given a committed, an aborted and another committed transaction, and a plain record
        BrokerProcess broker = node(kind);
        String topic = "txn-share";
        try (Admin admin = admin(broker)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
            try (KafkaProducer<String, String> producer = producer(broker, "share-txn")) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "c", "c0"));
                producer.send(new ProducerRecord<>(topic, 0, "c", "c1"));
                producer.commitTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "a", "a0"));
                producer.send(new ProducerRecord<>(topic, 0, "a", "a1"));
                producer.flush();
                producer.abortTransaction();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 0, "c", "c2"));
                producer.commitTransaction();
            }
            try (KafkaProducer<String, String> producer = producer(broker, null)) {
                producer.send(new ProducerRecord<>(topic, 0, "n", "n0")).get(30, TimeUnit.SECONDS);
            }

            // When one group reads them with share.isolation.level=read_committed, another with the default
            ConfigResource committed = new ConfigResource(ConfigResource.Type.GROUP, "committed-group");
            alter(admin, committed, "share.auto.offset.reset", "earliest");
            alter(admin, committed, "share.isolation.level", "read_committed");
            alter(admin, new ConfigResource(ConfigResource.Type.GROUP, "uncommitted-group"),
                "share.auto.offset.reset", "earliest");
        }
        List<ConsumerRecord<String, String>> readCommitted = readUntil(broker, "committed-group", topic, 4,
            Duration.ofSeconds(20));
        List<ConsumerRecord<String, String>> readUncommitted = readUntil(broker, "uncommitted-group", topic, 6,
            Duration.ofSeconds(20));

        // Then read_committed delivered the committed and plain records only, read_uncommitted all of them
        assertThat(readCommitted).extracting(ConsumerRecord::value).containsExactly("c0", "c1", "c2", "n0");
        assertThat(readUncommitted).extracting(ConsumerRecord::value)
            .containsExactly("c0", "c1", "a0", "a1", "c2", "n0");
    }

    private static void alter(Admin admin, ConfigResource resource, String key, String value) throws Exception {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(resource,
            List.of(new AlterConfigOp(new ConfigEntry(key, value), AlterConfigOp.OpType.SET)));
        admin.incrementalAlterConfigs(ops).all().get(30, TimeUnit.SECONDS);
    }

    /**
     * A new member of {@code group} reads until it has {@code count} records, then on for a second more (what it
     * should not get would come then); implicit acknowledgement.
     */
    private static List<ConsumerRecord<String, String>> readUntil(BrokerProcess broker, String group, String topic,
                                                                  int count, Duration timeout) {
        List<ConsumerRecord<String, String>> read = new ArrayList<>();
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ConsumerConfig.GROUP_ID_CONFIG, group,
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class))) {
            consumer.subscribe(List.of(topic));
            long until = System.currentTimeMillis() + timeout.toMillis();
            long extraUntil = Long.MAX_VALUE;
            while (System.currentTimeMillis() < Math.min(until, extraUntil)) {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
                if (read.size() >= count && extraUntil == Long.MAX_VALUE) {
                    extraUntil = System.currentTimeMillis() + 1_000;
                }
            }
            consumer.commitSync();
        }
        return read;
    }

    private static Admin admin(BrokerProcess broker) {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()));
    }

    private static KafkaProducer<String, String> producer(BrokerProcess broker, String transactionalId) {
        Map<String, Object> config = new java.util.HashMap<>(Map.of(
            ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
            ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
            ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
        if (transactionalId != null) {
            config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        return new KafkaProducer<>(config);
    }
}
