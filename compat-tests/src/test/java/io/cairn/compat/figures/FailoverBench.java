package io.cairn.compat.figures;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The leader failover figure of {@code bin/cairn-failover}: a 3-node cluster ({@link BrokerCluster}, Cairn or the
 * reference Kafka), a topic at replication factor 3 with {@code min.insync.replicas=2}, and a stock producer
 * (acks=all, idempotent, client defaults otherwise) sending to partition 0 continuously at a fixed rate. Each sample
 * kills the leader of partition 0 (SIGKILL) and measures the time from the kill to the acknowledgement of the first
 * record <em>sent after</em> the kill (so the time a client sees partition 0 unwritable, metadata refresh and retry
 * backoff included); then the node is started again and the sample ends when every partition's ISR is full.
 * Prints every sample, the median and p99 (nearest rank).
 *
 * <p>Arguments: {@code [--kafka] [--samples N] [--rate records/s] [--config key=value]...}. Runs on the thread of
 * {@code main}; the producer's callbacks run on its I/O thread and only append to thread-safe collections.
 */
public final class FailoverBench {

    private static final Duration STATE_TIMEOUT = Duration.ofSeconds(180);
    private static final int PARTITIONS = 3;

    private final BrokerCluster cluster;
    private final int rate;
    private final ConcurrentLinkedQueue<long[]> acks = new ConcurrentLinkedQueue<>();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicReference<Throwable> lastError = new AtomicReference<>();
    private volatile boolean producing = true;

    private FailoverBench(BrokerCluster cluster, int rate) {
        this.cluster = cluster;
        this.rate = rate;
    }

    public static void main(String[] args) throws Exception {
        Options options = Options.parse(args);
        try (BrokerCluster cluster = BrokerCluster.create(options.kind, 3, options.config)) {
            cluster.start();
            new FailoverBench(cluster, options.rate).run(options.samples);
        }
    }

    private void run(int samples) throws Exception {
        String topic = "failover-" + System.currentTimeMillis();
        try (Admin admin = admin(); KafkaProducer<String, String> producer = producer()) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 3)
                    .configs(Map.of("min.insync.replicas", "2")))).all().get(60, TimeUnit.SECONDS);
            awaitFullIsr(admin, topic);
            Thread sender = new Thread(() -> send(producer, topic), "failover-sender");
            sender.start();
            List<Long> millis = new ArrayList<>();
            System.out.printf("%s: 3 nodes, %s (RF 3, min.insync.replicas=2), acks=all idempotent producer at %d "
                    + "records/s to partition 0; %d SIGKILLs of its leader%n", cluster.kind(), topic, rate, samples);
            for (int i = 1; i <= samples; i++) {
                awaitFullIsr(admin, topic);
                awaitAckAfter(System.nanoTime());
                int leader = leader(admin, topic);
                int controller = cluster.activeControllerId(STATE_TIMEOUT);
                BrokerProcess node = cluster.node(leader);
                long killed = System.nanoTime();
                node.kill();
                long firstAck = awaitAckAfter(killed);
                long sample = TimeUnit.NANOSECONDS.toMillis(firstAck - killed);
                millis.add(sample);
                System.out.printf("sample %d: killed node %d (leader of %s-0%s): first acks=all produce after %d ms%n",
                        i, leader, topic, leader == controller ? ", also the active controller" : "", sample);
                cluster.startNode(node);
            }
            producing = false;
            sender.join(TimeUnit.SECONDS.toMillis(30));
            print(millis);
        }
    }

    /** Sends one record to partition 0 every {@code 1/rate} s until told to stop. */
    private void send(KafkaProducer<String, String> producer, String topic) {
        long interval = TimeUnit.SECONDS.toNanos(1) / rate;
        long next = System.nanoTime();
        long seq = 0;
        while (producing) {
            long sent = System.nanoTime();
            producer.send(new ProducerRecord<>(topic, 0, null, Long.toString(seq++)), (metadata, error) -> {
                if (error == null) {
                    acks.add(new long[] {sent, System.nanoTime()});
                } else {
                    errors.incrementAndGet();
                    lastError.set(error);
                }
            });
            next += interval;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Waits for the acknowledgement of a record sent after {@code nanos}; returns when it arrived. */
    private long awaitAckAfter(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + STATE_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            long first = Long.MAX_VALUE;
            for (long[] ack : acks) {
                if (ack[0] > nanos) {
                    first = Math.min(first, ack[1]);
                }
            }
            if (first != Long.MAX_VALUE) {
                acks.clear();
                return first;
            }
            Thread.sleep(5);
        }
        throw new IllegalStateException("No record sent after the kill was acknowledged within "
                + STATE_TIMEOUT.toSeconds() + " s; " + errors.get() + " send errors, the last: " + lastError.get());
    }

    private void awaitFullIsr(Admin admin, String topic) throws Exception {
        long deadline = System.nanoTime() + STATE_TIMEOUT.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            try {
                TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames()
                        .get(10, TimeUnit.SECONDS).get(topic);
                if (description.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty()
                        && p.isr().size() == 3)) {
                    return;
                }
                last = description.partitions().stream().map(FailoverBench::describe).toList().toString();
            } catch (Exception e) {
                last = e.toString();
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("The ISR of " + topic + " was not full within " + STATE_TIMEOUT.toSeconds()
                + " s: " + last);
    }

    private static String describe(TopicPartitionInfo p) {
        return p.partition() + " leader=" + (p.leader() == null ? "none" : p.leader().id()) + " isr="
                + p.isr().stream().map(Node::id).toList();
    }

    private static int leader(Admin admin, String topic) throws Exception {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
                .partitions().get(0).leader().id();
    }

    private static void print(List<Long> millis) {
        List<Long> sorted = new ArrayList<>(millis);
        Collections.sort(sorted);
        System.out.printf("failover (kill -9 of the leader to the first acks=all produce after it), %d samples: "
                        + "median %d ms, p99 %d ms, min %d ms, max %d ms; all samples (ms): %s%n", sorted.size(),
                percentile(sorted, 50), percentile(sorted, 99), sorted.get(0), sorted.get(sorted.size() - 1), millis);
    }

    /** The nearest-rank percentile of sorted values. */
    private static long percentile(List<Long> sorted, int percent) {
        int rank = (int) Math.ceil(percent / 100.0 * sorted.size());
        return sorted.get(Math.max(0, rank - 1));
    }

    private Admin admin() {
        Map<String, Object> props = new HashMap<>();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        return Admin.create(props);
    }

    private KafkaProducer<String, String> producer() {
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) STATE_TIMEOUT.toMillis());
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    /** The command line. */
    private static final class Options {
        private BrokerKind kind = BrokerKind.CAIRN;
        private int samples = 20;
        private int rate = 200;
        private final Map<String, String> config = new HashMap<>();

        static Options parse(String[] args) {
            Options options = new Options();
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--kafka" -> options.kind = BrokerKind.KAFKA;
                    case "--samples" -> options.samples = Integer.parseInt(value(args, ++i));
                    case "--rate" -> options.rate = Integer.parseInt(value(args, ++i));
                    case "--config" -> {
                        String[] pair = value(args, ++i).split("=", 2);
                        options.config.put(pair[0], pair.length > 1 ? pair[1] : "");
                    }
                    default -> throw new IllegalArgumentException("Unknown option " + args[i]
                            + "; usage: [--kafka] [--samples N] [--rate records/s] [--config key=value]...");
                }
            }
            options.config.putIfAbsent("offsets.topic.replication.factor", "3");
            return options;
        }

        private static String value(String[] args, int i) {
            if (i >= args.length) {
                throw new IllegalArgumentException(args[i - 1] + " needs a value");
            }
            return args[i];
        }
    }
}
