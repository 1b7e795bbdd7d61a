package io.cairn.broker.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Typed reads of raw {@code server.properties} strings with Kafka's messages for bad values.
 *
 * <p>Not thread-safe; used once while a {@link BrokerConfig} is built.
 */
final class ValueParser {

    private final Map<String, String> props;

    ValueParser(Map<String, String> props) {
        this.props = props;
    }

    String string(String key, String defaultValue) {
        String value = props.get(key);
        return value == null ? defaultValue : value.trim();
    }

    int intValue(String key, int defaultValue, int min) {
        long value = longValue(key, defaultValue, min);
        if (value > Integer.MAX_VALUE) {
            throw ConfigException.invalid(key, props.get(key), "value must be at most " + Integer.MAX_VALUE);
        }
        return (int) value;
    }

    long longValue(String key, long defaultValue, long min) {
        String raw = props.get(key);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        long value;
        try {
            value = Long.parseLong(raw.trim());
        } catch (NumberFormatException e) {
            throw ConfigException.invalid(key, raw, "not a number");
        }
        if (value < min) {
            throw ConfigException.invalid(key, raw, "value must be at least " + min);
        }
        return value;
    }

    boolean booleanValue(String key, boolean defaultValue) {
        String raw = props.get(key);
        if (raw == null || raw.isBlank()) {
            return defaultValue;
        }
        String value = raw.trim().toLowerCase(Locale.ROOT);
        if (!value.equals("true") && !value.equals("false")) {
            throw ConfigException.invalid(key, raw, "Expected value to be either true or false");
        }
        return Boolean.parseBoolean(value);
    }

    List<String> list(String key, String defaultValue) {
        List<String> items = new ArrayList<>();
        for (String item : string(key, defaultValue).split(",")) {
            if (!item.isBlank()) {
                items.add(item.trim());
            }
        }
        return List.copyOf(items);
    }
}
