package io.cairn.compat.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.testkit.BrokerCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A stock producer on a thread of its own writing numbered 1 KiB values round a topic's partitions until stopped
 * (with {@code acks=all} idempotent, with {@code acks=1} not), either as fast as it can or about a thousand a second;
 * every acknowledged value is kept by partition and offset, and {@link #assertEveryAckedRecordReadOnceInOrder} reads
 * them back. For the fault scenarios where a node runs out of disk or falls behind.
 */
final class AckedWriter implements AutoCloseable {

    private static final int VALUE_BYTES = 1024;

    private final KafkaProducer<String, String> producer;
    private final Map<TopicPartition, ConcurrentSkipListMap<Long, String>> acked = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    /** The numbers of the values acknowledged: a lost record's offset may be acknowledged again with another. */
    private final Set<Integer> ackedSequences = ConcurrentHashMap.newKeySet();
    private final AtomicLong slowestAckMillis = new AtomicLong();
    private final Thread thread;

    /** Starts writing to partitions {@code 0..partitions-1} of {@code topic}; {@code paced}: ~1,000 a second. */
    AckedWriter(BrokerCluster cluster, String topic, int partitions, String acks, boolean paced) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, acks);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "all".equals(acks));
        props.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        this.producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
        for (int p = 0; p < partitions; p++) {
            acked.put(new TopicPartition(topic, p), new ConcurrentSkipListMap<>());
        }
        this.thread = new Thread(() -> {
            for (int i = 0; running.get(); i++) {
                if (paced && i % 10 == 0 && !pause()) {
                    return;
                }
                String head = String.format("acks-%s-%09d-", acks, i);
                String value = head + "x".repeat(VALUE_BYTES - head.length());
                TopicPartition tp = new TopicPartition(topic, i % partitions);
                int sequence = i;
                long sentAt = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, tp.partition(), null, value), (metadata, error) -> {
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    } else {
                        acked.get(tp).put(metadata.offset(), value);
                        ackedSequences.add(sequence);
                        slowestAckMillis.accumulateAndGet(
                                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sentAt), Math::max);
                    }
                });
            }
        }, "acked-writer-acks-" + acks);
        thread.start();
    }

    private static boolean pause() {
        try {
            Thread.sleep(10);
            return true;
        } catch (InterruptedException e) {
            return false;
        }
    }

    /** What was acknowledged so far, by partition and offset. */
    Map<TopicPartition, ConcurrentSkipListMap<Long, String>> acked() {
        return acked;
    }

    /** The numbers of every value acknowledged so far (the value's digits after {@code acks-all-}). */
    Set<Integer> ackedSequences() {
        return ackedSequences;
    }

    int ackedCount() {
        return acked.values().stream().mapToInt(Map::size).sum();
    }

    /** The longest time a record waited for its acknowledgement so far. */
    long slowestAckMillis() {
        return slowestAckMillis.get();
    }

    /** Stops writing, waits for what is in flight, and fails if any send failed. */
    void stopAndCheck() throws Exception {
        stop();
        assertThat(failure.get()).as("a send failed").isNull();
    }

    /** Stops writing and waits for what is in flight. */
    void stop() throws InterruptedException {
        running.set(false);
        thread.join(TimeUnit.SECONDS.toMillis(60));
        producer.flush();
    }

    /** The first send that failed, or null. */
    Exception failure() {
        return failure.get();
    }

    @Override
    public void close() {
        running.set(false);
        producer.close(Duration.ofSeconds(30));
    }

    /**
     * Reads {@code acked}'s partitions from the beginning to their end offsets now: offsets only ever grow within a
     * partition, no value is read twice, and every acknowledged value is at its offset.
     */
    static void assertEveryAckedRecordReadOnceInOrder(BrokerCluster cluster,
                                                      Map<TopicPartition, ConcurrentSkipListMap<Long, String>> acked) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
        Map<TopicPartition, ConcurrentSkipListMap<Long, String>> read = new HashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(),
                new StringDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>(acked.keySet());
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(30));
            partitions.forEach(tp -> read.put(tp, new ConcurrentSkipListMap<>()));
            await().atMost(Duration.ofSeconds(120)).pollInSameThread().pollDelay(Duration.ZERO).until(() -> {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200))) {
                    TopicPartition tp = new TopicPartition(record.topic(), record.partition());
                    ConcurrentSkipListMap<Long, String> byOffset = read.get(tp);
                    assertThat(byOffset.isEmpty() || record.offset() > byOffset.lastKey())
                            .as("%s offset %d in order", tp, record.offset()).isTrue();
                    byOffset.put(record.offset(), record.value());
                }
                return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            });
        }
        Set<String> values = new HashSet<>();
        read.values().forEach(byOffset -> byOffset.values().forEach(value -> assertThat(values.add(value))
                .as("value read twice: %s", value.substring(0, 20)).isTrue()));
        acked.forEach((tp, byOffset) -> byOffset.forEach((offset, value) -> assertThat(read.get(tp).get(offset))
                .as("%s offset %d", tp, offset).isEqualTo(value)));
    }
}
