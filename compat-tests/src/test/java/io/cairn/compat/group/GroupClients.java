package io.cairn.compat.group;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.awaitility.core.ThrowingRunnable;

/**
 * The clients the consumer-group scenarios share: the broker kinds to run against, an Admin, topic creation, a
 * producer of numbered records, group consumers (classic protocol) and a loop that polls several consumers from the
 * test thread until an assertion holds (a classic consumer only joins, syncs and rebalances inside {@code poll}).
 *
 * <p>Stateless; every method may be called from any thread, but a consumer it polls must only be used by the
 * calling thread.
 */
public final class GroupClients {

    static final long TIMEOUT_S = 30;
    static final Duration TIMEOUT = Duration.ofSeconds(TIMEOUT_S);
    /**
     * The consumers' {@code heartbeat.interval.ms} (Kafka's default 3000): a member learns of a rebalance that another
     * member's join or leave started from its next heartbeat's answer, so each rebalance of a scenario waited up to 3 s
     * for it; what the scenarios check does not depend on when it learns.
     */
    static final int HEARTBEAT_INTERVAL_MS = 500;
    /** How long one consumer's poll in {@link #pollUntil} may block before the next consumer is polled. */
    static final Duration POLL = Duration.ofMillis(100);

    /**
     * System property restricting the broker kinds, e.g. {@code KAFKA} while writing a scenario against the
     * reference; every kind by default (the same property the data-path scenarios read).
     */
    static final String KINDS_PROPERTY = "cairn.compat.kinds";

    private GroupClients() {
    }

    /** The broker kinds to run against: every {@link BrokerKind}, or those named by {@value #KINDS_PROPERTY}. */
    public static Stream<BrokerKind> kinds() {
        String names = System.getProperty(KINDS_PROPERTY, "");
        if (names.isBlank()) {
            return Arrays.stream(BrokerKind.values());
        }
        return Arrays.stream(names.split(",")).map(String::trim).map(BrokerKind::valueOf);
    }

    /** A topic or group name no other scenario uses. */
    public static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    public static Admin admin(BrokerProcess broker) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 30_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 60_000);
        return Admin.create(props);
    }

    /**
     * Creates a topic with a unique name starting with {@code prefix}, replication factor 1, and returns its name once
     * every partition answers ListOffsets on its leader. Kafka publishes a new topic in its metadata a moment before
     * the partitions exist on the broker; an idempotent producer whose first batch meets that gap gets
     * NOT_LEADER_OR_FOLLOWER for it while a later in-flight batch is accepted, and then retries the first one with
     * OUT_OF_ORDER_SEQUENCE_NUMBER until its delivery timeout (seen against Kafka 4.1.1). Waiting here keeps the
     * scenarios about what they test.
     */
    public static String createTopic(BrokerProcess broker, String prefix, int partitions) {
        String topic = uniqueName(prefix);
        try (Admin admin = admin(broker)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all()
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            partitions(topic, partitions).forEach(partition -> latest.put(partition, OffsetSpec.latest()));
            awaitListOffsets(admin, latest);
        } catch (Exception e) {
            throw new AssertionError("Could not create " + topic + " on " + broker.bootstrapServers() + ": " + e, e);
        }
        return topic;
    }

    /**
     * ListOffsets for {@code latest} until it answers: the admin client looks the topic up in its own metadata first,
     * and a broker may not publish a topic just created to that lookup at once (Kafka under load answers it with
     * UNKNOWN_TOPIC_OR_PARTITION for a moment, which the admin client does not retry).
     */
    private static void awaitListOffsets(Admin admin, Map<TopicPartition, OffsetSpec> latest) {
        await("ListOffsets of " + latest.keySet()).atMost(Duration.ofSeconds(TIMEOUT_S))
                .pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsMatching(e -> e instanceof ExecutionException
                        && e.getCause() instanceof UnknownTopicOrPartitionException)
                .until(() -> admin.listOffsets(latest).all().get(TIMEOUT_S, TimeUnit.SECONDS) != null);
    }

    /** The topic's partitions {@code 0..partitions-1}. */
    static List<TopicPartition> partitions(String topic, int partitions) {
        List<TopicPartition> result = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            result.add(new TopicPartition(topic, p));
        }
        return result;
    }

    /** The value of record number {@code i}. */
    public static String value(int i) {
        return "record-" + i;
    }

    /**
     * Sends records {@code 0..count-1} to {@code topic}, record {@code i} (value {@link #value}) to partition
     * {@code i % partitions}, with a default (idempotent, acks=all) producer, and asserts each is acknowledged.
     */
    public static void produce(BrokerProcess broker, String topic, int partitions, int count) {
        produce(broker, topic, partitions, 0, count);
    }

    /** As {@link #produce(BrokerProcess, String, int, int)}, records {@code from..from+count-1}. */
    public static void produce(BrokerProcess broker, String topic, int partitions, int from, int count) {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        List<String> errors = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(),
                new StringSerializer())) {
            for (int i = from; i < from + count; i++) {
                String value = value(i);
                producer.send(new ProducerRecord<>(topic, i % partitions, null, value), (metadata, error) -> {
                    if (error != null) {
                        synchronized (errors) {
                            errors.add(value + ": " + error);
                        }
                    }
                });
            }
            producer.flush();
        }
        synchronized (errors) {
            assertThat(errors).as("failed sends to %s", topic).isEmpty();
        }
    }

    /** The values {@link #produce} sent to {@code partition}, in order. */
    static List<String> expectedValues(int partition, int partitions, int count) {
        List<String> values = new ArrayList<>();
        for (int i = partition; i < count; i += partitions) {
            values.add(value(i));
        }
        return values;
    }

    /**
     * A string consumer in {@code group} (classic protocol, Kafka's default), auto-commit off, reading from the
     * earliest offset when the group has no committed offset, heartbeating every {@link #HEARTBEAT_INTERVAL_MS} ms,
     * with {@code overrides}.
     */
    public static KafkaConsumer<String, String> consumer(BrokerProcess broker, String group,
            Map<String, Object> overrides) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, HEARTBEAT_INTERVAL_MS);
        props.putAll(overrides);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /**
     * Polls every consumer in turn (each for up to {@link #POLL}), handing each poll's records to {@code sink},
     * until {@code assertion} holds; fails with the assertion's last error after {@code atMost}.
     */
    static void pollUntil(List<KafkaConsumer<String, String>> consumers, Duration atMost, RecordSink sink,
            ThrowingRunnable assertion) {
        await().atMost(atMost).pollInSameThread().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1))
                .untilAsserted(() -> {
                    for (KafkaConsumer<String, String> consumer : consumers) {
                        sink.accept(consumer, consumer.poll(POLL));
                    }
                    assertion.run();
                });
    }

    /** {@link #pollUntil} for consumers whose records the scenario does not look at. */
    public static void pollUntil(List<KafkaConsumer<String, String>> consumers, ThrowingRunnable assertion) {
        pollUntil(consumers, Duration.ofSeconds(60), (consumer, records) -> { }, assertion);
    }

    /** Adds every record of {@code records} to its partition's list in {@code read}, in the order polled. */
    static void collect(ConsumerRecords<String, String> records,
            Map<TopicPartition, List<ConsumerRecord<String, String>>> read) {
        for (ConsumerRecord<String, String> record : records) {
            read.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), tp -> new ArrayList<>())
                    .add(record);
        }
    }

    /** What a scenario does with the records of one poll of one consumer. */
    @FunctionalInterface
    interface RecordSink {
        void accept(KafkaConsumer<String, String> consumer, ConsumerRecords<String, String> records);
    }
}
