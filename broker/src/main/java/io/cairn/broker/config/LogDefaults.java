package io.cairn.broker.config;

import io.cairn.isr.LogConfigs;
import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The broker keys that set the defaults of topic configs (Kafka's {@code LogConfig} synonyms:
 * {@code log.segment.bytes} for {@code segment.bytes}, {@code log.retention.hours} for {@code retention.ms}, ...),
 * as the topic rows of {@link ConfigTable} list them: the first synonym set in {@code server.properties} wins, so
 * {@code log.retention.ms} beats {@code .minutes} beats {@code .hours}, {@code log.roll.ms} beats {@code .hours}, and
 * {@code log.flush.interval.ms} beats {@code log.flush.scheduler.interval.ms} (Kafka's precedence); hours and minutes
 * become ms. {@code producer.id.expiration.ms}, a broker key every log follows, comes along under its own name
 * ({@link LogConfigs#PRODUCER_ID_EXPIRATION_MS}). The values themselves are checked with the rest of
 * {@code server.properties}.
 *
 * <p>Stateless and thread-safe.
 */
public final class LogDefaults {

    private LogDefaults() {
    }

    /**
     * The topic-config defaults set by {@code props}: topic key to value, with hours and minutes turned into ms.
     *
     * @throws ConfigException when a numeric value does not parse or overflows in ms
     */
    static Map<String, String> topicDefaults(Map<String, String> props) {
        Map<String, String> defaults = new LinkedHashMap<>();
        for (ConfigKey topic : ConfigTable.get().topicKeys()) {
            for (ConfigKey.Synonym s : topic.synonyms()) {
                String value = props.get(s.brokerKey());
                if (value == null) {
                    continue;
                }
                defaults.put(topic.name(), converted(topic, s, value));
                break;
            }
        }
        String producerIdExpirationMs = props.get(LogConfigs.PRODUCER_ID_EXPIRATION_MS);
        if (producerIdExpirationMs != null) {
            defaults.put(LogConfigs.PRODUCER_ID_EXPIRATION_MS, producerIdExpirationMs.trim());
        }
        return Map.copyOf(defaults);
    }

    private static String converted(ConfigKey topic, ConfigKey.Synonym s, String value) {
        String trimmed = value.trim();
        if (s.factor() == 1 || !topic.type().numeric()) {
            return trimmed;
        }
        try {
            return Long.toString(Math.multiplyExact(Long.parseLong(trimmed), s.factor()));
        } catch (NumberFormatException | ArithmeticException e) {
            throw ConfigException.invalid(s.brokerKey(), value, "not a number in range");
        }
    }
}
