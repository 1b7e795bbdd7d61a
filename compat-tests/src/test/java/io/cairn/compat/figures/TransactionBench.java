package io.cairn.compat.figures;

import io.cairn.testkit.BrokerCluster;
import io.cairn.testkit.BrokerKind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The transaction figures of {@code bin/cairn-txn-perf}: one node or a cluster ({@link BrokerCluster}, Cairn or the
 * reference Kafka), a topic of one partition, and one stock transactional producer (acks=all, idempotent, client
 * defaults otherwise) running N transactions of R records of 100 bytes each: begin, R sends, commit. Prints the
 * transactions per second over the whole run and the latency of {@code commitTransaction()} (the flush of the
 * transaction's records, EndTxn and, on the coordinator, PrepareCommit), median and p99 (nearest rank), after a warm-up
 * of 100 transactions that is not counted.
 *
 * <p>The client speaks the transaction protocol the cluster's {@code transaction.version} feature allows: 2 (KIP-890
 * part 2, Kafka 4.1's default) or 1 (AddPartitionsToTxn from the client; the first one of a transaction meets
 * CONCURRENT_TRANSACTIONS while the previous one still writes its markers, and the client retries it after 20 ms).
 * {@code --transaction-version V} sets the feature first (UpdateFeatures), so that both kinds are compared on one
 * protocol.
 *
 * <p>Arguments: {@code [--kafka] [--brokers N] [--transactions N] [--records R] [--config key=value]...
 * [--transaction-version V]}.
 * Single-threaded.
 */
public final class TransactionBench {

    private static final int WARM_UP = 100;
    private static final int RECORD_BYTES = 100;

    private TransactionBench() {
    }

    public static void main(String[] args) throws Exception {
        BrokerKind kind = BrokerKind.CAIRN;
        int brokers = 1;
        int transactions = 2000;
        int records = 10;
        short transactionVersion = -1;
        Map<String, String> config = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--kafka" -> kind = BrokerKind.KAFKA;
                case "--brokers" -> brokers = Integer.parseInt(args[++i]);
                case "--transactions" -> transactions = Integer.parseInt(args[++i]);
                case "--records" -> records = Integer.parseInt(args[++i]);
                case "--transaction-version" -> transactionVersion = Short.parseShort(args[++i]);
                case "--config" -> {
                    String[] pair = args[++i].split("=", 2);
                    config.put(pair[0], pair.length > 1 ? pair[1] : "");
                }
                default -> throw new IllegalArgumentException("Unknown option " + args[i] + "; usage: [--kafka] "
                        + "[--brokers N] [--transactions N] [--records R] [--config key=value]... [--transaction-version V]");
            }
        }
        short replication = (short) Math.min(3, brokers);
        config.putIfAbsent("transaction.state.log.replication.factor", Short.toString(replication));
        config.putIfAbsent("transaction.state.log.min.isr", Integer.toString(Math.min(2, replication)));
        try (BrokerCluster cluster = BrokerCluster.create(kind, brokers, config)) {
            cluster.start();
            run(cluster, kind, replication, transactions, records, transactionVersion);
        }
    }

    private static void run(BrokerCluster cluster, BrokerKind kind, short replication, int transactions, int records,
                            short transactionVersion) throws Exception {
        String topic = "txn-bench-" + System.currentTimeMillis();
        Map<String, Object> adminProps = Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG,
                cluster.bootstrapServers());
        try (Admin admin = Admin.create(adminProps)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, replication)
                    .configs(Map.of("min.insync.replicas", Integer.toString(Math.min(2, replication))))))
                    .all().get(60, TimeUnit.SECONDS);
            transactionVersion = transactionVersion(admin, transactionVersion);
        }
        Map<String, Object> props = new HashMap<>();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "txn-bench");
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        byte[] value = new byte[RECORD_BYTES];
        List<Long> commitNanos = new ArrayList<>(transactions);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            producer.initTransactions();
            for (int i = 0; i < WARM_UP; i++) {
                transaction(producer, topic, value, records);
            }
            long start = System.nanoTime();
            for (int i = 0; i < transactions; i++) {
                commitNanos.add(transaction(producer, topic, value, records));
            }
            long elapsed = System.nanoTime() - start;
            Collections.sort(commitNanos);
            System.out.printf("%s: %d node(s), topic of 1 partition at replication factor %d, one transactional "
                            + "producer (acks=all), %d transactions of %d records of %d bytes after %d warm-up ones, "
                            + "transaction.version %d%n", kind, cluster.nodes().size(), replication, transactions,
                    records, RECORD_BYTES, WARM_UP, transactionVersion);
            System.out.printf("transactions/s: %.1f (records/s %.1f)%n", transactions * 1e9 / elapsed,
                    (double) transactions * records * 1e9 / elapsed);
            System.out.printf("commitTransaction latency: median %.2f ms, p99 %.2f ms, max %.2f ms%n",
                    ms(rank(commitNanos, 0.50)), ms(rank(commitNanos, 0.99)), ms(commitNanos.get(
                            commitNanos.size() - 1)));
        }
    }

    /**
     * The cluster's finalized {@code transaction.version} (0 when it finalizes none), after setting it to
     * {@code wanted} unless that is negative or the client would speak the same protocol already (below 2 both).
     */
    private static short transactionVersion(Admin admin, short wanted) throws Exception {
        FinalizedVersionRange range = admin.describeFeatures().featureMetadata().get(30, TimeUnit.SECONDS)
                .finalizedFeatures().get("transaction.version");
        short level = range == null ? 0 : range.maxVersionLevel();
        if (wanted < 0 || (wanted < 2) == (level < 2)) {
            return level;
        }
        FeatureUpdate.UpgradeType type = wanted < level ? FeatureUpdate.UpgradeType.SAFE_DOWNGRADE
                : FeatureUpdate.UpgradeType.UPGRADE;
        admin.updateFeatures(Map.of("transaction.version", new FeatureUpdate(wanted, type)),
                new UpdateFeaturesOptions()).all().get(30, TimeUnit.SECONDS);
        return wanted;
    }

    /** One transaction; returns how long its commit took, in nanoseconds. */
    private static long transaction(KafkaProducer<byte[], byte[]> producer, String topic, byte[] value, int records) {
        producer.beginTransaction();
        for (int r = 0; r < records; r++) {
            producer.send(new ProducerRecord<>(topic, 0, null, value));
        }
        long before = System.nanoTime();
        producer.commitTransaction();
        return System.nanoTime() - before;
    }

    /** Nearest-rank percentile of sorted values. */
    private static long rank(List<Long> sorted, double p) {
        int index = (int) Math.ceil(p * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }
}
