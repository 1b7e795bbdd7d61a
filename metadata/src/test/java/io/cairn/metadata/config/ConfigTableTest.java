package io.cairn.metadata.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.config.ConfigKey.Mode;
import io.cairn.metadata.config.ConfigKey.Support;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.junit.jupiter.api.Test;

/**
 * The config table against Kafka 4.1.1's own ConfigDefs (loaded from the test classpath): every broker key of
 * {@code KafkaConfig} and every topic key of {@code LogConfig} is in the table with Kafka's type, default, importance
 * and internal flag, every topic key has Kafka's broker synonyms, the table has no Kafka key Kafka lacks, and for a
 * set of bad values per key Cairn's check fails exactly when Kafka's does, with Kafka's message.
 */
class ConfigTableTest {

    /** Broker rows that are not in KafkaConfig's ConfigDef, and why. */
    private static final Set<String> NOT_IN_KAFKA_CONFIG = Set.of(
            // Kafka's DynamicConfig.Broker: dynamic-only keys, outside KafkaConfig
            "leader.replication.throttled.rate", "follower.replication.throttled.rate",
            "replica.alter.log.dirs.io.max.bytes.per.second");

    /**
     * Keys whose values are checked elsewhere, and why: Kafka loads CLASS values as classes (Cairn loads no plugins;
     * replica.selector.class, the one class Cairn honours, is checked by the broker's config); MetadataConfig parses
     * the quorum's addresses.
     */
    private static final Set<String> CHECKED_ELSEWHERE = Set.of("controller.quorum.voters",
            "controller.quorum.bootstrap.servers");

    /** Values tried on every key. */
    private static final List<String> PROBES = List.of("abc", "-1", "0", "1", "-3", "17", "23", "99999999999",
            "1.5", "true", "yes", "delete", "compact,delete", "bogus", "CreateTime", "0:1,1:2", "*", "x:1", "",
            "-131073", "10", "2147483648", "-9223372036854775809", "broker", "broker,nope");

    private final ConfigTable table = ConfigTable.get();

    @Test
    void everyKafkaBrokerKeyIsInTheTableWithKafkasTypeDefaultImportanceAndInternalFlag() {
        // When
        List<String> mismatches = compare(AbstractKafkaConfig.CONFIG_DEF, true);

        // Then
        assertThat(mismatches).isEmpty();
    }

    @Test
    void everyKafkaTopicKeyIsInTheTableWithKafkasTypeDefaultImportanceAndInternalFlag() {
        // When
        List<String> mismatches = compare(LogConfig.configDefCopy(), false);

        // Then
        assertThat(mismatches).isEmpty();
    }

    @Test
    void theTableHasNoKafkaKeyThatKafkaLacks() {
        // Given
        Map<String, ConfigDef.ConfigKey> brokers = AbstractKafkaConfig.CONFIG_DEF.configKeys();
        Map<String, ConfigDef.ConfigKey> topics = LogConfig.configDefCopy().configKeys();

        // When
        List<String> extra = new ArrayList<>();
        table.brokerKeys().stream().filter(k -> k.support() != Support.CAIRN && !brokers.containsKey(k.name())
                && !NOT_IN_KAFKA_CONFIG.contains(k.name())).forEach(k -> extra.add(k.name()));
        table.topicKeys().stream().filter(k -> !topics.containsKey(k.name())).forEach(k -> extra.add(k.name()));

        // Then
        assertThat(extra).isEmpty();
        assertThat(NOT_IN_KAFKA_CONFIG).allSatisfy(name -> assertThat(table.broker(name).orElseThrow().mode())
                .isEqualTo(Mode.DYNAMIC_ONLY));
    }

    @Test
    void badValuesFailAsKafkasChecksFailThemWithKafkasMessages() {
        // Given
        List<String> mismatches = new ArrayList<>();

        // When
        probe(AbstractKafkaConfig.CONFIG_DEF, key -> table.broker(key), mismatches);
        probe(LogConfig.configDefCopy(), key -> table.topic(key), mismatches);

        // Then
        assertThat(mismatches).isEmpty();
    }

    @Test
    void everyTopicKeysBrokerSynonymsAreKafkasInOrderWithTheirUnits() {
        // Given
        Map<String, List<ConfigSynonym>> kafka = ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS;

        // When
        Map<String, List<String>> theirs = new TreeMap<>();
        kafka.forEach((topic, synonyms) -> theirs.put(topic, synonyms.stream()
                .map(s -> s.name() + "*" + s.converter().apply("1")).toList()));
        Map<String, List<String>> ours = new TreeMap<>();
        table.topicKeys().stream().filter(k -> !k.synonyms().isEmpty()).forEach(k -> ours.put(k.name(),
                k.synonyms().stream().map(s -> s.brokerKey() + "*" + s.factor()).toList()));

        // Then
        assertThat(ours).isEqualTo(theirs);
    }

    @Test
    void retentionAndRollSynonymsAreInKafkasPrecedenceWithTheirUnits() {
        // When
        ConfigKey retention = table.topic("retention.ms").orElseThrow();
        ConfigKey roll = table.topic("segment.ms").orElseThrow();

        // Then
        assertThat(retention.synonyms()).containsExactly(new ConfigKey.Synonym("log.retention.ms", 1),
                new ConfigKey.Synonym("log.retention.minutes", 60_000L),
                new ConfigKey.Synonym("log.retention.hours", 3_600_000L));
        assertThat(roll.synonyms()).containsExactly(new ConfigKey.Synonym("log.roll.ms", 1),
                new ConfigKey.Synonym("log.roll.hours", 3_600_000L));
        assertThat(table.brokerSynonyms("log.retention.hours")).containsExactly("log.retention.ms",
                "log.retention.minutes", "log.retention.hours");
        assertThat(table.brokerSynonyms("num.io.threads")).containsExactly("num.io.threads");
        assertThat(table.broker("log.retention.ms").orElseThrow().unit()).isEqualTo("ms");
        assertThat(table.broker("log.retention.hours").orElseThrow().unit()).isEqualTo("h");
    }

    private List<String> compare(ConfigDef def, boolean broker) {
        List<String> mismatches = new ArrayList<>();
        for (ConfigDef.ConfigKey kafka : new TreeMap<>(def.configKeys()).values()) {
            Optional<ConfigKey> ours = broker ? table.broker(kafka.name) : table.topic(kafka.name);
            if (ours.isEmpty()) {
                mismatches.add(kafka.name + ": missing");
                continue;
            }
            ConfigKey key = ours.get();
            String expected = kafka.hasDefault() ? ConfigDef.convertToString(kafka.defaultValue, kafka.type) : null;
            check(mismatches, kafka.name, "type", kafka.type.name(), key.type().name());
            check(mismatches, kafka.name, "default", expected, key.defaultValue());
            check(mismatches, kafka.name, "required", !kafka.hasDefault(), key.required());
            check(mismatches, kafka.name, "importance", kafka.importance.name(), key.importance());
            check(mismatches, kafka.name, "internal", kafka.internalConfig, key.mode() == Mode.INTERNAL);
            check(mismatches, kafka.name, "sensitive", kafka.type == ConfigDef.Type.PASSWORD, key.sensitive());
            if (key.documentation().isBlank()) {
                mismatches.add(kafka.name + ": no documentation");
            }
        }
        return mismatches;
    }

    private static void check(List<String> mismatches, String name, String what, Object kafka, Object ours) {
        if (!java.util.Objects.equals(kafka, ours)) {
            mismatches.add(name + ": " + what + " is " + ours + ", Kafka's " + kafka);
        }
    }

    private static void probe(ConfigDef def, java.util.function.Function<String, Optional<ConfigKey>> lookup,
                              List<String> mismatches) {
        for (ConfigDef.ConfigKey kafka : new TreeMap<>(def.configKeys()).values()) {
            if (kafka.type == ConfigDef.Type.CLASS || CHECKED_ELSEWHERE.contains(kafka.name)) {
                continue;
            }
            ConfigKey ours = lookup.apply(kafka.name).orElseThrow();
            for (String value : PROBES) {
                String expected = kafkaVerdict(kafka, value);
                String actual = ours.validate(value).orElse(null);
                if (!java.util.Objects.equals(expected, actual)) {
                    mismatches.add(kafka.name + "=" + value + ": Cairn says " + actual + ", Kafka " + expected);
                }
            }
        }
    }

    /** Kafka's message for {@code value}, or null when Kafka accepts it. */
    private static String kafkaVerdict(ConfigDef.ConfigKey kafka, String value) {
        try {
            Object parsed = ConfigDef.parseType(kafka.name, value, kafka.type);
            if (kafka.validator != null) {
                kafka.validator.ensureValid(kafka.name, parsed);
            }
            return null;
        } catch (ConfigException e) {
            return e.getMessage();
        }
    }
}
