package io.cairn.compat.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.compat.harness.KafkaHalfInFaults;
import io.cairn.testkit.BrokerKind;
import io.cairn.testkit.BrokerLogsExtension;
import io.cairn.testkit.BrokerProcess;
import io.cairn.testkit.CairnProcess;
import io.cairn.testkit.FreePorts;
import io.cairn.testkit.JavaTool;
import io.cairn.testkit.KafkaDistribution;
import io.cairn.testkit.KafkaReferenceProcess;
import io.cairn.testkit.RawKafkaClient;
import io.cairn.wire.message.AlterConfigsRequestData;
import io.cairn.wire.message.AlterConfigsResponseData;
import io.cairn.wire.message.ApiVersionsRequestData;
import io.cairn.wire.message.ApiVersionsResponseData;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Live config changes, the same scenario on Cairn and the reference Kafka (each a broker of its own, since broker
 * configs change): the stock {@code kafka-configs --alter --add-config / --delete-config} and {@code --describe}
 * of a topic, a broker and the cluster default, printed as Kafka prints them; {@code Admin.incrementalAlterConfigs}
 * APPEND and SUBTRACT on a list config, {@code validateOnly}, and Kafka's errors for an unknown key, a bad value,
 * APPEND on a non-list key, a non-dynamic broker key and another broker's id; the 13 unprefixed SASL keys (per
 * broker only, two live, the Kerberos, login-refresh and bare JAAS keys refused by Cairn); plugin classes
 * ({@code metric.reporters}, {@code principal.builder.class}) refused, Kafka's for a class it cannot load, Cairn's
 * for any; {@code num.network.threads} checked,
 * grown and shrunk live, and a listener's own {@code listener.name.<l>.num.network.threads} too; a listener added
 * to a broker's {@code listeners} bound live and closed when removed; the legacy AlterConfigs (v2, over a raw
 * connection) replacing a topic's configs; a lowered {@code retention.ms} deleting records without a restart; and
 * the root logger's level changed through BROKER_LOGGER ({@code --entity-type broker-loggers}), shown in the log.
 * Dynamic broker configs as topic defaults: a cluster-wide {@code log.retention.ms} deleting old segments of a
 * topic without its own, a per-broker {@code message.max.bytes} letting a larger record in, both kept across a
 * restart and undone by {@code --delete-config}; with eligible leader replicas, a broker's own
 * {@code min.insync.replicas} refused, the cluster default's set but not removed; {@code background.threads}
 * changed live cluster-wide and per broker, and a cluster-wide size kept across a restart. The log, producer and
 * controller keys Kafka changes live: {@code unclean.leader.election.enable}, {@code log.cleaner.max.compaction.lag.ms}
 * (a compacted topic's old records cleaned without a dirty ratio or a segment.ms reached) and
 * {@code producer.id.expiration.ms} (an idle producer gone) cluster-wide, {@code log.preallocate} (a new segment
 * allocated in full), {@code transaction.partition.verification.enable} and {@code num.recovery.threads.per.data.dir}
 * (checked against the new count, also after a restart) per broker.
 */
@Timeout(300)
@ExtendWith(BrokerLogsExtension.class)
class AlterConfigsIT {

    private static final long TIMEOUT_S = 30;
    private static final String TOOL = "kafka.admin.ConfigCommand";

    @KafkaHalfInFaults
    void configsChangeLiveAsOnKafka(BrokerKind kind) throws Exception {
        try (BrokerProcess broker = start(kind); Admin admin = AdminTopicsIT.admin(broker)) {
            kafkaConfigsAltersAndDescribesATopic(broker, admin);
            incrementalAlterConfigsAppendsSubtractsAndValidates(admin);
            errorsAreKafkas(admin);
            pluginClassesAreRefused(kind, admin);
            unprefixedSaslKeysArePerBroker(kind, admin);
            liveBrokerKeysAreCheckedAsOnKafka(admin);
            backgroundThreadsChangeLive(broker, admin);
            brokerAndClusterDefaultConfigs(broker, admin);
            legacyAlterConfigsReplacesTheTopicsConfigs(broker, admin);
            loweredRetentionDeletesRecordsWithoutRestart(broker, admin);
            brokerLoggerLevelsChangeLive(broker);
            listenersChangeLive(admin);
            logProducerAndControllerKeysChangeLive(broker, admin);
            assertThat(broker.logLinesContaining("LEAK:")).isEmpty();
        }
    }

    @KafkaHalfInFaults
    void dynamicBrokerConfigsSetTopicDefaultsLiveAndAfterRestart(BrokerKind kind) throws Exception {
        try (BrokerProcess broker = start(kind); Admin admin = AdminTopicsIT.admin(broker)) {
            // Given: a topic without its own retention.ms whose records are older than 1 s
            String old = create(admin, "cfg-dyn-retention", Map.of("segment.bytes", "1048576"));
            TopicPartition tp = new TopicPartition(old, 0);
            String plain = create(admin, "cfg-dyn-size");
            try (KafkaProducer<byte[], byte[]> producer = producer(broker)) {
                for (int i = 0; i < 20; i++) {
                    producer.send(new ProducerRecord<>(old, new byte[100_000])).get(TIMEOUT_S, TimeUnit.SECONDS);
                }
                Thread.sleep(1_100); // the records must be older than the new retention; not a synchronisation
                assertThat(earliest(admin, tp)).isZero();
                assertThat(sendLarge(producer, plain)).isInstanceOf(RecordTooLargeException.class);

                // When the cluster default lowers retention and broker 1 raises message.max.bytes
                JavaTool.Result retention = run(broker, "--alter", "--entity-type", "brokers", "--entity-default",
                        "--add-config", "log.retention.ms=1000");
                JavaTool.Result size = run(broker, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                        "--add-config", "message.max.bytes=2000000");

                // Then old segments go and a larger record gets in, without a restart
                assertThat(retention.stdout()).as("%s", retention)
                        .contains("Completed updating default config for brokers in the cluster.");
                assertThat(size.stdout()).as("%s", size).contains("Completed updating config for broker 1.");
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(earliest(admin, tp))
                        .isPositive());
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(sendLarge(producer, plain))
                        .isNull());
                JavaTool.Result defaults = run(broker, "--describe", "--entity-type", "brokers", "--entity-default");
                assertThat(defaults.stdout().lines().filter(l -> !l.contains("min.insync.replicas")).toList())
                        .as("%s", defaults).containsExactly("Default configs for brokers in the cluster are:",
                        "  log.retention.ms=1000 sensitive=false "
                                + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000}");
                JavaTool.Result one = run(broker, "--describe", "--entity-type", "brokers", "--entity-name", "1");
                assertThat(one.stdout().lines().toList()).as("%s", one).containsExactly(
                        "Dynamic configs for broker 1 are:", "  message.max.bytes=2000000 sensitive=false "
                        + "synonyms={DYNAMIC_BROKER_CONFIG:message.max.bytes=2000000, "
                        + "DEFAULT_CONFIG:message.max.bytes=1048588}");
                assertThat(topicLine(broker, plain, "retention.ms")).startsWith("retention.ms=1000 sensitive=false "
                        + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=1000");
                assertThat(topicLine(broker, plain, "max.message.bytes")).startsWith("max.message.bytes=2000000 "
                        + "sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:message.max.bytes=2000000");
            }

            // With eligible leader replicas, min.insync.replicas is one cluster-wide value that cannot go away
            ConfigResource node = new ConfigResource(ConfigResource.Type.BROKER, "1");
            ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
            assertAlterFails(admin, node, new AlterConfigOp(new ConfigEntry("min.insync.replicas", "2"),
                    AlterConfigOp.OpType.SET), InvalidConfigurationException.class,
                    "Broker-level min.insync.replicas cannot be altered while ELR is enabled.");
            alter(admin, cluster, new AlterConfigOp(new ConfigEntry("min.insync.replicas", "1"),
                    AlterConfigOp.OpType.SET));
            assertAlterFails(admin, cluster, new AlterConfigOp(new ConfigEntry("min.insync.replicas", ""),
                    AlterConfigOp.OpType.DELETE), InvalidConfigurationException.class,
                    "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.");

            // and a cluster-wide background.threads (Kafka's default 10) doubles the background pool, and
            // num.recovery.threads.per.data.dir (Kafka's default 2) the threads that load the logs at the next start
            alter(admin, cluster, new AlterConfigOp(new ConfigEntry("background.threads", "20"),
                    AlterConfigOp.OpType.SET));
            alter(admin, cluster, new AlterConfigOp(new ConfigEntry("num.recovery.threads.per.data.dir", "4"),
                    AlterConfigOp.OpType.SET));

            // When the broker restarts, the dynamic configs are still in force
            broker.restart();
            try (Admin again = AdminTopicsIT.admin(broker); KafkaProducer<byte[], byte[]> producer = producer(broker)) {
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, plain);
                assertThat(value(again, topic, "retention.ms")).isEqualTo("1000");
                assertThat(sendLarge(producer, plain)).isNull();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThreadCountRefused(again, node, 41,
                        "value should not be greater than double the current value 20"));
                assertAlterFails(again, node, new AlterConfigOp(new ConfigEntry("num.recovery.threads.per.data.dir",
                        "9"), AlterConfigOp.OpType.SET), InvalidRequestException.class, "Invalid value "
                        + "org.apache.kafka.common.config.ConfigException: Dynamic thread count update validation "
                        + "failed for num.recovery.threads.per.data.dir=9, value should not be greater than double the "
                        + "current value 4 for configuration Invalid dynamic configuration");

                // and deleting them restores the static defaults
                run(broker, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--delete-config",
                        "message.max.bytes");
                run(broker, "--alter", "--entity-type", "brokers", "--entity-default", "--delete-config",
                        "log.retention.ms");
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(sendLarge(producer, plain))
                        .isInstanceOf(RecordTooLargeException.class));
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                        value(again, topic, "retention.ms")).isEqualTo("604800000"));
                assertThat(topicLine(broker, plain, "max.message.bytes"))
                        .doesNotContain("DYNAMIC_BROKER_CONFIG");
            }
        }
    }

    /** Sends a record of 1.5 MB: null when it was accepted, else the cause of the failure. */
    private static Throwable sendLarge(KafkaProducer<byte[], byte[]> producer, String topic) throws Exception {
        try {
            producer.send(new ProducerRecord<>(topic, new byte[1_500_000])).get(TIMEOUT_S, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(BrokerProcess broker) {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "3000000");
        return new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** The {@code kafka-configs --describe --all} line of a topic's {@code key}, without the indent. */
    private static String topicLine(BrokerProcess broker, String topic, String key) {
        JavaTool.Result all = run(broker, "--describe", "--all", "--entity-type", "topics", "--entity-name", topic);
        return all.stdout().lines().map(String::trim).filter(l -> l.startsWith(key + "=")).findFirst()
                .orElseThrow(() -> new AssertionError("no " + key + " in " + all));
    }

    private static BrokerProcess start(BrokerKind kind) {
        // quick retention, cleaner and producer-expiry passes, so that their live changes show within seconds
        Map<String, String> quick = Map.of("log.retention.check.interval.ms", "500", "log.cleaner.backoff.ms", "500",
                "producer.id.expiration.check.interval.ms", "500");
        BrokerProcess broker;
        if (kind == BrokerKind.CAIRN) {
            CairnProcess.Builder builder = CairnProcess.builder();
            quick.forEach(builder::config);
            broker = builder.build();
        } else {
            KafkaReferenceProcess.Builder builder = KafkaReferenceProcess.builder();
            quick.forEach(builder::config);
            broker = builder.build();
        }
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }

    private static void kafkaConfigsAltersAndDescribesATopic(BrokerProcess broker, Admin admin) throws Exception {
        // Given
        String topic = create(admin, "cfg-cli");

        // When
        JavaTool.Result added = run(broker, "--alter", "--entity-type", "topics", "--entity-name", topic,
                "--add-config", "retention.ms=86400000,cleanup.policy=compact");
        JavaTool.Result described = run(broker, "--describe", "--entity-type", "topics", "--entity-name", topic);
        JavaTool.Result deleted = run(broker, "--alter", "--entity-type", "topics", "--entity-name", topic,
                "--delete-config", "retention.ms");
        JavaTool.Result after = run(broker, "--describe", "--entity-type", "topics", "--entity-name", topic);

        // Then
        assertThat(added.exitCode()).as("%s", added).isZero();
        assertThat(added.stdout()).as("%s", added).contains("Completed updating config for topic " + topic + ".");
        assertThat(described.exitCode()).as("%s", described).isZero();
        assertThat(described.stdout().lines().toList()).as("%s", described).containsExactly(
                "Dynamic configs for topic " + topic + " are:",
                "  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, "
                        + "DEFAULT_CONFIG:log.cleanup.policy=delete}",
                "  retention.ms=86400000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=86400000}");
        assertThat(deleted.exitCode()).as("%s", deleted).isZero();
        assertThat(after.stdout().lines().toList()).as("%s", after).containsExactly(
                "Dynamic configs for topic " + topic + " are:",
                "  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, "
                        + "DEFAULT_CONFIG:log.cleanup.policy=delete}");
    }

    private static void incrementalAlterConfigsAppendsSubtractsAndValidates(Admin admin) throws Exception {
        // Given
        String topic = create(admin, "cfg-list");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        String key = "leader.replication.throttled.replicas";

        // When
        alter(admin, resource, new AlterConfigOp(new ConfigEntry(key, "0:1"), AlterConfigOp.OpType.APPEND));
        alter(admin, resource, new AlterConfigOp(new ConfigEntry(key, "1:1,0:1"), AlterConfigOp.OpType.APPEND));
        String appended = value(admin, resource, key);
        alter(admin, resource, new AlterConfigOp(new ConfigEntry(key, "0:1"), AlterConfigOp.OpType.SUBTRACT));
        String subtracted = value(admin, resource, key);
        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(new ConfigEntry("retention.ms",
                "1234"), AlterConfigOp.OpType.SET))), new AlterConfigsOptions().validateOnly(true)).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS);
        alter(admin, resource, new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"),
                AlterConfigOp.OpType.APPEND));

        // Then
        assertThat(appended).isEqualTo("0:1,1:1");
        assertThat(subtracted).isEqualTo("1:1");
        assertThat(value(admin, resource, "retention.ms")).isEqualTo("604800000");
        assertThat(value(admin, resource, "cleanup.policy")).isEqualTo("delete,compact");
    }

    private static void errorsAreKafkas(Admin admin) throws Exception {
        // Given
        String topic = create(admin, "cfg-err");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);

        // Then
        assertAlterFails(admin, resource, new AlterConfigOp(new ConfigEntry("no.such.config", "1"),
                AlterConfigOp.OpType.SET), InvalidConfigurationException.class, "Unknown topic config name: "
                + "no.such.config");
        assertAlterFails(admin, resource, new AlterConfigOp(new ConfigEntry("retention.ms", "abc"),
                AlterConfigOp.OpType.SET), InvalidConfigurationException.class,
                "Invalid value abc for configuration retention.ms: Not a number of type LONG");
        assertAlterFails(admin, resource, new AlterConfigOp(new ConfigEntry("retention.ms", "1"),
                AlterConfigOp.OpType.APPEND), InvalidConfigurationException.class,
                "Can't APPEND to key retention.ms because its type is not LIST.");
        assertAlterFails(admin, new ConfigResource(ConfigResource.Type.BROKER, "1"), new AlterConfigOp(
                new ConfigEntry("log.dirs", "/tmp/elsewhere"), AlterConfigOp.OpType.SET),
                InvalidRequestException.class, "Cannot update these configs dynamically: Set(log.dirs)");
        assertAlterFails(admin, new ConfigResource(ConfigResource.Type.BROKER, ""), new AlterConfigOp(
                new ConfigEntry("leader.replication.throttled.rate", "-1"), AlterConfigOp.OpType.SET),
                InvalidRequestException.class,
                "Invalid value -1 for configuration leader.replication.throttled.rate: Value must be at least 0");
        assertThat(value(admin, resource, "retention.ms")).isEqualTo("604800000");
    }

    /**
     * {@code metric.reporters} and {@code principal.builder.class} name plugin classes: Kafka refuses one it cannot
     * load, Cairn every one (they implement kafka-clients interfaces, never on its classpath), both with
     * INVALID_REQUEST.
     */
    private static void pluginClassesAreRefused(BrokerKind kind, Admin admin) {
        // Given
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        String cairn = "Cairn cannot load these plugin classes: they implement kafka-clients interfaces "
                + "(MetricsReporter, KafkaPrincipalBuilder) and kafka-clients is not on Cairn's classpath; "
                + "Cairn serves its metrics on its Prometheus endpoint (metrics.port) and builds principals as Kafka's "
                + "DefaultKafkaPrincipalBuilder does (ssl.principal.mapping.rules): Set(%s)";

        // Then
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("metric.reporters", "com.example.Reporter"),
                AlterConfigOp.OpType.SET), InvalidRequestException.class, kind == BrokerKind.CAIRN
                ? cairn.formatted("metric.reporters") : "Invalid value org.apache.kafka.common.config.ConfigException: "
                + "Validation of dynamic config update of Set(metric.reporters) failed with class class "
                + "kafka.server.DynamicMetricsReporters for configuration Invalid dynamic configuration");
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("principal.builder.class",
                "com.example.Builder"), AlterConfigOp.OpType.SET), InvalidRequestException.class,
                kind == BrokerKind.CAIRN ? cairn.formatted("principal.builder.class") : "Invalid value "
                + "com.example.Builder for configuration principal.builder.class: Class com.example.Builder could not "
                + "be found.");
    }

    /**
     * The 13 unprefixed SASL keys of Kafka's {@code DynamicListenerConfig}: each refused for the cluster default with
     * Kafka's INVALID_REQUEST (a per-broker key); per broker {@code sasl.enabled.mechanisms} and
     * {@code sasl.mechanism.inter.broker.protocol} accepted by both (this broker has no SASL listener; SaslIT shows
     * them acting), the Kerberos, login refresh and bare {@code sasl.jaas.config} keys stored by Kafka and refused by
     * Cairn with INVALID_CONFIG and its reason (no GSSAPI, no expiring broker login, a JAAS config naming no
     * mechanism).
     */
    private static void unprefixedSaslKeysArePerBroker(BrokerKind kind, Admin admin) throws Exception {
        // Given
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
        Map<String, String> keys = new LinkedHashMap<>();
        keys.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256");
        keys.put("sasl.mechanism.inter.broker.protocol", "PLAIN");
        keys.put("sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required;");
        keys.put("sasl.kerberos.service.name", "kafka");
        keys.put("sasl.kerberos.kinit.cmd", "/usr/local/bin/kinit");
        keys.put("sasl.kerberos.ticket.renew.window.factor", "0.9");
        keys.put("sasl.kerberos.ticket.renew.jitter", "0.1");
        keys.put("sasl.kerberos.min.time.before.relogin", "30000");
        keys.put("sasl.kerberos.principal.to.local.rules", "DEFAULT");
        keys.put("sasl.login.refresh.window.factor", "0.9");
        keys.put("sasl.login.refresh.window.jitter", "0.1");
        keys.put("sasl.login.refresh.min.period.seconds", "30");
        keys.put("sasl.login.refresh.buffer.seconds", "120");

        for (Map.Entry<String, String> key : keys.entrySet()) {
            AlterConfigOp set = new AlterConfigOp(new ConfigEntry(key.getKey(), key.getValue()),
                    AlterConfigOp.OpType.SET);
            // Then
            assertAlterFails(admin, cluster, set, InvalidRequestException.class, "Cannot update these configs at "
                    + "default cluster level, broker id must be specified: Set(" + key.getKey() + ")");
            boolean live = key.getKey().equals("sasl.enabled.mechanisms")
                    || key.getKey().equals("sasl.mechanism.inter.broker.protocol");
            if (live || kind == BrokerKind.KAFKA) {
                alter(admin, one, set);
                alter(admin, one, new AlterConfigOp(new ConfigEntry(key.getKey(), ""), AlterConfigOp.OpType.DELETE));
            } else {
                Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(one, List.of(set));
                assertThatThrownBy(() -> admin.incrementalAlterConfigs(ops).all().get(TIMEOUT_S, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOf(InvalidConfigurationException.class)
                        .hasMessageEndingWith(": Set(" + key.getKey() + ")")
                        .hasMessageStartingWith(key.getKey().equals("sasl.jaas.config")
                                ? "A broker listener ignores a sasl.jaas.config without a mechanism prefix"
                                : "Cairn has no GSSAPI (Kerberos)");
            }
        }
        // And: Kafka checks the value's type first
        assertAlterFails(admin, cluster, new AlterConfigOp(new ConfigEntry("sasl.login.refresh.window.factor",
                "abc"), AlterConfigOp.OpType.SET), InvalidRequestException.class,
                "Invalid value abc for configuration sasl.login.refresh.window.factor: Not a number of type DOUBLE");
    }

    /**
     * The checks of the keys the broker applies live: a thread pool's and a listener's (DynamicBrokerConfig wraps
     * their refusal in ConfigException(name, value)), and KafkaConfig's own (its message as is), the cleaner's
     * buffers among them.
     */
    private static void liveBrokerKeysAreCheckedAsOnKafka(Admin admin) throws Exception {
        // Given
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        int ioThreads = Integer.parseInt(value(admin, one, "num.io.threads"));
        String wrapped = "Invalid value org.apache.kafka.common.config.ConfigException: %s for configuration "
                + "Invalid dynamic configuration";

        // Then
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("num.io.threads",
                Integer.toString(2 * ioThreads + 1)), AlterConfigOp.OpType.SET), InvalidRequestException.class,
                wrapped.formatted("Dynamic thread count update validation failed for num.io.threads="
                        + (2 * ioThreads + 1) + ", value should not be greater than double the current value "
                        + ioThreads));
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("listener.name.plaintext.max.connections",
                "0"), AlterConfigOp.OpType.SET), InvalidRequestException.class,
                wrapped.formatted("Invalid max.connections 0"));
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("max.connections.per.ip", "0"),
                AlterConfigOp.OpType.SET), InvalidRequestException.class, "requirement failed: "
                + "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is "
                + "set.");
        assertAlterFails(admin, new ConfigResource(ConfigResource.Type.BROKER, ""), new AlterConfigOp(
                new ConfigEntry("max.connections.per.ip.overrides", "bad host!:3"), AlterConfigOp.OpType.SET),
                InvalidRequestException.class,
                "max.connections.per.ip.overrides contains invalid addresses : bad host!");
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("log.cleaner.threads", "3"),
                AlterConfigOp.OpType.SET), InvalidRequestException.class, wrapped.formatted(
                "Log cleaner threads cannot be increased to more than double the current value 1"));
        alter(admin, one, new AlterConfigOp(new ConfigEntry("log.cleaner.threads", "2"), AlterConfigOp.OpType.SET));
        alter(admin, one, new AlterConfigOp(new ConfigEntry("log.cleaner.threads", ""), AlterConfigOp.OpType.DELETE));
        // the cleaner's buffers: KafkaConfig's requirement of more than 1 MiB per thread, else applied live
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("log.cleaner.dedupe.buffer.size", "1048576"),
                AlterConfigOp.OpType.SET), InvalidRequestException.class,
                "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.");
        for (Map.Entry<String, String> buffer : Map.of("log.cleaner.dedupe.buffer.size", "16777216",
                "log.cleaner.io.buffer.load.factor", "0.8", "log.cleaner.io.buffer.size", "262144").entrySet()) {
            alter(admin, one, new AlterConfigOp(new ConfigEntry(buffer.getKey(), buffer.getValue()),
                    AlterConfigOp.OpType.SET));
            alter(admin, one, new AlterConfigOp(new ConfigEntry(buffer.getKey(), ""), AlterConfigOp.OpType.DELETE));
        }
        alter(admin, one, new AlterConfigOp(new ConfigEntry("max.connections", "1000"), AlterConfigOp.OpType.SET));
        alter(admin, one, new AlterConfigOp(new ConfigEntry("max.connections", ""), AlterConfigOp.OpType.DELETE));
        networkThreadsChangeLive(admin, one, wrapped);
    }

    /**
     * {@code num.network.threads}: Kafka's check of a listener's processors, then one thread more and back to the
     * static count, live (a client whose connection was on the removed thread reconnects).
     */
    private static void networkThreadsChangeLive(Admin admin, ConfigResource one, String wrapped) throws Exception {
        // Given
        String key = "num.network.threads";
        int threads = Integer.parseInt(value(admin, one, key));

        // Then
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry(key, Integer.toString(2 * threads + 1)),
                AlterConfigOp.OpType.SET), InvalidRequestException.class, wrapped.formatted(
                "Dynamic thread count update validation failed for " + key + "=" + (2 * threads + 1)
                + ", value should not be greater than double the current value " + threads));
        alter(admin, one, new AlterConfigOp(new ConfigEntry(key, Integer.toString(threads + 1)),
                AlterConfigOp.OpType.SET));
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThat(value(admin, one, key))
                .isEqualTo(Integer.toString(threads + 1)));
        alter(admin, one, new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE));
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThat(value(admin, one, key))
                .isEqualTo(Integer.toString(threads)));
        listenerNetworkThreadsChangeLive(admin, one, wrapped, threads);
    }

    /**
     * {@code listener.name.plaintext.num.network.threads}: the PLAINTEXT listener's own processors (Kafka's
     * {@code DataPlaneAcceptor}), resized live and checked against that listener's count; deleting the key gives the
     * listener {@code num.network.threads} again, and clients keep connecting to it.
     */
    private static void listenerNetworkThreadsChangeLive(Admin admin, ConfigResource one, String wrapped,
            int threads) throws Exception {
        // Given
        String key = "listener.name.plaintext.num.network.threads";

        // When
        alter(admin, one, new AlterConfigOp(new ConfigEntry(key, Integer.toString(threads + 1)),
                AlterConfigOp.OpType.SET));

        // Then: the next change is checked against the listener's new count
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertAlterFails(admin, one,
                new AlterConfigOp(new ConfigEntry(key, Integer.toString(2 * threads + 3)), AlterConfigOp.OpType.SET),
                InvalidRequestException.class, wrapped.formatted("Dynamic thread count update validation failed for "
                        + "num.network.threads=" + (2 * threads + 3) + ", value should not be greater than double the "
                        + "current value " + (threads + 1))));

        // When
        alter(admin, one, new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE));

        // Then
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertAlterFails(admin, one,
                new AlterConfigOp(new ConfigEntry(key, Integer.toString(2 * threads + 1)), AlterConfigOp.OpType.SET),
                InvalidRequestException.class, wrapped.formatted("Dynamic thread count update validation failed for "
                        + "num.network.threads=" + (2 * threads + 1) + ", value should not be greater than double the "
                        + "current value " + threads)));
        assertThat(value(admin, one, "num.network.threads")).isEqualTo(Integer.toString(threads));
    }

    /**
     * {@code background.threads} (the {@code kafka-scheduler-N} pool) with {@code kafka-configs --alter}, cluster-wide
     * and per broker: each change is applied live, which Kafka's bounds show (the next change is checked against the
     * new size), and is described with its synonyms; deleting both restores the static size.
     */
    private static void backgroundThreadsChangeLive(BrokerProcess broker, Admin admin) throws Exception {
        // Given: Kafka's default, 10
        String key = "background.threads";
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        int threads = Integer.parseInt(value(admin, one, key));

        // When: the cluster default doubles it, then this broker's own value takes 1.5 times the static size
        JavaTool.Result clusterWide = run(broker, "--alter", "--entity-type", "brokers", "--entity-default",
                "--add-config", key + "=" + 2 * threads);
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThreadCountRefused(admin, one,
                4 * threads + 1, "value should not be greater than double the current value " + 2 * threads));
        JavaTool.Result perBroker = run(broker, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                "--add-config", key + "=" + 3 * threads / 2);

        // Then
        assertThat(clusterWide.stdout()).as("%s", clusterWide)
                .contains("Completed updating default config for brokers in the cluster.");
        assertThat(perBroker.stdout()).as("%s", perBroker).contains("Completed updating config for broker 1.");
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThreadCountRefused(admin, one,
                3 * threads / 4 - 1, "value should be at least half the current value " + 3 * threads / 2));
        JavaTool.Result described = run(broker, "--describe", "--entity-type", "brokers", "--entity-name", "1");
        assertThat(described.stdout().lines().toList()).as("%s", described).containsExactly(
                "Dynamic configs for broker 1 are:", "  " + key + "=" + 3 * threads / 2 + " sensitive=false "
                + "synonyms={DYNAMIC_BROKER_CONFIG:" + key + "=" + 3 * threads / 2 + ", DYNAMIC_DEFAULT_BROKER_CONFIG:"
                + key + "=" + 2 * threads + ", DEFAULT_CONFIG:" + key + "=" + threads + "}");

        // When: both are deleted
        run(broker, "--alter", "--entity-type", "brokers", "--entity-name", "1", "--delete-config", key);
        run(broker, "--alter", "--entity-type", "brokers", "--entity-default", "--delete-config", key);

        // Then: the static size is back, and the next change is checked against it (a value refused by every size
        // on the way, so that a retry never sets it)
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThreadCountRefused(admin, one,
                threads / 2 - 1, "value should be at least half the current value " + threads));
        assertThat(value(admin, one, key)).isEqualTo(Integer.toString(threads));
    }

    /**
     * The log, producer and controller keys Kafka changes live, with {@code kafka-configs --alter}: each described
     * with its synonyms, and its effect where one broker shows it: a new topic's segment allocated in full, the
     * recovery threads checked against their new count, a compacted topic's old records cleaned once they are older
     * than the lag (its segment rolls that long after its first batch, with no segment.ms nor dirty ratio reached),
     * an idle producer forgotten after its expiration. Every key is deleted again.
     */
    private static void logProducerAndControllerKeysChangeLive(BrokerProcess broker, Admin admin) throws Exception {
        // Given
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        String recovery = "num.recovery.threads.per.data.dir";
        int threads = Integer.parseInt(value(admin, one, recovery));

        // When
        JavaTool.Result clusterWide = run(broker, "--alter", "--entity-type", "brokers", "--entity-default",
                "--add-config", "unclean.leader.election.enable=true,log.cleaner.max.compaction.lag.ms=1000");
        JavaTool.Result perBroker = run(broker, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                "--add-config", "log.preallocate=true,transaction.partition.verification.enable=false,"
                        + recovery + "=" + 2 * threads);

        // Then: described as Kafka describes them
        assertThat(clusterWide.stdout()).as("%s", clusterWide)
                .contains("Completed updating default config for brokers in the cluster.");
        assertThat(perBroker.stdout()).as("%s", perBroker).contains("Completed updating config for broker 1.");
        JavaTool.Result described = run(broker, "--describe", "--entity-type", "brokers", "--entity-name", "1");
        assertThat(described.stdout().lines().toList()).as("%s", described).contains(
                "  log.preallocate=true sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.preallocate=true, "
                        + "DEFAULT_CONFIG:log.preallocate=false}",
                "  transaction.partition.verification.enable=false sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
                        + "transaction.partition.verification.enable=false, DEFAULT_CONFIG:"
                        + "transaction.partition.verification.enable=true}",
                "  " + recovery + "=" + 2 * threads + " sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:" + recovery
                        + "=" + 2 * threads + ", DEFAULT_CONFIG:" + recovery + "=" + threads + "}");
        String compacted = create(admin, "cfg-lag", Map.of("cleanup.policy", "compact"));
        ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, compacted);
        Config topicConfigs = admin.describeConfigs(List.of(topic)).all().get(TIMEOUT_S, TimeUnit.SECONDS)
                .get(topic);
        for (Map.Entry<String, String> e : Map.of("unclean.leader.election.enable", "true", "max.compaction.lag.ms",
                "1000").entrySet()) {
            assertThat(topicConfigs.get(e.getKey())).satisfies(c -> {
                assertThat(c.value()).isEqualTo(e.getValue());
                assertThat(c.source()).isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
            });
        }

        // and a new topic's first segment is allocated in full
        String preallocated = create(admin, "cfg-prealloc", Map.of("segment.bytes", "1048576"));
        Path segment = broker.dataDir().resolve(preallocated + "-0")
                .resolve("00000000000000000000.log");
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThat(segment)
                .satisfies(f -> assertThat(Files.size(f)).isEqualTo(1048576L)));

        // and the next recovery thread count is checked against the new one
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry(recovery, Integer.toString(4 * threads + 1)),
                AlterConfigOp.OpType.SET), InvalidRequestException.class, "Invalid value "
                + "org.apache.kafka.common.config.ConfigException: Dynamic thread count update validation failed for "
                + recovery + "=" + (4 * threads + 1) + ", value should not be greater than double the current value "
                + 2 * threads + " for configuration Invalid dynamic configuration");

        // and a compacted topic's records older than the lag are cleaned: its segment rolls at the next append
        TopicPartition lagged = new TopicPartition(compacted, 0);
        try (KafkaProducer<byte[], byte[]> producer = producer(broker)) {
            for (int i = 0; i < 5; i++) {
                producer.send(new ProducerRecord<>(compacted, "k".getBytes(), ("v" + i).getBytes()))
                        .get(TIMEOUT_S, TimeUnit.SECONDS);
            }
            Thread.sleep(1_100); // the first batch must be older than the lag; not a synchronisation
            producer.send(new ProducerRecord<>(compacted, "k".getBytes(), "v5".getBytes()))
                    .get(TIMEOUT_S, TimeUnit.SECONDS);
        }
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThat(values(broker, lagged))
                .containsExactly("v4", "v5"));

        // When: producers expire after 1 s of silence
        ConfigResource cluster = new ConfigResource(ConfigResource.Type.BROKER, "");
        alter(admin, cluster, new AlterConfigOp(new ConfigEntry("producer.id.expiration.ms", "1000"),
                AlterConfigOp.OpType.SET));
        String idle = create(admin, "cfg-idle");
        TopicPartition idleTp = new TopicPartition(idle, 0);
        try (KafkaProducer<byte[], byte[]> producer = producer(broker)) {
            producer.send(new ProducerRecord<>(idle, "x".getBytes())).get(TIMEOUT_S, TimeUnit.SECONDS);
        }

        // Then its state is gone without a restart
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThat(admin.describeProducers(
                List.of(idleTp)).partitionResult(idleTp).get(TIMEOUT_S, TimeUnit.SECONDS).activeProducers())
                .isEmpty());
        for (String key : List.of("unclean.leader.election.enable", "log.cleaner.max.compaction.lag.ms",
                "producer.id.expiration.ms")) {
            alter(admin, cluster, new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE));
        }
        for (String key : List.of("log.preallocate", "transaction.partition.verification.enable", recovery)) {
            alter(admin, one, new AlterConfigOp(new ConfigEntry(key, ""), AlterConfigOp.OpType.DELETE));
        }
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).untilAsserted(() -> assertThat(value(admin, one, recovery))
                .isEqualTo(Integer.toString(threads)));
    }

    /** The values of every record of {@code tp}, from its log start offset to its end. */
    private static List<String> values(BrokerProcess broker, TopicPartition tp) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> values.add(new String(r.value())));
            }
        }
        return values;
    }

    /** Kafka's refusal of {@code background.threads=threads} for broker {@code one}, {@code reason} its end. */
    private static void assertThreadCountRefused(Admin admin, ConfigResource one, int threads, String reason) {
        assertAlterFails(admin, one, new AlterConfigOp(new ConfigEntry("background.threads",
                Integer.toString(threads)), AlterConfigOp.OpType.SET), InvalidRequestException.class,
                "Invalid value org.apache.kafka.common.config.ConfigException: Dynamic thread count update "
                + "validation failed for background.threads=" + threads + ", " + reason
                + " for configuration Invalid dynamic configuration");
    }

    /**
     * A listener added to this broker's {@code listeners} (and the protocol map) is bound at once and answers Kafka
     * requests; deleting the dynamic keys closes it again.
     */
    private static void listenersChangeLive(Admin admin) throws Exception {
        // Given
        ConfigResource one = new ConfigResource(ConfigResource.Type.BROKER, "1");
        int port = FreePorts.freePort();
        String listeners = value(admin, one, "listeners") + ",EXTRA://" + FreePorts.LOOPBACK + ":" + port;
        String map = value(admin, one, "listener.security.protocol.map") + ",EXTRA:PLAINTEXT";

        // When
        admin.incrementalAlterConfigs(Map.of(one, List.of(
                new AlterConfigOp(new ConfigEntry("listeners", listeners), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("listener.security.protocol.map", map), AlterConfigOp.OpType.SET))))
                .all().get(TIMEOUT_S, TimeUnit.SECONDS);

        // Then
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).until(() -> answersApiVersions(port));

        // When
        admin.incrementalAlterConfigs(Map.of(one, List.of(
                new AlterConfigOp(new ConfigEntry("listeners", ""), AlterConfigOp.OpType.DELETE),
                new AlterConfigOp(new ConfigEntry("listener.security.protocol.map", ""),
                        AlterConfigOp.OpType.DELETE)))).all().get(TIMEOUT_S, TimeUnit.SECONDS);

        // Then
        await().atMost(Duration.ofSeconds(TIMEOUT_S)).until(() -> !answersApiVersions(port));
    }

    /** Whether a Kafka listener on the loopback {@code port} answers ApiVersions. */
    private static boolean answersApiVersions(int port) {
        try (RawKafkaClient raw = RawKafkaClient.connect(FreePorts.LOOPBACK, port)) {
            ApiVersionsResponseData answer = raw.sendAndReceive(new ApiVersionsRequestData()
                    .setClientSoftwareName("cairn-it").setClientSoftwareVersion("1"), (short) 3,
                    Duration.ofSeconds(5));
            return answer.errorCode() == 0;
        } catch (RuntimeException | AssertionError e) {
            return false; // refused, or accepted and closed unanswered (a listener being removed)
        }
    }

    private static void brokerAndClusterDefaultConfigs(BrokerProcess broker, Admin admin) throws Exception {
        // When
        JavaTool.Result perBroker = run(broker, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                "--add-config", "leader.replication.throttled.rate=1000000");
        JavaTool.Result clusterWide = run(broker, "--alter", "--entity-type", "brokers", "--entity-default",
                "--add-config", "follower.replication.throttled.rate=2000000");
        JavaTool.Result describedBroker = run(broker, "--describe", "--entity-type", "brokers", "--entity-name",
                "1");
        JavaTool.Result describedDefault = run(broker, "--describe", "--entity-type", "brokers", "--entity-default");
        Config all = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.BROKER, "1"))).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS).values().iterator().next();
        JavaTool.Result removed = run(broker, "--alter", "--entity-type", "brokers", "--entity-name", "1",
                "--delete-config", "leader.replication.throttled.rate");
        JavaTool.Result removedDefault = run(broker, "--alter", "--entity-type", "brokers", "--entity-default",
                "--delete-config", "follower.replication.throttled.rate");
        JavaTool.Result afterRemoval = run(broker, "--describe", "--entity-type", "brokers", "--entity-name", "1");

        // Then
        assertThat(perBroker.stdout()).as("%s", perBroker).contains("Completed updating config for broker 1.");
        assertThat(clusterWide.stdout()).as("%s", clusterWide)
                .contains("Completed updating default config for brokers in the cluster.");
        assertThat(describedBroker.stdout().lines().toList()).as("%s", describedBroker).containsExactly(
                "Dynamic configs for broker 1 are:",
                "  leader.replication.throttled.rate=1000000 sensitive=false "
                        + "synonyms={DYNAMIC_BROKER_CONFIG:leader.replication.throttled.rate=1000000}");
        // The reference Kafka's test setup also sets min.insync.replicas=1 as a cluster default.
        assertThat(describedDefault.stdout().lines().filter(l -> !l.contains("min.insync.replicas")).toList())
                .as("%s", describedDefault).containsExactly(
                "Default configs for brokers in the cluster are:",
                "  follower.replication.throttled.rate=2000000 sensitive=false "
                        + "synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:follower.replication.throttled.rate=2000000}");
        assertThat(all.get("follower.replication.throttled.rate").source())
                .isEqualTo(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG);
        assertThat(removed.exitCode()).as("%s", removed).isZero();
        assertThat(removedDefault.exitCode()).as("%s", removedDefault).isZero();
        assertThat(afterRemoval.stdout().lines().toList()).as("%s", afterRemoval)
                .containsExactly("Dynamic configs for broker 1 are:");
    }

    private static void legacyAlterConfigsReplacesTheTopicsConfigs(BrokerProcess broker, Admin admin)
            throws Exception {
        // Given
        String topic = create(admin, "cfg-legacy");
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        alter(admin, resource, new AlterConfigOp(new ConfigEntry("retention.ms", "5000"),
                AlterConfigOp.OpType.SET));

        // When
        AlterConfigsResponseData replaced;
        try (RawKafkaClient raw = RawKafkaClient.connect(broker)) {
            replaced = raw.sendAndReceive(legacy(false, topic), (short) 2, Duration.ofSeconds(TIMEOUT_S));
            if (broker instanceof CairnProcess) {
                // Kafka 4.1.1 sends no answer at all to a request naming a resource twice (seen in this test).
                AlterConfigsResponseData twice = raw.sendAndReceive(legacy(true, topic, topic), (short) 2,
                        Duration.ofSeconds(TIMEOUT_S));
                assertThat(twice.responses()).hasSize(2).allSatisfy(r -> {
                    assertThat(r.errorCode()).isEqualTo((short) 42);
                    assertThat(r.errorMessage()).isEqualTo("Each resource must appear at most once.");
                });
            }
        }

        // Then
        assertThat(replaced.responses()).singleElement().satisfies(r -> assertThat(r.errorCode()).isZero());
        assertThat(value(admin, resource, "segment.ms")).isEqualTo("3600000");
        assertThat(value(admin, resource, "retention.ms")).isEqualTo("604800000");
    }

    private static AlterConfigsRequestData legacy(boolean validateOnly, String... topics) {
        AlterConfigsRequestData request = new AlterConfigsRequestData().setValidateOnly(validateOnly);
        for (String topic : topics) {
            List<AlterConfigsRequestData.AlterableConfig> configs = new ArrayList<>();
            configs.add(new AlterConfigsRequestData.AlterableConfig().setName("segment.ms").setValue("3600000"));
            request.resources().add(new AlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
                    .setResourceName(topic).setConfigs(configs));
        }
        return request;
    }

    private static void loweredRetentionDeletesRecordsWithoutRestart(BrokerProcess broker, Admin admin)
            throws Exception {
        // Given: 20 records of 100 KB in segments of 1 MiB, older than 1 s
        String topic = create(admin, "cfg-retention", Map.of("segment.bytes", "1048576"));
        TopicPartition tp = new TopicPartition(topic, 0);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < 20; i++) {
                producer.send(new ProducerRecord<>(topic, new byte[100_000])).get(TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
        Thread.sleep(1_100); // the records must be older than the new retention; not a synchronisation
        assertThat(earliest(admin, tp)).isZero();

        // When
        alter(admin, new ConfigResource(ConfigResource.Type.TOPIC, topic), new AlterConfigOp(
                new ConfigEntry("retention.ms", "1000"), AlterConfigOp.OpType.SET));

        // Then
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(earliest(admin, tp)).isPositive());
    }

    private static void brokerLoggerLevelsChangeLive(BrokerProcess broker) {
        // When
        JavaTool.Result set = run(broker, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1",
                "--add-config", "root=WARN");
        JavaTool.Result described = run(broker, "--describe", "--entity-type", "broker-loggers", "--entity-name",
                "1");
        JavaTool.Result restored = run(broker, "--alter", "--entity-type", "broker-loggers", "--entity-name", "1",
                "--add-config", "root=INFO");
        JavaTool.Result rootRemoved = run(broker, "--alter", "--entity-type", "broker-loggers", "--entity-name",
                "1", "--delete-config", "root");

        // Then
        assertThat(set.stdout()).as("%s", set).contains("Completed updating config for broker-logger 1.");
        assertThat(described.stdout().lines().toList()).as("%s", described)
                .contains("Dynamic configs for broker-logger 1 are:", "  root=WARN sensitive=false synonyms={}");
        assertThat(restored.exitCode()).as("%s", restored).isZero();
        assertThat(rootRemoved.exitCode()).as("%s", rootRemoved).isNotZero();
        assertThat(rootRemoved.stdout() + rootRemoved.stderr()).as("%s", rootRemoved)
                .contains("Removing the log level of the root logger is not allowed");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                broker.logLinesContaining("Updated the log level of root to WARN")).isNotEmpty());
    }

    private static long earliest(Admin admin, TopicPartition tp) throws Exception {
        return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp)
                .get(TIMEOUT_S, TimeUnit.SECONDS).offset();
    }

    private static String create(Admin admin, String prefix) throws Exception {
        return create(admin, prefix, Map.of());
    }

    private static String create(Admin admin, String prefix, Map<String, String> configs) throws Exception {
        String topic = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(configs))).all()
                .get(TIMEOUT_S, TimeUnit.SECONDS);
        return topic;
    }

    private static void alter(Admin admin, ConfigResource resource, AlterConfigOp op) throws Exception {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(resource, List.of(op));
        admin.incrementalAlterConfigs(ops).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static void assertAlterFails(Admin admin, ConfigResource resource, AlterConfigOp op, Class<?> cause,
                                         String message) {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(resource, List.of(op));
        assertThatThrownBy(() -> admin.incrementalAlterConfigs(ops).all().get(TIMEOUT_S, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(cause).hasMessage(message);
    }

    /** A config's value as DescribeConfigs reports it (the broker applies committed changes shortly after). */
    private static String value(Admin admin, ConfigResource resource, String key) throws Exception {
        return admin.describeConfigs(List.of(resource)).all().get(TIMEOUT_S, TimeUnit.SECONDS).get(resource)
                .get(key).value();
    }

    private static JavaTool.Result run(BrokerProcess broker, String... args) {
        List<String> all = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrapServers()));
        all.addAll(List.of(args));
        return KafkaDistribution.tool(TOOL).args(all).timeout(Duration.ofSeconds(90)).build().run();
    }
}
