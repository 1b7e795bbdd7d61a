package io.cairn.compat.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.KafkaReferenceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Two stock {@code KafkaShareConsumer}s of one share group read a topic together: every record is delivered once
 * and acknowledged (implicit acknowledgement, committed with {@code commitSync}).
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class ShareConsumerIT {

    private static final String TOPIC = "share-consumer-topic";

    /** A started single broker of {@code kind} with share groups enabled (the share tests' broker). */
    static BrokerProcess start(BrokerKind kind) {
        BrokerProcess broker = kind == BrokerKind.CAIRN
            ? CairnProcess.builder().config("group.share.enable", "true").build()
            : KafkaReferenceProcess.builder().config("group.share.enable", "true").build();
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    private static KafkaShareConsumer<String, String> consumer(BrokerProcess broker) {
        return new KafkaShareConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
            ConsumerConfig.GROUP_ID_CONFIG, "share-consumer-it",
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
    }

    @KafkaHalfInFaults
    void twoShareConsumersReadEveryRecordOnce(BrokerKind kind) throws Exception {
        try (BrokerProcess broker = start(kind)) {
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    broker.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaShareConsumer<String, String> one = consumer(broker);
                 KafkaShareConsumer<String, String> two = consumer(broker)) {
                one.subscribe(List.of(TOPIC));
                two.subscribe(List.of(TOPIC));
                // share.auto.offset.reset is latest: the share-partitions start where the log ends when the group
                // first subscribes, so the records are produced once the members joined
                long joinUntil = System.currentTimeMillis() + 15_000;
                while (System.currentTimeMillis() < joinUntil) {
                    one.poll(Duration.ofMillis(200));
                    two.poll(Duration.ofMillis(200));
                }
                try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                        ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
                        ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class))) {
                    for (int i = 0; i < 40; i++) {
                        producer.send(new ProducerRecord<>(TOPIC, i % 2, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
                    }
                }
                List<String> byOne = new ArrayList<>();
                List<String> byTwo = new ArrayList<>();
                long until = System.currentTimeMillis() + 90_000;
                while (byOne.size() + byTwo.size() < 40 && System.currentTimeMillis() < until) {
                    for (ConsumerRecord<String, String> r : one.poll(Duration.ofMillis(300))) {
                        byOne.add(r.value());
                    }
                    one.commitSync();
                    for (ConsumerRecord<String, String> r : two.poll(Duration.ofMillis(300))) {
                        byTwo.add(r.value());
                    }
                    two.commitSync();
                }
                System.out.println(kind + ": consumer one read " + byOne.size() + ", consumer two " + byTwo.size());
                List<String> all = new ArrayList<>(byOne);
                all.addAll(byTwo);
                List<String> expected = new ArrayList<>();
                for (int i = 0; i < 40; i++) {
                    expected.add("v" + i);
                }
                assertThat(all).containsExactlyInAnyOrderElementsOf(expected);
            }
        }
    }
}
