package io.cairn.log.retention;

import io.cairn.log.LogConfig;
import io.cairn.log.PartitionLog;
import io.cairn.log.segment.LogSegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One retention pass over a partition (Kafka's {@code UnifiedLog.deleteOldSegments}): segments wholly below the
 * log start offset always go; with {@code cleanup.policy} containing {@code delete}, the oldest segments whose
 * newest timestamp is older than {@code retention.ms} and the oldest segments beyond {@code retention.bytes} go
 * too. Deletable segments are a prefix of the log and never include the active segment; when every segment has
 * expired by time the active one is rolled first, as Kafka does. The whole pass, the choice of segments as well
 * as the unlink, runs under the log's lock ({@link PartitionLog#deleteOldSegments} takes it): a scan outside it
 * could judge the active segment expired, then roll and delete it after a fresh batch landed in it. Stateless.
 */
public final class RetentionPolicy {

    private RetentionPolicy() {
    }

    /** Runs one pass under the log's lock; returns the number of segments deleted. */
    public static int apply(PartitionLog log) {
        if (!log.isLockedByCurrentThread()) {
            throw new IllegalStateException("retention runs under the lock of " + log);
        }
        LogConfig config = log.config();
        List<LogSegment> all = new ArrayList<>(log.segments());
        int deleted = 0;
        List<LogSegment> startBreach = new ArrayList<>();
        for (int i = 0; i + 1 < all.size(); i++) {
            if (all.get(i + 1).baseOffset() <= log.logStartOffset()) {
                startBreach.add(all.get(i));
            } else {
                break;
            }
        }
        log.unlinkSegments(startBreach, "log start offset breach");
        deleted += startBreach.size();
        if (!config.delete()) {
            return deleted;
        }
        deleted += byTime(log, config);
        deleted += bySize(log, config);
        return deleted;
    }

    private static int byTime(PartitionLog log, LogConfig config) {
        if (config.retentionMs() < 0) {
            return 0;
        }
        long now = log.time().milliseconds();
        List<LogSegment> all = new ArrayList<>(log.segments());
        List<LogSegment> victims = new ArrayList<>();
        for (LogSegment s : all) {
            if (now - s.largestTimestamp() > config.retentionMs()) {
                victims.add(s);
            } else {
                break;
            }
        }
        if (victims.size() == all.size() && !victims.isEmpty() && all.get(all.size() - 1).size() > 0) {
            log.roll();
        } else if (victims.size() == all.size() && !victims.isEmpty()) {
            victims.remove(victims.size() - 1);
        }
        log.unlinkSegments(victims, "retention.ms " + config.retentionMs() + " breached");
        return victims.size();
    }

    private static int bySize(PartitionLog log, LogConfig config) {
        if (config.retentionBytes() < 0) {
            return 0;
        }
        List<LogSegment> all = new ArrayList<>(log.segments());
        long excess = log.size() - config.retentionBytes();
        List<LogSegment> victims = new ArrayList<>();
        for (int i = 0; i + 1 < all.size(); i++) {
            LogSegment s = all.get(i);
            if (excess - s.size() >= 0) {
                victims.add(s);
                excess -= s.size();
            } else {
                break;
            }
        }
        log.unlinkSegments(victims, "retention.bytes " + config.retentionBytes() + " breached");
        return victims.size();
    }
}
