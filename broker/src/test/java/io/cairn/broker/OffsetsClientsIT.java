package io.cairn.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.testkit.LeakDetection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * ListOffsets, OffsetForLeaderEpoch and InitProducerId as kafka-clients use them, against an in-process broker:
 * an idempotent producer (the default) writes records with chosen timestamps, the admin client lists offsets by
 * spec, and a consumer asks for beginning, end and by-timestamp offsets, resets, and validates a position.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OffsetsClientsIT {

    private static final String TOPIC = "offsets-it";
    private static final TopicPartition P0 = new TopicPartition(TOPIC, 0);
    private static final TopicPartition P1 = new TopicPartition(TOPIC, 1);
    /** Record timestamps an hour back (recent enough for no time-based roll or retention). */
    private static final long T0 = System.currentTimeMillis() - 3_600_000L;
    /** Offsets 0..4 of partition 0 get these timestamps; offset 2 has the largest. */
    private static final long[] TIMESTAMPS = {T0, T0 + 10, T0 + 50, T0 + 20, T0 + 30};

    @TempDir
    static Path dataDir;
    private static LogCapture logs;
    private static InProcessBroker broker;
    private static Admin admin;
    private static List<RecordMetadata> written;

    @BeforeAll
    static void startBrokerAndWrite() throws Exception {
        logs = LogCapture.start();
        broker = InProcessBroker.start(dataDir, Map.of());
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap()));
        admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short) 1))).all().get(30, TimeUnit.SECONDS);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            List<RecordMetadata> acked = new ArrayList<>();
            for (int i = 0; i < TIMESTAMPS.length; i++) {
                acked.add(producer.send(new ProducerRecord<>(TOPIC, 0, TIMESTAMPS[i], "k" + i, "v" + i))
                        .get(30, TimeUnit.SECONDS));
            }
            written = acked;
        }
    }

    @AfterAll
    static void stopBroker() {
        if (admin != null) {
            admin.close();
        }
        if (broker != null) {
            broker.close();
        }
        if (logs != null) {
            logs.close();
        }
    }

    private static String bootstrap() {
        return "127.0.0.1:" + broker.port();
    }

    private static ListOffsetsResultInfo list(TopicPartition tp, OffsetSpec spec) throws Exception {
        return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get(30, TimeUnit.SECONDS);
    }

    private static KafkaConsumer<String, String> consumer(String reset) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, reset);
        return new KafkaConsumer<>(props);
    }

    @Test
    void anIdempotentProducerGetsAProducerIdAndWritesInOrder() {
        // Then: the default producer is idempotent, so every send above went through InitProducerId first
        assertThat(written).extracting(RecordMetadata::offset).containsExactly(0L, 1L, 2L, 3L, 4L);
        assertThat(written).extracting(RecordMetadata::timestamp).containsExactly(TIMESTAMPS[0], TIMESTAMPS[1],
                TIMESTAMPS[2], TIMESTAMPS[3], TIMESTAMPS[4]);
        assertThat(logs.messages(Level.ERROR, m -> true)).isEmpty();
    }

    @Test
    void adminListsEarliestLatestMaxTimestampAndByTimestamp() throws Exception {
        // When
        ListOffsetsResultInfo earliest = list(P0, OffsetSpec.earliest());
        ListOffsetsResultInfo latest = list(P0, OffsetSpec.latest());
        ListOffsetsResultInfo max = list(P0, OffsetSpec.maxTimestamp());
        ListOffsetsResultInfo byTime = list(P0, OffsetSpec.forTimestamp(T0 + 15));
        ListOffsetsResultInfo afterAll = list(P0, OffsetSpec.forTimestamp(T0 + 51));
        ListOffsetsResultInfo earliestLocal = list(P0, OffsetSpec.earliestLocal());
        ListOffsetsResultInfo emptyLatest = list(P1, OffsetSpec.latest());

        // Then
        assertThat(earliest.offset()).isZero();
        assertThat(latest.offset()).isEqualTo(5L);
        assertThat(latest.leaderEpoch()).isPresent();
        assertThat(max.offset()).isEqualTo(2L);
        assertThat(max.timestamp()).isEqualTo(T0 + 50);
        assertThat(byTime.offset()).isEqualTo(2L);
        assertThat(byTime.timestamp()).isEqualTo(T0 + 50);
        assertThat(afterAll.offset()).isEqualTo(-1L);
        assertThat(earliestLocal.offset()).isZero();
        assertThat(emptyLatest.offset()).isZero();
    }

    @Test
    void consumerAsksForBeginningEndAndByTimestampOffsets() {
        try (KafkaConsumer<String, String> consumer = consumer("earliest")) {
            // When
            Map<TopicPartition, Long> beginning = consumer.beginningOffsets(List.of(P0, P1));
            Map<TopicPartition, Long> end = consumer.endOffsets(List.of(P0, P1));
            Map<TopicPartition, OffsetAndTimestamp> byTime = consumer.offsetsForTimes(Map.of(P0, T0 + 25,
                    P1, T0));

            // Then
            assertThat(beginning).containsEntry(P0, 0L).containsEntry(P1, 0L);
            assertThat(end).containsEntry(P0, 5L).containsEntry(P1, 0L);
            assertThat(byTime.get(P0).offset()).isEqualTo(2L);
            assertThat(byTime.get(P0).timestamp()).isEqualTo(T0 + 50);
            assertThat(byTime.get(P1)).isNull();
        }
    }

    @Test
    void consumerResetsAndSeeksWithListOffsets() {
        try (KafkaConsumer<String, String> latest = consumer("latest");
             KafkaConsumer<String, String> earliest = consumer("earliest")) {
            // Given
            latest.assign(List.of(P0));
            earliest.assign(List.of(P0));

            // When / Then: auto.offset.reset and seekToEnd/seekToBeginning use ListOffsets
            assertThat(latest.position(P0, Duration.ofSeconds(30))).isEqualTo(5L);
            assertThat(earliest.position(P0, Duration.ofSeconds(30))).isZero();
            earliest.seekToEnd(List.of(P0));
            assertThat(earliest.position(P0, Duration.ofSeconds(30))).isEqualTo(5L);
            latest.seekToBeginning(List.of(P0));
            assertThat(latest.position(P0, Duration.ofSeconds(30))).isZero();
        }
    }

    @Test
    void consumerValidatesAPositionWithOffsetForLeaderEpoch() throws Exception {
        try (KafkaConsumer<String, String> consumer = consumer("earliest")) {
            // Given: the records were written in the current leader epoch, and the consumer knows the leader's
            // epoch from Metadata (without it the client skips validation)
            consumer.assign(List.of(P0));
            int epoch = list(P0, OffsetSpec.latest()).leaderEpoch().orElseThrow();
            assertThat(consumer.position(P0, Duration.ofSeconds(30))).isZero();

            // When: a position inside the log in epoch 0 is valid; one beyond the end of epoch 0 was truncated
            consumer.seek(P0, new OffsetAndMetadata(3L, Optional.of(epoch), ""));
            long valid = consumer.position(P0, Duration.ofSeconds(30));
            consumer.seek(P0, new OffsetAndMetadata(9L, Optional.of(epoch), ""));
            long truncated = consumer.position(P0, Duration.ofSeconds(30));

            // Then
            assertThat(valid).isEqualTo(3L);
            assertThat(truncated).isEqualTo(5L);
        }
    }
}
