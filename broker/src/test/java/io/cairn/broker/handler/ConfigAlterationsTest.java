package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.broker.group.share.ShareGroupConfigs;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigAlterationsTest {

    private static final byte TOPIC = ConfigResource.TOPIC;
    private static final byte BROKER = ConfigResource.BROKER;
    private static final String RATE = "leader.replication.throttled.rate";

    private final MetadataImage image = new MetadataImage(0L, "c", 1, 1L, Map.of(), Map.of(), Map.of(),
            Map.of(ConfigResource.broker("1"), Map.of(RATE, "10"),
                    new ConfigResource(ConfigResource.GROUP, "g"), Map.of("share.auto.offset.reset", "earliest")),
            0L, 0L, Map.of(), Map.of(), Map.of());
    private final ConfigAlterations alterations = new ConfigAlterations(1, () -> image, null,
            ShareGroupConfigs.defaults());

    private static ConfigAlterations.Resource resource(byte type, String name, ConfigAlterations.Op... ops) {
        return new ConfigAlterations.Resource(type, name, List.of(ops));
    }

    private static ConfigAlterations.Op set(String key, String value) {
        return new ConfigAlterations.Op(key, ConfigAlterations.SET, value);
    }

    private ConfigAlterations.Outcome only(ConfigAlterations.Resource resource) {
        return alterations.preprocess(List.of(resource), false, false)[0];
    }

    @Test
    void groupConfigsAreCheckedAsKafkasGroupConfigThenGoToTheController() {
        byte group = ConfigResource.GROUP;
        assertThat(only(resource(group, "g", set("share.record.lock.duration.ms", "20000")))).isNull();
        assertThat(only(resource(group, "new", set("share.isolation.level", "read_committed")))).isNull();
        assertThat(only(resource(group, "g", new ConfigAlterations.Op("share.auto.offset.reset",
                ConfigAlterations.DELETE, null)))).isNull();
        assertThat(only(resource(group, "", set("share.auto.offset.reset", "earliest")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Default group resources are not allowed."));
        assertThat(only(resource(group, "g", set("share.record.lock.duration.ms", "70000")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_CONFIG, "share.record.lock.duration.ms must be less than"
                        + " or equal to group.share.max.record.lock.duration.ms"));
        assertThat(only(resource(group, "g", set("no.such.key", "1")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_CONFIG, "Unknown group config name: no.such.key"));
        // the legacy AlterConfigs replaces the group's configs: only the given ones are checked
        assertThat(alterations.preprocess(List.of(resource(group, "g", set("share.isolation.level",
                "read_uncommitted"))), true, false)[0]).isNull();
    }

    @Test
    void topicsAndTheLiveBrokerKeysGoToTheController() {
        // Then
        assertThat(only(resource(TOPIC, "t", set("retention.ms", "1")))).isNull();
        assertThat(only(resource(BROKER, "1", set(RATE, "1000")))).isNull();
        assertThat(only(resource(BROKER, "", set("follower.replication.throttled.rate", "0")))).isNull();
        assertThat(only(resource(BROKER, "1", new ConfigAlterations.Op(RATE, ConfigAlterations.DELETE, null))))
                .isNull();
        assertThat(only(resource(BROKER, "", set("log.retention.ms", "1000"), set("log.segment.bytes",
                "2097152"), set("log.cleanup.policy", "compact")))).isNull();
        assertThat(only(resource(BROKER, "1", set("message.max.bytes", "2000000")))).isNull();
        assertThat(only(resource(BROKER, "", set("background.threads", "4")))).isNull();
        assertThat(only(resource(BROKER, "1", set("background.threads", "20")))).isNull();
        assertThat(only(resource(BROKER, "1", set("background.threads", "0")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Invalid value 0 for configuration "
                        + "background.threads: Value must be at least 1"));
    }

    @Test
    void liveTopicDefaultsAreValidatedByTheTableAndTheRestStayRefused() {
        // Then
        assertThat(only(resource(BROKER, "1", set("log.segment.bytes", "10")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Invalid value 10 for configuration "
                        + "log.segment.bytes: Value must be at least 1048576"));
        assertThat(only(resource(BROKER, "", set("log.local.retention.ms", "1000")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_CONFIG, "Cairn has no tiered storage "
                        + "(remote.log.storage.system.enable), so these configs have nothing to act on: "
                        + "Set(log.local.retention.ms)"));
        assertThat(only(resource(BROKER, "", set("unclean.leader.election.enable", "true")))).isNull();
        assertThat(only(resource(BROKER, "1", set("log.preallocate", "true")))).isNull();
        assertThat(only(resource(BROKER, "", set("log.cleaner.max.compaction.lag.ms", "0")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Invalid value 0 for configuration "
                        + "log.cleaner.max.compaction.lag.ms: Value must be at least 1"));
        assertThat(only(resource(BROKER, "", set("min.insync.replicas", "2")))).isNull();
        assertThat(only(resource(BROKER, "", set("log.retention.hours", "1")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST,
                        "Cannot update these configs dynamically: Set(log.retention.hours)"));
    }

    @Test
    void kafkasRequestErrors() {
        // When
        ConfigAlterations.Outcome[] twice = alterations.preprocess(List.of(resource(TOPIC, "t"),
                resource(TOPIC, "u"), resource(TOPIC, "t")), false, false);

        // Then
        assertThat(twice).extracting(o -> o == null ? null : o.message()).containsExactly(
                "Each resource must appear at most once.", null, "Each resource must appear at most once.");
        assertThat(only(resource(TOPIC, "t", set("a", "1"), set("a", "2"))))
                .isEqualTo(new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Error due to duplicate config keys"));
        assertThat(only(resource(TOPIC, "t", set("a", null), set("b", null)))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Null value not supported for : a, b"));
        assertThat(only(resource((byte) 7, "1", set("x", "1")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Unknown resource type 7"));
        assertThat(alterations.preprocess(List.of(resource((byte) 8, "1", set("root", "INFO"))), true, true)[0])
                .isEqualTo(new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Unknown resource type 8"));
        assertThat(only(resource(BROKER, "2", set(RATE, "1")))).isEqualTo(new ConfigAlterations.Outcome(
                Errors.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2"));
        assertThat(only(resource(BROKER, "x", set(RATE, "1")))).isEqualTo(new ConfigAlterations.Outcome(
                Errors.INVALID_REQUEST, "Node id must be an integer, but it is: x"));
    }

    @Test
    void brokerKeysThatCannotChangeLiveAreRefused() {
        // Then
        assertThat(only(resource(BROKER, "1", set("log.dirs", "/x"), set("node.id", "3")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST,
                        "Cannot update these configs dynamically: Set(log.dirs, node.id)"));
        assertThat(only(resource(BROKER, "", set("remote.log.reader.threads", "2")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_CONFIG, "Cairn has no tiered storage "
                        + "(remote.log.storage.system.enable), so these configs have nothing to act on: "
                        + "Set(remote.log.reader.threads)"));
        assertThat(only(resource(BROKER, "1", set("num.recovery.threads.per.data.dir", "2"),
                set("producer.id.expiration.ms", "1000"), set("transaction.partition.verification.enable", "false"))))
                .isNull();
        assertThat(only(resource(BROKER, "1", set(RATE, "fast")))).isEqualTo(new ConfigAlterations.Outcome(
                Errors.INVALID_REQUEST, "Invalid value fast for configuration " + RATE
                        + ": Not a number of type LONG"));
        assertThat(only(resource(BROKER, "1", new ConfigAlterations.Op(RATE, ConfigAlterations.APPEND, "1"))))
                .isEqualTo(new ConfigAlterations.Outcome(Errors.INVALID_CONFIG,
                        "Config value append is not allowed for config key: " + RATE));
    }

    @Test
    void brokerLoggersChangeLog4jLevelsOnThisBrokerOnly() {
        // Given
        String name = "io.cairn.test.ConfigAlterationsTest";
        org.apache.logging.log4j.LogManager.getLogger(name);

        // When
        ConfigAlterations.Outcome set = only(resource((byte) 8, "1", set(name, "DEBUG")));

        // Then
        assertThat(set).isEqualTo(new ConfigAlterations.Outcome(Errors.NONE, null));
        assertThat(BrokerLoggers.loggers()).containsEntry(name, "DEBUG");
        assertThat(only(resource((byte) 8, "1", set(name, "LOUD"))).message()).isEqualTo("Cannot set the log "
                + "level of " + name + " to LOUD as it is not a supported log level. Valid log levels are DEBUG, "
                + "ERROR, FATAL, INFO, TRACE, WARN");
        assertThat(only(resource((byte) 8, "1", set("no.such.logger", "INFO")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_CONFIG, "Logger no.such.logger does not exist!"));
        assertThat(only(resource((byte) 8, "1", new ConfigAlterations.Op("root", ConfigAlterations.DELETE, null))))
                .isEqualTo(new ConfigAlterations.Outcome(Errors.INVALID_REQUEST,
                        "Removing the log level of the root logger is not allowed"));
        assertThat(only(resource((byte) 8, "1", new ConfigAlterations.Op(name, ConfigAlterations.APPEND, "x"))))
                .isEqualTo(new ConfigAlterations.Outcome(Errors.INVALID_REQUEST,
                        "APPEND operation is not allowed for the BROKER_LOGGER resource"));
        assertThat(only(resource((byte) 8, "2", set(name, "INFO")))).isEqualTo(new ConfigAlterations.Outcome(
                Errors.INVALID_REQUEST, "Unexpected node id. Expected 1, but received 1"));
        assertThat(alterations.preprocess(List.of(resource((byte) 8, "1", set(name, "TRACE"))), false, true)[0])
                .isEqualTo(new ConfigAlterations.Outcome(Errors.NONE, null));
        assertThat(BrokerLoggers.loggers()).containsEntry(name, "DEBUG");
        only(resource((byte) 8, "1", new ConfigAlterations.Op(name, ConfigAlterations.DELETE, null)));
        assertThat(BrokerLoggers.loggers()).containsEntry(name, BrokerLoggers.loggers().get("root"));
    }

    @Test
    void theLegacyApiValidatesOnlyTheGivenConfigs() {
        // Given: broker 1 has a dynamic rate; the legacy API replaces it
        ConfigAlterations.Outcome[] outcomes = alterations.preprocess(List.of(resource(BROKER, "1",
                set("follower.replication.throttled.rate", "5"))), true, false);

        // Then
        assertThat(outcomes[0]).isNull();
    }

    @Test
    void storeKeysAreTakenPerBrokerAndPerListenerOnly() {
        // Given
        String location = "listener.name.ssl.ssl.keystore.location";

        // Then: with the listener prefix for this broker, they go on (the listener's own checks aside)
        assertThat(only(resource(BROKER, "1", set(location, "/k.p12"),
                set("listener.name.ssl.ssl.keystore.password", "s")))).isNull();
        assertThat(only(resource(BROKER, "1", set("ssl.keystore.location", "/k.p12"),
                set("ssl.truststore.password", "s")))).isEqualTo(new ConfigAlterations.Outcome(
                Errors.INVALID_REQUEST, "These security configs can be dynamically updated only per-listener using "
                + "the listener prefix: Set(ssl.keystore.location, ssl.truststore.password)"));
        assertThat(only(resource(BROKER, "", set(location, "/k.p12")))).isEqualTo(new ConfigAlterations.Outcome(
                Errors.INVALID_REQUEST, "Cannot update these configs at default cluster level, broker id must be "
                + "specified: Set(" + location + ")"));
        assertThat(only(resource(BROKER, "", set("ssl.protocol", "TLSv1.2")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Cannot update these configs at default "
                        + "cluster level, broker id must be specified: Set(ssl.protocol)"));
        assertThat(only(resource(BROKER, "", set("listener.name.plaintext.max.connections", "5")))).isNull();
        // a listener's other ssl.* keys and its SASL keys are live per broker, checked as the keys they override
        assertThat(only(resource(BROKER, "1", set("listener.name.ssl.ssl.client.auth", "required")))).isNull();
        assertThat(only(resource(BROKER, "1", set("listener.name.ssl.ssl.enabled.protocols", "TLSv1.3")))).isNull();
        assertThat(only(resource(BROKER, "1", set("listener.name.sasl_plaintext.plain.sasl.jaas.config", "x"),
                set("listener.name.sasl_plaintext.sasl.enabled.mechanisms", "PLAIN")))).isNull();
        assertThat(only(resource(BROKER, "", set("listener.name.sasl_plaintext.sasl.enabled.mechanisms", "PLAIN"))))
                .isEqualTo(new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Cannot update these configs at "
                        + "default cluster level, broker id must be specified: "
                        + "Set(listener.name.sasl_plaintext.sasl.enabled.mechanisms)"));
        assertThat(only(resource(BROKER, "1", set("listener.name.ssl.ssl.client.auth", "sometimes")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Invalid value sometimes for configuration "
                        + "ssl.client.auth: String must be one of: required, requested, none"));
        // plugin classes: kafka-clients interfaces Cairn cannot load
        assertThat(only(resource(BROKER, "1", set("metric.reporters", "com.example.Reporter")))).isEqualTo(
                new ConfigAlterations.Outcome(Errors.INVALID_REQUEST, "Cairn cannot load these plugin classes: they "
                        + "implement kafka-clients interfaces (MetricsReporter, KafkaPrincipalBuilder) and kafka-clients "
                        + "is not on Cairn's classpath; Cairn serves its metrics on its Prometheus endpoint "
                        + "(metrics.port) and builds principals as Kafka's DefaultKafkaPrincipalBuilder does "
                        + "(ssl.principal.mapping.rules): Set(metric.reporters)"));
        assertThat(only(resource(BROKER, "1", set("listener.name.ssl.principal.builder.class", "com.example.B"))))
                .extracting(ConfigAlterations.Outcome::message).asString()
                .endsWith(": Set(listener.name.ssl.principal.builder.class)");
    }
}
