package io.cairn.log;

import io.cairn.wire.record.CompressionType;
import java.util.Locale;

/**
 * Topic-level settings of one partition log, under Kafka's names and with Kafka's defaults (see the {@link Builder}
 * setters). {@code durable} is Cairn's own: an append is reported only after its bytes are fsynced, with group
 * commit. Immutable; {@code PartitionLog.updateConfig} swaps the whole object.
 *
 * @param segmentBytes             {@code segment.bytes}: roll when the active segment would exceed it
 * @param segmentMs                {@code segment.ms}: roll when the active segment's first batch is this old
 * @param segmentJitterMs          {@code segment.jitter.ms}: a random amount subtracted per segment
 * @param segmentIndexBytes        {@code segment.index.bytes}: preallocated size of each index
 * @param indexIntervalBytes       {@code index.interval.bytes}: bytes of log between index entries
 * @param maxMessageBytes          {@code max.message.bytes}: largest batch accepted
 * @param flushMessages            {@code flush.messages}: fsync after this many unflushed messages
 * @param flushMs                  {@code flush.ms}: fsync when the oldest unflushed append is this old
 * @param durable                  fsync before reporting an append (group commit)
 * @param retentionMs              {@code retention.ms}: delete segments whose newest timestamp is older; -1 = never
 * @param retentionBytes           {@code retention.bytes}: delete oldest segments beyond this size; -1 = no limit
 * @param compact                  {@code cleanup.policy} contains {@code compact}
 * @param delete                   {@code cleanup.policy} contains {@code delete}
 * @param deleteRetentionMs        {@code delete.retention.ms}: how long tombstones survive compaction
 * @param minCleanableDirtyRatio   {@code min.cleanable.dirty.ratio}
 * @param minCompactionLagMs       {@code min.compaction.lag.ms}
 * @param logAppendTime            {@code message.timestamp.type=LogAppendTime}
 * @param timestampAfterMaxMs      {@code message.timestamp.after.max.ms}
 * @param timestampBeforeMaxMs     {@code message.timestamp.before.max.ms}
 * @param fileDeleteDelayMs        {@code file.delete.delay.ms}: deleted segments linger for readers
 * @param producerIdExpirationMs   {@code producer.id.expiration.ms}
 * @param compressionType          {@code compression.type}: {@code producer} keeps the producer's codec; a codec
 *                                 name ({@code uncompressed}, {@code gzip}, {@code snappy}, {@code lz4},
 *                                 {@code zstd}) makes the leader store batches with that codec
 * @param compressionGzipLevel     {@code compression.gzip.level}
 * @param compressionLz4Level      {@code compression.lz4.level}
 * @param compressionZstdLevel     {@code compression.zstd.level}
 * @param maxCompactionLagMs       {@code max.compaction.lag.ms}: a compacted log whose oldest dirty batch is this old
 *                                 is cleaned whatever its dirty ratio, and its active segment rolls this long after
 *                                 its first batch
 * @param preallocate              {@code preallocate}: a new segment's log file is allocated to {@code segmentBytes}
 *                                 at once and trimmed to its data when the segment rolls or the log closes
 */
public record LogConfig(int segmentBytes, long segmentMs, long segmentJitterMs, int segmentIndexBytes,
                        int indexIntervalBytes, int maxMessageBytes, long flushMessages, long flushMs, boolean durable,
                        long retentionMs, long retentionBytes, boolean compact, boolean delete,
                        long deleteRetentionMs, double minCleanableDirtyRatio, long minCompactionLagMs,
                        boolean logAppendTime, long timestampAfterMaxMs, long timestampBeforeMaxMs,
                        long fileDeleteDelayMs, long producerIdExpirationMs, String compressionType,
                        int compressionGzipLevel, int compressionLz4Level, int compressionZstdLevel,
                        long maxCompactionLagMs, boolean preallocate) {

    /** The {@code compression.type} that keeps the producer's codec (Kafka's default). */
    public static final String PRODUCER_COMPRESSION = "producer";

    /** Kafka's defaults. */
    public static LogConfig defaults() {
        return builder().build();
    }

    /**
     * The codec batches are stored with ({@code BrokerCompressionType.targetCompression}): the producer's for
     * {@code producer} (and for a value no Kafka version accepts, which the controller refuses anyway), else the
     * configured one.
     */
    public CompressionType targetCompression(CompressionType producerCodec) {
        String type = compressionType == null ? PRODUCER_COMPRESSION : compressionType.trim().toLowerCase(Locale.ROOT);
        switch (type) {
            case "uncompressed":
                return CompressionType.NONE;
            case "gzip":
            case "snappy":
            case "lz4":
            case "zstd":
                return CompressionType.forName(type);
            default:
                return producerCodec;
        }
    }

    /** The configured level of {@code codec}, or its default when the configured one is out of range. */
    public int compressionLevel(CompressionType codec) {
        int level;
        switch (codec) {
            case GZIP:
                level = compressionGzipLevel;
                break;
            case LZ4:
                level = compressionLz4Level;
                break;
            case ZSTD:
                level = compressionZstdLevel;
                break;
            default:
                return codec.defaultLevel();
        }
        return codec.isValidLevel(level) ? level : codec.defaultLevel();
    }

    /**
     * Kafka's {@code LogConfig.maxSegmentMs}: how old the active segment's first batch may get before the segment
     * rolls, {@code segment.ms}, or {@code max.compaction.lag.ms} when the log is compacted and that is shorter, so
     * that a record becomes cleanable within the lag.
     */
    public long maxSegmentMs() {
        return compact && maxCompactionLagMs > 0 ? Math.min(maxCompactionLagMs, segmentMs) : segmentMs;
    }

    /** Kafka's {@code initFileSize}: the length a new segment's log file is created at, 0 without preallocation. */
    public int initFileSize() {
        return preallocate ? segmentBytes : 0;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder seeded with this config. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.segmentBytes = segmentBytes;
        b.segmentMs = segmentMs;
        b.segmentJitterMs = segmentJitterMs;
        b.segmentIndexBytes = segmentIndexBytes;
        b.indexIntervalBytes = indexIntervalBytes;
        b.maxMessageBytes = maxMessageBytes;
        b.flushMessages = flushMessages;
        b.flushMs = flushMs;
        b.durable = durable;
        b.retentionMs = retentionMs;
        b.retentionBytes = retentionBytes;
        b.compact = compact;
        b.delete = delete;
        b.deleteRetentionMs = deleteRetentionMs;
        b.minCleanableDirtyRatio = minCleanableDirtyRatio;
        b.minCompactionLagMs = minCompactionLagMs;
        b.logAppendTime = logAppendTime;
        b.timestampAfterMaxMs = timestampAfterMaxMs;
        b.timestampBeforeMaxMs = timestampBeforeMaxMs;
        b.fileDeleteDelayMs = fileDeleteDelayMs;
        b.producerIdExpirationMs = producerIdExpirationMs;
        b.compressionType = compressionType;
        b.compressionGzipLevel = compressionGzipLevel;
        b.compressionLz4Level = compressionLz4Level;
        b.compressionZstdLevel = compressionZstdLevel;
        b.maxCompactionLagMs = maxCompactionLagMs;
        b.preallocate = preallocate;
        return b;
    }

    /** Mutable builder with Kafka's defaults. Not thread-safe. */
    public static final class Builder {
        private int segmentBytes = 1024 * 1024 * 1024;
        private long segmentMs = 7L * 24 * 60 * 60 * 1000;
        private long segmentJitterMs;
        private int segmentIndexBytes = 10 * 1024 * 1024;
        private int indexIntervalBytes = 4096;
        private int maxMessageBytes = 1024 * 1024 + 12;
        private long flushMessages = Long.MAX_VALUE;
        private long flushMs = Long.MAX_VALUE;
        private boolean durable;
        private long retentionMs = 7L * 24 * 60 * 60 * 1000;
        private long retentionBytes = -1L;
        private boolean compact;
        private boolean delete = true;
        private long deleteRetentionMs = 24L * 60 * 60 * 1000;
        private double minCleanableDirtyRatio = 0.5;
        private long minCompactionLagMs;
        private boolean logAppendTime;
        private long timestampAfterMaxMs = 60L * 60 * 1000;
        private long timestampBeforeMaxMs = Long.MAX_VALUE;
        private long fileDeleteDelayMs = 60_000L;
        private long producerIdExpirationMs = 24L * 60 * 60 * 1000;
        private String compressionType = PRODUCER_COMPRESSION;
        private int compressionGzipLevel = CompressionType.GZIP.defaultLevel();
        private int compressionLz4Level = CompressionType.LZ4.defaultLevel();
        private int compressionZstdLevel = CompressionType.ZSTD.defaultLevel();
        private long maxCompactionLagMs = Long.MAX_VALUE;
        private boolean preallocate;

        private Builder() {
        }

        public Builder segmentBytes(int v) {
            segmentBytes = v;
            return this;
        }

        public Builder segmentMs(long v) {
            segmentMs = v;
            return this;
        }

        public Builder segmentJitterMs(long v) {
            segmentJitterMs = v;
            return this;
        }

        public Builder segmentIndexBytes(int v) {
            segmentIndexBytes = v;
            return this;
        }

        public Builder indexIntervalBytes(int v) {
            indexIntervalBytes = v;
            return this;
        }

        public Builder maxMessageBytes(int v) {
            maxMessageBytes = v;
            return this;
        }

        public Builder flushMessages(long v) {
            flushMessages = v;
            return this;
        }

        public Builder flushMs(long v) {
            flushMs = v;
            return this;
        }

        public Builder durable(boolean v) {
            durable = v;
            return this;
        }

        public Builder retentionMs(long v) {
            retentionMs = v;
            return this;
        }

        public Builder retentionBytes(long v) {
            retentionBytes = v;
            return this;
        }

        /** {@code cleanup.policy}: "delete", "compact" or "compact,delete". */
        public Builder cleanupPolicy(String policy) {
            compact = policy.contains("compact");
            delete = policy.contains("delete");
            return this;
        }

        public Builder deleteRetentionMs(long v) {
            deleteRetentionMs = v;
            return this;
        }

        public Builder minCleanableDirtyRatio(double v) {
            minCleanableDirtyRatio = v;
            return this;
        }

        public Builder minCompactionLagMs(long v) {
            minCompactionLagMs = v;
            return this;
        }

        public Builder logAppendTime(boolean v) {
            logAppendTime = v;
            return this;
        }

        public Builder timestampAfterMaxMs(long v) {
            timestampAfterMaxMs = v;
            return this;
        }

        public Builder timestampBeforeMaxMs(long v) {
            timestampBeforeMaxMs = v;
            return this;
        }

        public Builder fileDeleteDelayMs(long v) {
            fileDeleteDelayMs = v;
            return this;
        }

        public Builder producerIdExpirationMs(long v) {
            producerIdExpirationMs = v;
            return this;
        }

        /** {@code compression.type}: {@code producer}, {@code uncompressed}, {@code gzip}, {@code snappy}, ... */
        public Builder compressionType(String v) {
            compressionType = v;
            return this;
        }

        public Builder compressionGzipLevel(int v) {
            compressionGzipLevel = v;
            return this;
        }

        public Builder compressionLz4Level(int v) {
            compressionLz4Level = v;
            return this;
        }

        public Builder compressionZstdLevel(int v) {
            compressionZstdLevel = v;
            return this;
        }

        public Builder maxCompactionLagMs(long v) {
            maxCompactionLagMs = v;
            return this;
        }

        public Builder preallocate(boolean v) {
            preallocate = v;
            return this;
        }

        public LogConfig build() {
            if (segmentBytes < 14 || segmentIndexBytes < 12 || maxMessageBytes < 0 || indexIntervalBytes < 0) {
                throw new IllegalArgumentException("invalid log config sizes");
            }
            return new LogConfig(segmentBytes, segmentMs, segmentJitterMs, segmentIndexBytes, indexIntervalBytes,
                maxMessageBytes, flushMessages, flushMs, durable, retentionMs, retentionBytes, compact, delete,
                deleteRetentionMs, minCleanableDirtyRatio, minCompactionLagMs, logAppendTime, timestampAfterMaxMs,
                timestampBeforeMaxMs, fileDeleteDelayMs, producerIdExpirationMs, compressionType, compressionGzipLevel,
                compressionLz4Level, compressionZstdLevel, maxCompactionLagMs, preallocate);
        }
    }
}
