package io.cairn.metadata.config;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One row of the {@link ConfigTable}: a broker or topic key with Kafka's type, default, unit, importance, rule and
 * documentation, whether it may change at run time, and whether Cairn acts on it. Immutable, thread-safe.
 *
 * @param scope         broker or topic key
 * @param name          the key
 * @param type          Kafka's type
 * @param defaultValue  the default as DescribeConfigs shows it, or null when it is null or there is none
 * @param required      true when Kafka has no default (a value must be given)
 * @param unit          ms, s, min, h, bytes, bytes/s, or empty
 * @param importance    HIGH, MEDIUM or LOW
 * @param rule          the check besides the type
 * @param mode          read-only, dynamic, topic, ...
 * @param support       whether Cairn acts on it
 * @param synonyms      a topic key's broker keys in precedence order (empty for broker keys)
 * @param documentation what it does
 */
public record ConfigKey(Scope scope, String name, ConfigType type, String defaultValue, boolean required, String unit,
                        String importance, ConfigRule rule, Mode mode, Support support, List<Synonym> synonyms,
                        String documentation) {

    /** Which resource the key belongs to. */
    public enum Scope { BROKER, TOPIC }

    /** How the key may be set. */
    public enum Mode {
        /** Only in server.properties. */
        READ_ONLY,
        /** Also at run time, per broker or cluster-wide (KIP-226). */
        DYNAMIC,
        /** Only at run time (the replication throttles). */
        DYNAMIC_ONLY,
        /** A topic config. */
        TOPIC,
        /** Kafka's internal key: accepted, never described. */
        INTERNAL
    }

    /** What Cairn does with the key. */
    public enum Support {
        /** Cairn honours it. */
        ACTED,
        /** Kafka's key that Cairn accepts without acting on it. */
        KNOWN,
        /** Cairn's own key. */
        CAIRN
    }

    /**
     * A broker key that sets a topic key's default.
     *
     * @param brokerKey the broker key
     * @param factor    topic units per broker unit (3600000 for hours to ms)
     */
    public record Synonym(String brokerKey, long factor) {
    }

    public ConfigKey {
        synonyms = List.copyOf(synonyms);
    }

    /** Kafka's {@code maybeSensitive}: passwords are never shown. */
    public boolean sensitive() {
        return type == ConfigType.PASSWORD;
    }

    /** DescribeConfigs' read-only flag of a broker key: it cannot change at run time. */
    public boolean readOnly() {
        return mode == Mode.READ_ONLY || mode == Mode.INTERNAL;
    }

    /** Whether the key may be set at run time for a broker or the cluster. */
    public boolean dynamic() {
        return mode == Mode.DYNAMIC || mode == Mode.DYNAMIC_ONLY;
    }

    /** Whether DescribeConfigs lists the key (internal keys are not). */
    public boolean described() {
        return mode != Mode.INTERNAL;
    }

    /**
     * Kafka's message when {@code value} is not valid for this key ({@code Invalid value v for configuration k:
     * reason}), or empty when it is.
     */
    public Optional<String> validate(String value) {
        if (value == null) {
            return Optional.empty();
        }
        Object parsed;
        try {
            parsed = parse(value);
        } catch (IllegalArgumentException e) {
            return Optional.of(invalid(value, e.getMessage()));
        }
        return rule.check(name, parsed).map(v -> invalid(String.valueOf(v.value()), v.reason()));
    }

    private String invalid(String value, String reason) {
        return "Invalid value " + value + " for configuration " + name + ": " + reason;
    }

    /** The typed value of {@code value}, as Kafka's {@code ConfigDef.parseType}. */
    private Object parse(String value) {
        String trimmed = value.trim();
        try {
            return switch (type) {
                case INT -> Integer.parseInt(trimmed);
                case SHORT -> Short.parseShort(trimmed);
                case LONG -> Long.parseLong(trimmed);
                case DOUBLE -> Double.parseDouble(trimmed);
                case BOOLEAN -> parseBoolean(trimmed);
                case LIST -> trimmed.isEmpty() ? List.of() : new ArrayList<>(Arrays.stream(trimmed.split(",", -1))
                        .map(String::trim).toList());
                case STRING, CLASS -> trimmed;
                case PASSWORD -> value;
            };
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("Not a number of type " + type, e);
        }
    }

    private static Boolean parseBoolean(String trimmed) {
        String lower = trimmed.toLowerCase(Locale.ROOT);
        if (!lower.equals("true") && !lower.equals("false")) {
            throw new IllegalArgumentException("Expected value to be either true or false");
        }
        return Boolean.valueOf(lower);
    }
}
