package io.cairn.metadata.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The check a key's value must pass besides its type, written in the table as a short rule ({@code >=1},
 * {@code 0..1}, {@code 1..9|-1}, {@code one-of:a,b}, {@code one-of-ci:a,b}, {@code each-of:a,b}, {@code non-null},
 * {@code replicas}), with Kafka's wording of the reason a value fails it. Immutable, thread-safe.
 */
public final class ConfigRule {

    private enum Kind { NONE, AT_LEAST, BETWEEN, BETWEEN_OR, ONE_OF, ONE_OF_CI, EACH_OF, NON_NULL, NON_EMPTY, REPLICAS }

    /**
     * A failed check: Kafka names the typed value (a list item, {@code -1.0} for a DOUBLE) and the reason.
     *
     * @param value  the value the message shows
     * @param reason why it fails
     */
    record Violation(Object value, String reason) {
    }

    static final ConfigRule NONE = new ConfigRule(Kind.NONE, "", "", "", List.of());

    private final Kind kind;
    private final String min;
    private final String max;
    private final String or;
    private final List<String> values;

    private ConfigRule(Kind kind, String min, String max, String or, List<String> values) {
        this.kind = kind;
        this.min = min;
        this.max = max;
        this.or = or;
        this.values = values;
    }

    /** Reads a rule of the table; {@code key} names the row in the error. */
    static ConfigRule parse(String key, String text) {
        if (text.isEmpty()) {
            return NONE;
        }
        if (text.startsWith(">=")) {
            return new ConfigRule(Kind.AT_LEAST, text.substring(2), "", "", List.of());
        }
        int colon = text.indexOf(':');
        if (colon > 0) {
            List<String> items = List.of(text.substring(colon + 1).split(","));
            return switch (text.substring(0, colon)) {
                case "one-of" -> new ConfigRule(Kind.ONE_OF, "", "", "", items);
                case "one-of-ci" -> new ConfigRule(Kind.ONE_OF_CI, "", "", "", items);
                case "each-of" -> new ConfigRule(Kind.EACH_OF, "", "", "", items);
                default -> throw new IllegalStateException("unknown rule " + text + " of " + key);
            };
        }
        if (text.equals("non-empty")) {
            return new ConfigRule(Kind.NON_EMPTY, "", "", "", List.of());
        }
        if (text.equals("non-null")) {
            return new ConfigRule(Kind.NON_NULL, "", "", "", List.of());
        }
        if (text.equals("replicas")) {
            return new ConfigRule(Kind.REPLICAS, "", "", "", List.of());
        }
        int dots = text.indexOf("..", 1);
        if (dots < 0) {
            throw new IllegalStateException("unknown rule " + text + " of " + key);
        }
        int bar = text.indexOf('|');
        String upper = bar < 0 ? text.substring(dots + 2) : text.substring(dots + 2, bar);
        return new ConfigRule(bar < 0 ? Kind.BETWEEN : Kind.BETWEEN_OR, text.substring(0, dots), upper,
                bar < 0 ? "" : text.substring(bar + 1), List.of());
    }

    /** Why {@code parsed} (the typed value: Number, String or List of String) fails the rule, or empty. */
    Optional<Violation> check(String name, Object parsed) {
        return switch (kind) {
            case NONE -> Optional.empty();
            case AT_LEAST -> below((Number) parsed, min) ? violation(parsed, "Value must be at least " + min)
                    : Optional.empty();
            case BETWEEN -> between((Number) parsed);
            case BETWEEN_OR -> ((Number) parsed).doubleValue() == Double.parseDouble(or) ? Optional.empty()
                    : between((Number) parsed).map(v -> new Violation(parsed, "Value must be between " + min + " and "
                    + max + " or equal to " + or));
            case ONE_OF -> values.contains((String) parsed) ? Optional.empty()
                    : violation(parsed, "String must be one of: " + String.join(", ", values));
            case ONE_OF_CI -> oneOfIgnoringCase((String) parsed) ? Optional.empty()
                    : violation(parsed, "String must be one of (case insensitive): " + String.join(", ", values));
            case EACH_OF -> eachOf(parsed);
            case NON_NULL -> parsed == null ? violation(null, "entry must be non null") : Optional.empty();
            case NON_EMPTY -> "".equals(parsed) ? violation(parsed, "String must be non-empty") : Optional.empty();
            case REPLICAS -> replicas(name, parsed);
        };
    }

    private static Optional<Violation> violation(Object value, String reason) {
        return Optional.of(new Violation(value, reason));
    }

    private Optional<Violation> between(Number value) {
        if (below(value, min)) {
            return violation(value, "Value must be at least " + min);
        }
        if (value.doubleValue() > Double.parseDouble(max)) {
            return violation(value, "Value must be no more than " + max);
        }
        return Optional.empty();
    }

    private static boolean below(Number value, String bound) {
        return value.doubleValue() < Double.parseDouble(bound);
    }

    private boolean oneOfIgnoringCase(String value) {
        return values.stream().anyMatch(v -> v.toUpperCase(Locale.ROOT).equals(value.toUpperCase(Locale.ROOT)));
    }

    @SuppressWarnings("unchecked")
    private Optional<Violation> eachOf(Object parsed) {
        for (String item : (List<String>) parsed) {
            if (!values.contains(item)) {
                return violation(item, "String must be one of: " + String.join(", ", values));
            }
        }
        return Optional.empty();
    }

    /** Kafka's throttled-replicas rule: {@code *}, or {@code partition:broker} items. */
    @SuppressWarnings("unchecked")
    private static Optional<Violation> replicas(String name, Object parsed) {
        List<String> items = new ArrayList<>((List<String>) parsed);
        if (items.size() == 1 && items.get(0).equals("*")) {
            return Optional.empty();
        }
        for (String item : items) {
            if (!item.matches("([0-9]+:[0-9]+)?")) {
                return violation(items, name + " must be the literal '*' or a list of replicas in the following "
                        + "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
            }
        }
        return Optional.empty();
    }
}
