package io.cairn.compat.figures;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The rebalance figures of {@code bin/cairn-rebalance-perf}: how long a group of stock Java consumers takes to share a
 * topic's partitions again, with the classic protocol and with the consumer protocol (KIP-848), on one node (Cairn or
 * the reference Kafka). Per round, a new group of N members (default 10) on a topic of P partitions (default 30):
 * <ul>
 *   <li><b>N join</b>: the N consumers subscribe at once (each constructed before, polling on its own thread); the time
 *   until their rebalance listeners hold every partition exactly once, each member at least one;</li>
 *   <li><b>one leaves</b>: one member closes; the time until the other N-1 hold every partition exactly once;</li>
 *   <li><b>one joins</b>: a new member subscribes; the time until the N hold every partition exactly once again.</li>
 * </ul>
 * A member "holds" a partition from its {@code onPartitionsAssigned} to its {@code onPartitionsRevoked} (or lost): the
 * moment the application may read it. Client and broker settings are the defaults (so the classic members heartbeat
 * every 3 s and, with the default assignors, rebalance eagerly; consumer-protocol members heartbeat at the broker's
 * {@code group.consumer.heartbeat.interval.ms}, 5 s), except {@code group.initial.rebalance.delay.ms=0} on the broker,
 * as Kafka's sample {@code server.properties} has it; {@code --config key=value} changes a broker setting. Prints the
 * median and the range of each measure over the rounds.
 *
 * <p>Arguments: {@code [--kafka] [--members N] [--partitions P] [--rounds R] [--protocols classic,consumer]
 * [--config key=value]...}.
 */
public final class RebalanceBench {

    private static final Duration PHASE_LIMIT = Duration.ofSeconds(120);

    private RebalanceBench() {
    }

    public static void main(String[] args) throws Exception {
        BrokerKind kind = BrokerKind.CAIRN;
        int members = 10;
        int partitions = 30;
        int rounds = 3;
        List<String> protocols = List.of("classic", "consumer");
        Map<String, String> config = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kafka" -> kind = BrokerKind.KAFKA;
                case "--members" -> members = Integer.parseInt(args[++i]);
                case "--partitions" -> partitions = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--protocols" -> protocols = List.of(args[++i].split(","));
                case "--config" -> {
                    String[] pair = args[++i].split("=", 2);
                    config.put(pair[0], pair.length > 1 ? pair[1] : "");
                }
                default -> throw new IllegalArgumentException("Unknown option " + args[i] + "; usage: [--kafka] "
                        + "[--members N] [--partitions P] [--rounds R] [--protocols classic,consumer] "
                        + "[--config key=value]...");
            }
        }
        if (members < 2 || partitions < members || rounds < 1) {
            throw new IllegalArgumentException("needs --members >= 2, --partitions >= members, --rounds >= 1");
        }
        config.putIfAbsent("offsets.topic.replication.factor", "1");
        config.putIfAbsent("group.initial.rebalance.delay.ms", "0");
        try (BrokerCluster cluster = BrokerCluster.create(kind, 1, config)) {
            cluster.start();
            String topic = "rebalance-bench-" + System.currentTimeMillis();
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                    cluster.bootstrapServers()))) {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get(60, TimeUnit.SECONDS);
            }
            System.out.printf("%s: one node, a topic of %d partitions, groups of %d stock Java consumers, %d round(s) "
                    + "per protocol; milliseconds until every partition is held exactly once (median [min-max])%n",
                    kind, partitions, members, rounds);
            for (String protocol : protocols) {
                List<List<Long>> phases = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
                for (int round = 0; round < rounds; round++) {
                    long[] measured = round(cluster.bootstrapServers(), topic, partitions, members, protocol,
                            "rebalance-bench-" + protocol + "-" + round + "-" + System.nanoTime());
                    for (int p = 0; p < measured.length; p++) {
                        phases.get(p).add(measured[p]);
                    }
                }
                System.out.printf("%s %-8s  %d join: %s   one leaves: %s   one joins: %s%n", kind, protocol, members,
                        summary(phases.get(0)), summary(phases.get(1)), summary(phases.get(2)));
            }
        }
    }

    /** One round in a new group: the three measures, in milliseconds. */
    private static long[] round(String bootstrap, String topic, int partitions, int size, String protocol,
            String group) throws InterruptedException {
        List<Member> members = new ArrayList<>();
        try {
            CountDownLatch go = new CountDownLatch(1);
            for (int i = 0; i < size; i++) {
                members.add(new Member(bootstrap, group, protocol, topic, go));
            }
            long start = System.nanoTime();
            go.countDown();
            long join = awaitCover(members, partitions, start, "the first " + size + " members");

            Member leaving = members.remove(0);
            start = System.nanoTime();
            leaving.leave();
            long leave = awaitCover(members, partitions, start, "the members left after one leaves");
            leaving.awaitStopped();

            CountDownLatch now = new CountDownLatch(0);
            start = System.nanoTime();
            members.add(new Member(bootstrap, group, protocol, topic, now));
            long rejoin = awaitCover(members, partitions, start, "the members after one joins");
            return new long[] {join, leave, rejoin};
        } finally {
            members.forEach(Member::leave);
            for (Member member : members) {
                member.awaitStopped();
            }
        }
    }

    /**
     * Waits until {@code members} hold every one of {@code partitions} partitions exactly once, each at least one;
     * returns the milliseconds since {@code start}.
     */
    private static long awaitCover(List<Member> members, int partitions, long start, String who)
            throws InterruptedException {
        long deadline = start + PHASE_LIMIT.toNanos();
        while (true) {
            int held = 0;
            boolean everyOne = true;
            Set<TopicPartition> union = new HashSet<>();
            for (Member member : members) {
                member.rethrow();
                Set<TopicPartition> owned = Set.copyOf(member.owned);
                everyOne &= !owned.isEmpty();
                held += owned.size();
                union.addAll(owned);
            }
            if (everyOne && held == partitions && union.size() == partitions) {
                return (System.nanoTime() - start) / 1_000_000;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(who + " did not share the " + partitions + " partitions within "
                        + PHASE_LIMIT + " (held " + held + ", distinct " + union.size() + ")");
            }
            Thread.sleep(2);
        }
    }

    private static String summary(List<Long> values) {
        List<Long> sorted = values.stream().sorted().toList();
        long median = sorted.get((sorted.size() - 1) / 2);
        return median + " [" + sorted.get(0) + "-" + sorted.get(sorted.size() - 1) + "]";
    }

    /** A consumer polling on its own thread (a KafkaConsumer is single-threaded), closed by that thread. */
    private static final class Member implements ConsumerRebalanceListener {

        final Set<TopicPartition> owned = ConcurrentHashMap.newKeySet();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private volatile boolean leaving;
        private final Thread thread;

        Member(String bootstrap, String group, String protocol, String topic, CountDownLatch go) {
            Map<String, Object> props = new HashMap<>();
            props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
            KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
            thread = new Thread(() -> {
                try (consumer) {
                    go.await();
                    consumer.subscribe(List.of(topic), this);
                    while (!leaving) {
                        consumer.poll(Duration.ofMillis(50));
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            }, "rebalance-bench-member");
            thread.setDaemon(true);
            thread.start();
        }

        void leave() {
            leaving = true;
        }

        void awaitStopped() throws InterruptedException {
            thread.join(PHASE_LIMIT.toMillis());
        }

        void rethrow() {
            Throwable t = failure.get();
            if (t != null) {
                throw new IllegalStateException("a member failed", t);
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            owned.removeAll(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            owned.addAll(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            owned.removeAll(partitions);
        }
    }
}
