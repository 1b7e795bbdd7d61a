package io.cairn.metadata.controller;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The topic-level configs Kafka 4.1 knows, with their types and validators, producing Kafka's INVALID_CONFIG
 * messages ({@code Invalid value X for configuration Y: ...}, {@code Unknown topic config name: Y}). Stateless,
 * thread-safe.
 */
public final class TopicConfigs {

    private enum Type { INT, LONG, DOUBLE, BOOLEAN, STRING, LIST, THROTTLED_REPLICAS }

    private record Def(Type type, double min, double max, List<String> validValues) {
    }

    private static final Map<String, Def> DEFS = new TreeMap<>();

    static {
        range("retention.ms", Type.LONG, -1, Long.MAX_VALUE);
        range("retention.bytes", Type.LONG, Long.MIN_VALUE, Long.MAX_VALUE);
        range("segment.bytes", Type.INT, 1024 * 1024, Integer.MAX_VALUE);
        range("segment.ms", Type.LONG, 1, Long.MAX_VALUE);
        range("segment.jitter.ms", Type.LONG, 0, Long.MAX_VALUE);
        range("segment.index.bytes", Type.INT, 4, Integer.MAX_VALUE);
        range("index.interval.bytes", Type.INT, 0, Integer.MAX_VALUE);
        range("max.message.bytes", Type.INT, 0, Integer.MAX_VALUE);
        range("min.insync.replicas", Type.INT, 1, Integer.MAX_VALUE);
        range("delete.retention.ms", Type.LONG, 0, Long.MAX_VALUE);
        range("min.compaction.lag.ms", Type.LONG, 0, Long.MAX_VALUE);
        range("max.compaction.lag.ms", Type.LONG, 1, Long.MAX_VALUE);
        range("min.cleanable.dirty.ratio", Type.DOUBLE, 0, 1);
        range("file.delete.delay.ms", Type.LONG, 0, Long.MAX_VALUE);
        range("flush.messages", Type.LONG, 1, Long.MAX_VALUE);
        range("flush.ms", Type.LONG, 0, Long.MAX_VALUE);
        range("message.timestamp.before.max.ms", Type.LONG, 0, Long.MAX_VALUE);
        range("message.timestamp.after.max.ms", Type.LONG, 0, Long.MAX_VALUE);
        range("local.retention.ms", Type.LONG, -2, Long.MAX_VALUE);
        range("local.retention.bytes", Type.LONG, -2, Long.MAX_VALUE);
        range("compression.gzip.level", Type.INT, -1, 9);
        range("compression.lz4.level", Type.INT, 1, 17);
        range("compression.zstd.level", Type.INT, -131072, 22);
        for (String flag : List.of("unclean.leader.election.enable", "preallocate", "remote.storage.enable",
                "remote.log.copy.disable", "remote.log.delete.on.disable")) {
            DEFS.put(flag, new Def(Type.BOOLEAN, 0, 0, List.of()));
        }
        DEFS.put("cleanup.policy", new Def(Type.LIST, 0, 0, List.of("compact", "delete")));
        DEFS.put("compression.type", new Def(Type.STRING, 0, 0,
                List.of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")));
        DEFS.put("message.timestamp.type", new Def(Type.STRING, 0, 0, List.of("CreateTime", "LogAppendTime")));
        DEFS.put("leader.replication.throttled.replicas", new Def(Type.THROTTLED_REPLICAS, 0, 0, List.of()));
        DEFS.put("follower.replication.throttled.replicas", new Def(Type.THROTTLED_REPLICAS, 0, 0, List.of()));
    }

    private TopicConfigs() {
    }

    private static void range(String name, Type type, double min, double max) {
        DEFS.put(name, new Def(type, min, max, List.of()));
    }

    /** The names of every known topic config. */
    public static Set<String> names() {
        return DEFS.keySet();
    }

    /** Kafka's message for the first invalid entry of {@code configs}, or empty when all are valid. */
    public static Optional<String> validate(Map<String, String> configs) {
        for (Map.Entry<String, String> entry : new TreeMap<>(configs).entrySet()) {
            Optional<String> error = validate(entry.getKey(), entry.getValue());
            if (error.isPresent()) {
                return error;
            }
        }
        return Optional.empty();
    }

    /** Kafka's message when {@code value} is not valid for {@code name}, or empty when it is. */
    public static Optional<String> validate(String name, String value) {
        Def def = DEFS.get(name);
        if (def == null) {
            return Optional.of("Unknown topic config name: " + name);
        }
        if (value == null) {
            return Optional.of("Null value not supported for topic configs: " + name);
        }
        String trimmed = value.trim();
        return switch (def.type()) {
            case INT, LONG, DOUBLE -> validateNumber(name, value, trimmed, def);
            case BOOLEAN -> trimmed.equalsIgnoreCase("true") || trimmed.equalsIgnoreCase("false")
                    ? Optional.empty() : invalid(name, value, "Expected value to be either true or false");
            case STRING -> def.validValues().contains(trimmed) ? Optional.empty()
                    : invalid(name, value, "String must be one of: " + String.join(", ", def.validValues()));
            case LIST -> validateList(name, value, trimmed, def);
            case THROTTLED_REPLICAS -> validateThrottledReplicas(name, value, trimmed);
        };
    }

    private static Optional<String> validateNumber(String name, String value, String trimmed, Def def) {
        double number;
        try {
            number = switch (def.type()) {
                case INT -> Integer.parseInt(trimmed);
                case LONG -> Long.parseLong(trimmed);
                default -> Double.parseDouble(trimmed);
            };
        } catch (NumberFormatException e) {
            return invalid(name, value, "Not a number of type " + def.type());
        }
        if (number < def.min()) {
            return invalid(name, value, "Value must be at least " + format(def.min(), def.type()));
        }
        if (number > def.max()) {
            return invalid(name, value, "Value must be no more than " + format(def.max(), def.type()));
        }
        return Optional.empty();
    }

    private static Optional<String> validateList(String name, String value, String trimmed, Def def) {
        if (def.validValues().isEmpty() || trimmed.isEmpty()) {
            return Optional.empty();
        }
        for (String item : trimmed.split(",")) {
            if (!def.validValues().contains(item.trim())) {
                return invalid(name, value, "String must be one of: " + String.join(", ", def.validValues()));
            }
        }
        return Optional.empty();
    }

    /** Kafka's {@code ThrottledReplicaListValidator}: {@code *}, or {@code partition:broker} items. */
    private static Optional<String> validateThrottledReplicas(String name, String value, String trimmed) {
        if (trimmed.equals("*")) {
            return Optional.empty();
        }
        for (String item : trimmed.split(",", -1)) {
            if (!item.trim().matches("([0-9]+:[0-9]+)?")) {
                return invalid(name, value, name + " must be the literal '*' or a list of replicas in the following "
                        + "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...");
            }
        }
        return Optional.empty();
    }

    private static String format(double bound, Type type) {
        return type == Type.DOUBLE ? Double.toString(bound) : Long.toString((long) bound);
    }

    private static Optional<String> invalid(String name, String value, String reason) {
        return Optional.of("Invalid value " + value + " for configuration " + name + ": " + reason);
    }
}
