package io.cairn.wire.record;

import java.util.zip.Deflater;

/**
 * The compression codec of a record batch: bits 0-2 of the batch attributes, with Kafka's ids, config names and
 * level ranges ({@code compression.gzip.level}, {@code compression.lz4.level}, {@code compression.zstd.level}).
 * Thread-safe: an immutable enum.
 */
public enum CompressionType {
    NONE(0, "none", 0, 0, 0),
    GZIP(1, "gzip", Deflater.BEST_SPEED, Deflater.BEST_COMPRESSION, Deflater.DEFAULT_COMPRESSION),
    SNAPPY(2, "snappy", 0, 0, 0),
    LZ4(3, "lz4", 1, 17, 9),
    // zstd accepts negative "fast" levels down to -(1 << 17); Kafka's range is the same.
    ZSTD(4, "zstd", -131072, 22, 3);

    private final int id;
    private final String configName;
    private final int minLevel;
    private final int maxLevel;
    private final int defaultLevel;

    CompressionType(int id, String configName, int minLevel, int maxLevel, int defaultLevel) {
        this.id = id;
        this.configName = configName;
        this.minLevel = minLevel;
        this.maxLevel = maxLevel;
        this.defaultLevel = defaultLevel;
    }

    /** The id in the batch attributes. */
    public int id() {
        return id;
    }

    /** The name in {@code compression.type} configs ("gzip"). */
    public String configName() {
        return configName;
    }

    public int minLevel() {
        return minLevel;
    }

    public int maxLevel() {
        return maxLevel;
    }

    /** The level used when none is configured (gzip's is {@link Deflater#DEFAULT_COMPRESSION}). */
    public int defaultLevel() {
        return defaultLevel;
    }

    /** Whether {@code level} is accepted: the default level, or a level in {@code [minLevel, maxLevel]}. */
    public boolean isValidLevel(int level) {
        return level == defaultLevel || (level >= minLevel && level <= maxLevel);
    }

    /**
     * The type with this attribute id.
     *
     * @throws IllegalArgumentException for an id outside 0..4 (Kafka's message)
     */
    public static CompressionType forId(int id) {
        switch (id) {
            case 0:
                return NONE;
            case 1:
                return GZIP;
            case 2:
                return SNAPPY;
            case 3:
                return LZ4;
            case 4:
                return ZSTD;
            default:
                throw new IllegalArgumentException("Unknown compression type id: " + id);
        }
    }

    /**
     * The type with this config name ("none", "gzip", "snappy", "lz4", "zstd").
     *
     * @throws IllegalArgumentException for any other name
     */
    public static CompressionType forName(String name) {
        for (CompressionType type : values()) {
            if (type.configName.equals(name)) {
                return type;
            }
        }
        throw new IllegalArgumentException("Unknown compression name: " + name);
    }
}
