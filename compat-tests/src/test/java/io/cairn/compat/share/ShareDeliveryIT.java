package io.cairn.compat.share;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.KafkaReferenceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Redelivery as a user of stock {@code KafkaShareConsumer}s sees it, on one broker per kind with a short acquisition
 * lock ({@code group.share.record.lock.duration.ms=2000}, the minimum lock 1000) and the smallest delivery limit
 * Kafka allows ({@code group.share.delivery.count.limit=2}): records a member acquired and never acknowledged go to
 * another member once the lock expires, with delivery count 2 (the first member hangs, SIGSTOPped in a JVM of its own:
 * see {@link StalledShareMember}); records released each time they arrive are delivered
 * exactly twice and then archived; {@code kafka-console-share-consumer} reads what was produced.
 *
 * <p>Share groups start at the log end ({@code share.auto.offset.reset} latest), so each scenario first has its
 * group start on its topic: a member polls while warm-up records are produced until it receives one.
 */
@Timeout(180)
@ExtendWith(BrokerLogsExtension.class)
class ShareDeliveryIT {

    private static final int LOCK_MS = 2_000;
    private static final int DELIVERY_LIMIT = 2;
    private static final String CONSOLE_SHARE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleShareConsumer";
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
        Map<String, String> configs = Map.of("group.share.enable", "true",
            "group.share.min.record.lock.duration.ms", "1000",
            "group.share.record.lock.duration.ms", Integer.toString(LOCK_MS),
            "group.share.delivery.count.limit", Integer.toString(DELIVERY_LIMIT));
        BrokerProcess broker;
        if (kind == BrokerKind.CAIRN) {
            CairnProcess.Builder builder = CairnProcess.builder();
            configs.forEach(builder::config);
            broker = builder.build();
        } else {
            KafkaReferenceProcess.Builder builder = KafkaReferenceProcess.builder();
            configs.forEach(builder::config);
            broker = builder.build();
        }
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
    void recordsWhoseLockExpiresGoToAnotherMemberWithTheNextDeliveryCount(BrokerKind kind) throws Exception {
        // Given member A of a share group that started on the topic, in a JVM of its own, and the records it acquires
        BrokerProcess broker = node(kind);
        String topic = "lock-expiry";
        String group = "lock-expiry-group";
        createTopic(broker, topic);
        try (StalledShareMember a = StalledShareMember.start(broker.bootstrapServers(), group, topic, "r")) {
            long warmUntil = System.currentTimeMillis() + 30_000;
            for (int n = 0; a.output().lines().noneMatch(l -> l.startsWith("WARM "))
                    && System.currentTimeMillis() < warmUntil; n++) {
                send(broker, topic, "warm", "warm-" + n);
                Thread.sleep(500);
            }
            a.await("WARM ", Duration.ofSeconds(5));
            produce(broker, topic, "r", 5);
            Map<String, Short> acquired = a.awaitAcquired();
            long acquiredAt = System.currentTimeMillis();
            assertThat(acquired).isNotEmpty().allSatisfy((value, count) -> {
                assertThat(value).startsWith("r");
                assertThat(count).isEqualTo((short) 1);
            });

            // When A hangs (SIGSTOP) holding them unacknowledged, and member B joins the group
            a.pause();
            try (KafkaShareConsumer<String, String> b = consumer(broker, group, false)) {
                b.subscribe(List.of(topic));
                Map<String, Short> redelivered = new LinkedHashMap<>();
                long firstAt = 0;
                long until = System.currentTimeMillis() + 30_000;
                while (!redelivered.keySet().containsAll(acquired.keySet()) && System.currentTimeMillis() < until) {
                    for (ConsumerRecord<String, String> r : b.poll(Duration.ofMillis(200))) {
                        if (acquired.containsKey(r.value())) {
                            redelivered.put(r.value(), r.deliveryCount().orElseThrow());
                            firstAt = firstAt == 0 ? System.currentTimeMillis() : firstAt;
                        }
                    }
                }
                b.commitSync();

                // Then B receives each of them again once the lock expired, delivered for the second time
                System.out.println(kind + ": A acquired " + acquired.keySet() + ", B got them again "
                    + (firstAt - acquiredAt) + " ms later: " + redelivered);
                Map<String, Short> expected = new HashMap<>();
                acquired.keySet().forEach(v -> expected.put(v, (short) 2));
                assertThat(redelivered).isEqualTo(expected);
                // the lock runs from the broker's acquisition, a little before A printed them
                assertThat(firstAt - acquiredAt).isGreaterThanOrEqualTo(LOCK_MS / 2L);
            }
        }
    }

    @KafkaHalfInFaults
    void recordsReleasedEveryTimeAreDeliveredUpToTheLimitThenNeverAgain(BrokerKind kind) throws Exception {
        // Given a member acknowledging explicitly, in a share group that started on the topic
        BrokerProcess broker = node(kind);
        String topic = "delivery-limit";
        createTopic(broker, topic);
        try (KafkaShareConsumer<String, String> consumer = consumer(broker, "delivery-limit-group", true)) {
            consumer.subscribe(List.of(topic));
            warmUp(broker, consumer, topic, true);
            produce(broker, topic, "r", 3);

            // When it releases every record it receives, until a lock duration after the last delivery
            Map<String, List<Short>> deliveries = new LinkedHashMap<>();
            long quietUntil = System.currentTimeMillis() + 30_000;
            long until = System.currentTimeMillis() + 45_000;
            while (System.currentTimeMillis() < Math.min(quietUntil, until)) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    consumer.acknowledge(r, AcknowledgeType.RELEASE);
                    if (!r.value().startsWith("r")) {
                        continue;
                    }
                    deliveries.computeIfAbsent(r.value(), v -> new ArrayList<>())
                        .add(r.deliveryCount().orElseThrow());
                }
                consumer.commitSync();
                boolean allAtLimit = deliveries.size() == 3
                    && deliveries.values().stream().allMatch(d -> d.size() >= DELIVERY_LIMIT);
                if (allAtLimit && quietUntil - System.currentTimeMillis() > LOCK_MS + 1000L) {
                    quietUntil = System.currentTimeMillis() + LOCK_MS + 1000L;
                }
            }

            // Then each was delivered exactly the limit's number of times, with counts 1 and 2
            System.out.println(kind + ": deliveries " + deliveries);
            assertThat(deliveries).containsOnlyKeys("r0", "r1", "r2");
            assertThat(deliveries.values()).allSatisfy(d -> assertThat(d).containsExactly((short) 1, (short) 2));
        }
    }

    @KafkaHalfInFaults
    void consoleShareConsumerPrintsTheProducedRecords(BrokerKind kind) throws Exception {
        // Given a share group that started on the topic (a member joined, read a warm-up record and left)
        BrokerProcess broker = node(kind);
        String topic = "console-share";
        String group = "console-share-group";
        createTopic(broker, topic);
        try (KafkaShareConsumer<String, String> consumer = consumer(broker, group, false)) {
            consumer.subscribe(List.of(topic));
            warmUp(broker, consumer, topic, false);
        }
        produce(broker, topic, "m", 5);

        // When kafka-console-share-consumer reads five records of the group
        JavaTool.Result consumed = KafkaDistribution.tool(CONSOLE_SHARE_CONSUMER)
            .args("--bootstrap-server", broker.bootstrapServers(), "--topic", topic, "--group", group,
                "--max-messages", "5", "--timeout-ms", "30000", "--property", "print.key=true",
                "--property", "print.delivery=true")
            .timeout(Duration.ofSeconds(60)).build().run();

        // Then it printed each produced record once, delivered once, and exited
        assertThat(consumed.exitCode()).as("%s", consumed).isZero();
        assertThat(consumed.stdout().lines().toList()).as("%s", consumed).containsExactly(
            "Delivery:1\tk0\tm0", "Delivery:1\tk1\tm1", "Delivery:1\tk2\tm2",
            "Delivery:1\tk3\tm3", "Delivery:1\tk4\tm4");
        assertThat(consumed.stderr()).as("%s", consumed).contains("Processed a total of 5 messages");
    }

    private static void createTopic(BrokerProcess broker, String topic) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(30, TimeUnit.SECONDS);
        }
    }

    private static KafkaShareConsumer<String, String> consumer(BrokerProcess broker, String group, boolean explicit) {
        return new KafkaShareConsumer<>(Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
            ConsumerConfig.GROUP_ID_CONFIG, group,
            ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, explicit ? "explicit" : "implicit",
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class));
    }

    /**
     * Produces a warm-up record and polls until the consumer receives one (its group then has the share-partition
     * started, at most at that record), accepting whatever it receives until a poll returns nothing.
     */
    private static void warmUp(BrokerProcess broker, KafkaShareConsumer<String, String> consumer, String topic,
                               boolean explicit) throws Exception {
        long until = System.currentTimeMillis() + 30_000;
        int n = 0;
        while (System.currentTimeMillis() < until) {
            send(broker, topic, "warm", "warm-" + n++);
            for (int i = 0; i < 3; i++) {
                var records = consumer.poll(Duration.ofMillis(300));
                if (!records.isEmpty()) {
                    // accept it and every warm-up record still to come, until a poll returns nothing
                    while (!records.isEmpty()) {
                        if (explicit) {
                            records.forEach(r -> consumer.acknowledge(r, AcknowledgeType.ACCEPT));
                        }
                        consumer.commitSync();
                        records = consumer.poll(Duration.ofMillis(500));
                    }
                    return;
                }
            }
        }
        throw new AssertionError("the share consumer received no warm-up record of " + topic + " in 30 s");
    }

    private static void produce(BrokerProcess broker, String topic, String prefix, int count) throws Exception {
        try (KafkaProducer<String, String> producer = producer(broker)) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, "k" + i, prefix + i)));
            }
            for (var f : sent) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static void send(BrokerProcess broker, String topic, String key, String value) throws Exception {
        try (KafkaProducer<String, String> producer = producer(broker)) {
            producer.send(new ProducerRecord<>(topic, 0, key, value)).get(30, TimeUnit.SECONDS);
        }
    }

    private static KafkaProducer<String, String> producer(BrokerProcess broker) {
        return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
            ProducerConfig.LINGER_MS_CONFIG, 50,
            ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class,
            ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class));
    }
}
