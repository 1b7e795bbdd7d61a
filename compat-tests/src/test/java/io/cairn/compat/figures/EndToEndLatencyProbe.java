package io.cairn.compat.figures;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * End-to-end latency at a fixed load, for {@code bin/cairn-perf --e2e RATE}: a stock producer sends records at
 * {@code RATE} records/s to an existing topic and a stock consumer, assigned to every partition of it, reads them
 * back; a record's latency is the time from when it was due to be sent to when the consumer's poll returned it. Kafka's
 * own {@code kafka-e2e-latency} sends one record at a time and waits for it (a latency at no load, in whole
 * milliseconds); {@code kafka-producer-perf-test} unthrottled times the producer's queue. This measures what a
 * consumer of a busy topic sees: the produce path, the leader's high watermark (the followers' fetches with
 * {@code acks=all} or replication), and the wake-up of the consumer's waiting fetch.
 *
 * <p>Each record carries the {@link System#nanoTime()} at which it was due (the schedule, not the send: a stall
 * delays the records behind it and is counted against them, so the figures do not hide it) and whether it is
 * measured. The first {@code --warmup-seconds} at the same rate are not measured: the clients' JIT, connections and
 * the brokers' first fetches of the topic. Producer: {@code linger.ms=0} (send when due), the given {@code acks},
 * otherwise Kafka's defaults; consumer: Kafka's defaults ({@code fetch.max.wait.ms=500}, so a record waits for the
 * broker to complete the waiting fetch, not for the next poll).
 *
 * <p>Arguments: {@code --bootstrap-server HOSTS --topic T --rate R [--seconds S] [--warmup-seconds W]
 * [--record-size B] [--acks A] [--client-config FILE]}. Prints {@code key=value} lines: {@code e2e_p50_ms},
 * {@code e2e_p99_ms}, {@code e2e_p999_ms}, {@code e2e_max_ms}, {@code e2e_ack_p99_ms} (send to the producer's
 * acknowledgement), {@code e2e_rate} and {@code e2e_records}. Exits 1, saying why, when a send fails or a measured
 * record does not arrive within 60 s of the last send.
 */
public final class EndToEndLatencyProbe {

    private static final int HEADER_BYTES = Long.BYTES + 1;
    private static final byte WARMUP = 0;
    private static final byte MEASURED = 1;
    /** Bounds the two latency arrays (8 bytes per measured record each). */
    private static final long MAX_MEASURED = 20_000_000L;

    private EndToEndLatencyProbe() {
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String topic = null;
        int rate = 0;
        int seconds = 20;
        int warmupSeconds = 10;
        int recordSize = 100;
        String acks = "1";
        Path clientConfig = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--bootstrap-server" -> bootstrap = args[++i];
                case "--topic" -> topic = args[++i];
                case "--rate" -> rate = Integer.parseInt(args[++i]);
                case "--seconds" -> seconds = Integer.parseInt(args[++i]);
                case "--warmup-seconds" -> warmupSeconds = Integer.parseInt(args[++i]);
                case "--record-size" -> recordSize = Integer.parseInt(args[++i]);
                case "--acks" -> acks = args[++i];
                case "--client-config" -> clientConfig = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("Unknown option " + args[i]);
            }
        }
        if (bootstrap == null || topic == null || rate <= 0 || seconds <= 0 || warmupSeconds < 0) {
            throw new IllegalArgumentException("usage: --bootstrap-server HOSTS --topic T --rate R [--seconds S] "
                    + "[--warmup-seconds W] [--record-size B] [--acks A] [--client-config FILE]");
        }
        long measured = (long) rate * seconds;
        if (measured > MAX_MEASURED) {
            throw new IllegalArgumentException("--rate times --seconds is over " + MAX_MEASURED + " records");
        }
        Properties common = new Properties();
        if (clientConfig != null) {
            try (InputStream in = Files.newInputStream(clientConfig)) {
                common.load(in);
            }
        }
        common.put("bootstrap.servers", bootstrap);
        System.exit(run(common, topic, rate, warmupSeconds, (int) measured, Math.max(recordSize, HEADER_BYTES), acks));
    }

    private static int run(Properties common, String topic, int rate, int warmupSeconds, int measured,
                           int recordSize, String acks) throws InterruptedException, IOException {
        long[] endToEnd = new long[measured];
        long[] acked = new long[measured];
        AtomicInteger received = new AtomicInteger();
        AtomicInteger ackedCount = new AtomicInteger();
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps(common));
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(common, acks))) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map(p -> new TopicPartition(p.topic(), p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToEnd(partitions);
            partitions.forEach(consumer::position);
            Thread reader = new Thread(() -> {
                try {
                    while (received.get() < measured && !Thread.currentThread().isInterrupted()) {
                        for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(100))) {
                            long now = System.nanoTime();
                            ByteBuffer value = ByteBuffer.wrap(record.value());
                            long due = value.getLong();
                            if (value.get() == MEASURED) {
                                int n = received.getAndIncrement();
                                if (n < measured) {
                                    endToEnd[n] = now - due;
                                }
                            }
                        }
                    }
                } catch (org.apache.kafka.common.errors.InterruptException e) {
                    // Stopped by the main thread after a timeout.
                } catch (Exception e) {
                    failure.compareAndSet(null, e);
                }
            }, "e2e-consumer");
            reader.start();

            long warmup = (long) rate * warmupSeconds;
            long total = warmup + measured;
            double intervalNanos = 1e9 / rate;
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
            byte[] padding = new byte[recordSize - HEADER_BYTES];
            for (long i = 0; i < total && failure.get() == null; i++) {
                long due = start + (long) (i * intervalNanos);
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                boolean isMeasured = i >= warmup;
                ByteBuffer value = ByteBuffer.allocate(recordSize);
                value.putLong(due).put(isMeasured ? MEASURED : WARMUP).put(padding);
                producer.send(new ProducerRecord<>(topic, value.array()), (metadata, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    } else if (isMeasured) {
                        int n = ackedCount.getAndIncrement();
                        if (n < measured) {
                            acked[n] = System.nanoTime() - due;
                        }
                    }
                });
            }
            producer.flush();
            reader.join(TimeUnit.SECONDS.toMillis(60));
            if (reader.isAlive()) {
                reader.interrupt();
                reader.join(TimeUnit.SECONDS.toMillis(10));
            }
            if (failure.get() != null) {
                System.err.println("The end-to-end probe failed: " + failure.get());
                return 1;
            }
            if (received.get() < measured) {
                System.err.println("The end-to-end probe read " + received.get() + " of " + measured
                        + " measured records within 60 s of the last send");
                return 1;
            }
        }
        Arrays.sort(endToEnd);
        Arrays.sort(acked);
        System.out.println("e2e_rate=" + rate);
        System.out.println("e2e_records=" + measured);
        System.out.println("e2e_p50_ms=" + millis(percentile(endToEnd, 0.50)));
        System.out.println("e2e_p99_ms=" + millis(percentile(endToEnd, 0.99)));
        System.out.println("e2e_p999_ms=" + millis(percentile(endToEnd, 0.999)));
        System.out.println("e2e_max_ms=" + millis(endToEnd[endToEnd.length - 1]));
        System.out.println("e2e_ack_p99_ms=" + millis(percentile(acked, 0.99)));
        return 0;
    }

    /** The value at or below which the fraction {@code p} of the sorted values lie (nearest rank). */
    static long percentile(long[] sorted, double p) {
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static String millis(long nanos) {
        return String.format(Locale.ROOT, "%.3f", nanos / 1e6);
    }

    private static Properties producerProps(Properties common, String acks) {
        Properties props = new Properties();
        props.putAll(common);
        props.put(ProducerConfig.ACKS_CONFIG, acks);
        props.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return props;
    }

    private static Properties consumerProps(Properties common) {
        Properties props = new Properties();
        props.putAll(common);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return props;
    }
}
