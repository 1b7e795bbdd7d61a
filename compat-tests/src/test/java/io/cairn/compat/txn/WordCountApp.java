package io.cairn.compat.txn;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * The Kafka Streams word count {@link StreamsExactlyOnceIT} runs: lines in, {@code word → count} out, with
 * {@code exactly_once_v2}, a persistent (RocksDB) count store with its changelog, and a repartition topic (the
 * {@code groupBy} on the word). The record cache is off, so every word read produces one output record carrying
 * that word's new count: a read_committed reader of the output sees, per word, exactly 1, 2, ..., n.
 *
 * <p>{@link #main} runs one instance in its own JVM until it is killed (the test's hard stop); it prints
 * {@code STATE <state>} on each state change. Stateless helpers; thread-safe.
 */
final class WordCountApp {

    static final String STORE = "counts";
    static final String REPARTITION = "words";

    private WordCountApp() {
    }

    /** The topology: split lines into words, re-key by word (repartition), count into {@value #STORE}. */
    static Topology topology(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        builder.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
                .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split(" ")))
                .groupBy((key, word) -> word, Grouped.with(REPARTITION, Serdes.String(), Serdes.String()))
                .count(Materialized.as(STORE))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    /**
     * The instance settings: exactly_once_v2, no record cache, one stream thread, a short session timeout so a
     * killed instance leaves the group within seconds, and a state directory of its own.
     */
    static Properties config(String bootstrapServers, String applicationId, String stateDir) {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6_000);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1_000);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_POLL_RECORDS_CONFIG), 100);
        return props;
    }

    /** Args: bootstrap servers, application id, state dir, input topic, output topic. Runs until killed. */
    public static void main(String[] args) throws InterruptedException {
        KafkaStreams streams = new KafkaStreams(topology(args[3], args[4]), config(args[0], args[1], args[2]));
        CountDownLatch failed = new CountDownLatch(1);
        streams.setStateListener((next, previous) -> {
            System.out.println("STATE " + next);
            System.out.flush();
            if (next == KafkaStreams.State.ERROR) {
                failed.countDown();
            }
        });
        streams.start();
        failed.await();
        streams.close(Duration.ofSeconds(10));
        System.exit(1);
    }
}
