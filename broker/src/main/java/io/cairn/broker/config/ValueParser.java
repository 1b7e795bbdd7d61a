package io.cairn.broker.config;

import io.cairn.metadata.config.ConfigKey;
import io.cairn.metadata.config.ConfigTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Typed reads of raw {@code server.properties} strings with Kafka's messages for bad values; a key read without an
 * explicit default takes its default from {@link ConfigTable}.
 *
 * <p>Not thread-safe; used once while a {@link BrokerConfig} is built.
 */
final class ValueParser {

    private final Map<String, String> props;

    ValueParser(Map<String, String> props) {
        this.props = props;
    }

    /** The table's default of {@code key} ({@code ""} for a null default). */
    private static String tableDefault(String key) {
        ConfigKey row = ConfigTable.get().broker(key).orElseThrow(() -> new IllegalStateException(key
                + " is not in the config table"));
        return row.defaultValue() == null ? "" : row.defaultValue();
    }

    String string(String key) {
        return string(key, tableDefault(key));
    }

    int intValue(String key, int min) {
        return intValue(key, Integer.parseInt(tableDefault(key)), min);
    }

    long longValue(String key, long min) {
        return longValue(key, Long.parseLong(tableDefault(key)), min);
    }

    boolean booleanValue(String key) {
        return booleanValue(key, Boolean.parseBoolean(tableDefault(key)));
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

    /** A DOUBLE key's value, or the table's default. */
    double doubleValue(String key) {
        String raw = props.get(key);
        if (raw == null || raw.isBlank()) {
            return Double.parseDouble(tableDefault(key));
        }
        try {
            return Double.parseDouble(raw.trim());
        } catch (NumberFormatException e) {
            throw ConfigException.invalid(key, raw, "not a number");
        }
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
