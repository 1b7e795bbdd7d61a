package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsResourceResult;
import io.cairn.wire.message.DescribeConfigsResponseData.DescribeConfigsSynonym;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** DescribeConfigs entries from the config table: types, documentation, flags, Kafka's synonym groups and sources. */
class ConfigEntriesTest {

    private static final byte LONG = 5;
    private static final byte INT = 3;
    private static final byte PASSWORD = 9;

    @Test
    void aBrokerKeyHasKafkasTypeDocumentationReadOnlyFlagAndDefault() {
        // Given
        ConfigEntries entries = new ConfigEntries(Map.of("node.id", "1"), Map.of());

        // When
        List<DescribeConfigsResourceResult> configs = entries.broker(Map.of(), Map.of(), true, true);

        // Then
        DescribeConfigsResourceResult threads = find(configs, "num.io.threads");
        assertThat(threads.value()).isEqualTo("8");
        assertThat(threads.configType()).isEqualTo(INT);
        assertThat(threads.readOnly()).isFalse();
        assertThat(threads.configSource()).isEqualTo(ConfigEntries.DEFAULT_CONFIG);
        assertThat(threads.documentation()).isNotBlank();
        DescribeConfigsResourceResult dirs = find(configs, "log.retention.check.interval.ms");
        assertThat(dirs.readOnly()).isTrue();
        assertThat(dirs.configType()).isEqualTo(LONG);
        assertThat(find(configs, "broker.id").value()).isEqualTo("1");
        assertThat(configs).noneMatch(c -> c.name().startsWith("internal."))
                .noneMatch(c -> c.name().equals("leader.replication.throttled.rate"));
    }

    @Test
    void aPerListenerKeyTakesItsKeysTypeAndSensitivityWithKafkasSynonyms() {
        // Given: a listener's dynamic key store over the static global one
        ConfigEntries entries = new ConfigEntries(Map.of("ssl.keystore.location", "/static.p12"), Map.of());
        Map<String, String> dynamic = Map.of("listener.name.ssl.ssl.keystore.location", "/new.p12",
                "listener.name.ssl.ssl.keystore.password", "secret");

        // When
        List<DescribeConfigsResourceResult> configs = entries.broker(dynamic, Map.of(), true, false);

        // Then: as Kafka's ConfigHelper: the value shown, the password not, both read-only (the key itself is the
        // dynamic one), the synonyms the listener's key then the key it overrides
        DescribeConfigsResourceResult location = find(configs, "listener.name.ssl.ssl.keystore.location");
        assertThat(location.value()).isEqualTo("/new.p12");
        assertThat(location.isSensitive()).isFalse();
        assertThat(location.readOnly()).isTrue();
        assertThat(location.configType()).isEqualTo((byte) 2);
        assertThat(location.configSource()).isEqualTo(ConfigEntries.DYNAMIC_BROKER_CONFIG);
        assertThat(location.synonyms()).extracting(DescribeConfigsSynonym::name, DescribeConfigsSynonym::value,
                DescribeConfigsSynonym::source).containsExactly(
                org.assertj.core.groups.Tuple.tuple("listener.name.ssl.ssl.keystore.location", "/new.p12",
                        ConfigEntries.DYNAMIC_BROKER_CONFIG),
                org.assertj.core.groups.Tuple.tuple("ssl.keystore.location", "/static.p12",
                        ConfigEntries.STATIC_BROKER_CONFIG));
        DescribeConfigsResourceResult password = find(configs, "listener.name.ssl.ssl.keystore.password");
        assertThat(password.isSensitive()).isTrue();
        assertThat(password.value()).isNull();
        assertThat(password.configType()).isEqualTo(PASSWORD);
        assertThat(password.synonyms()).singleElement().satisfies(s -> assertThat(s.value()).isNull());
    }

    @Test
    void aPasswordIsSensitiveAndItsValueIsNeverShown() {
        // Given
        ConfigEntries entries = new ConfigEntries(Map.of("ssl.keystore.password", "secret"), Map.of());

        // When
        DescribeConfigsResourceResult password = find(entries.broker(Map.of(), Map.of(), true, false),
                "ssl.keystore.password");

        // Then
        assertThat(password.isSensitive()).isTrue();
        assertThat(password.value()).isNull();
        assertThat(password.configType()).isEqualTo(PASSWORD);
        assertThat(password.documentation()).isNull();
        assertThat(password.synonyms()).singleElement().satisfies(s -> {
            assertThat(s.value()).isNull();
            assertThat(s.source()).isEqualTo(ConfigEntries.STATIC_BROKER_CONFIG);
        });
    }

    @Test
    void retentionSynonymsFollowKafkasGroupAndPrecedence() {
        // Given
        ConfigEntries entries = new ConfigEntries(Map.of("log.retention.minutes", "30"), Map.of());

        // When
        List<DescribeConfigsResourceResult> broker = entries.broker(Map.of(), Map.of(), true, false);
        List<DescribeConfigsResourceResult> topic = entries.topic(Map.of(), Map.of(), Map.of(), true, false);

        // Then: log.retention.ms has no default, so it shows nothing; .minutes is set; .hours keeps its default
        assertThat(find(broker, "log.retention.ms").synonyms()).isEmpty();
        assertThat(names(find(broker, "log.retention.minutes").synonyms())).containsExactly(
                "STATIC_BROKER_CONFIG:log.retention.minutes=30", "DEFAULT_CONFIG:log.retention.hours=168");
        assertThat(names(find(broker, "log.retention.hours").synonyms()))
                .containsExactly("DEFAULT_CONFIG:log.retention.hours=168");
        DescribeConfigsResourceResult retention = find(topic, "retention.ms");
        assertThat(retention.value()).isEqualTo("1800000");
        assertThat(retention.configType()).isEqualTo(LONG);
        assertThat(retention.synonyms()).isEmpty();
    }

    @Test
    void aTopicOverrideComesFirstThenTheBrokerSynonymsThenTheDefault() {
        // Given
        ConfigEntries entries = new ConfigEntries(Map.of("log.segment.bytes", "2097152"), Map.of());

        // When
        List<DescribeConfigsResourceResult> topic = entries.topic(Map.of("cleanup.policy", "compact"), Map.of(),
                Map.of(), true, true);

        // Then
        assertThat(names(find(topic, "cleanup.policy").synonyms())).containsExactly(
                "TOPIC_CONFIG:cleanup.policy=compact", "DEFAULT_CONFIG:log.cleanup.policy=delete");
        DescribeConfigsResourceResult segment = find(topic, "segment.bytes");
        assertThat(segment.value()).isEqualTo("2097152");
        assertThat(segment.configSource()).isEqualTo(ConfigEntries.STATIC_BROKER_CONFIG);
        assertThat(names(segment.synonyms())).containsExactly("STATIC_BROKER_CONFIG:log.segment.bytes=2097152",
                "DEFAULT_CONFIG:log.segment.bytes=1073741824");
        assertThat(segment.documentation()).isNotBlank();
        assertThat(topic).noneMatch(c -> c.name().equals("internal.segment.bytes"));
    }

    @Test
    void theClusterDefaultResourceListsOnlyItsDynamicDefaults() {
        // Given
        ConfigEntries entries = new ConfigEntries(Map.of(), Map.of());

        // When
        List<DescribeConfigsResourceResult> defaults = entries.clusterDefaults(
                Map.of("follower.replication.throttled.rate", "2000"), true, false);

        // Then
        assertThat(defaults).singleElement().satisfies(c -> {
            assertThat(c.value()).isEqualTo("2000");
            assertThat(c.configSource()).isEqualTo(ConfigEntries.DYNAMIC_DEFAULT_BROKER_CONFIG);
            assertThat(c.readOnly()).isFalse();
            assertThat(c.configType()).isEqualTo(LONG);
        });
    }

    private static DescribeConfigsResourceResult find(List<DescribeConfigsResourceResult> configs, String name) {
        return configs.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    private static List<String> names(List<DescribeConfigsSynonym> synonyms) {
        return synonyms.stream().map(s -> source(s.source()) + ":" + s.name() + "=" + s.value()).toList();
    }

    private static String source(byte id) {
        return switch (id) {
            case 1 -> "TOPIC_CONFIG";
            case 2 -> "DYNAMIC_BROKER_CONFIG";
            case 3 -> "DYNAMIC_DEFAULT_BROKER_CONFIG";
            case 4 -> "STATIC_BROKER_CONFIG";
            default -> "DEFAULT_CONFIG";
        };
    }
}
