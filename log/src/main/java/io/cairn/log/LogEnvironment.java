package io.cairn.log;

import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What the partitions of one log directory share: the clock, the file layer, the bounds on open file handles and
 * index mappings, and the executor that deletes files after {@code file.delete.delay.ms} ({@code null}: delete at
 * once), who is told of segment flushes, and whether the directory still takes writes. Immutable; its parts are
 * thread-safe.
 *
 * @param time      the clock
 * @param layer     how files are opened
 * @param handles   bound on open segment file handles
 * @param mappings  bound on mapped index files
 * @param scheduler background executor for delayed deletes, or {@code null}
 * @param flushListener told of every segment flush (the broker's {@code LogFlushRateAndTimeMs})
 * @param health    whether the directory still takes writes; a failed write marks it failed
 */
public record LogEnvironment(Time time, FileLayer layer, OpenResources handles, OpenResources mappings,
                             ScheduledExecutorService scheduler, LogFlushListener flushListener,
                             LogDirHealth health) {

    /** An environment whose directory's failure nobody is told of. */
    public LogEnvironment(Time time, FileLayer layer, OpenResources handles, OpenResources mappings,
                          ScheduledExecutorService scheduler, LogFlushListener flushListener) {
        this(time, layer, handles, mappings, scheduler, flushListener, LogDirHealth.unobserved());
    }

    /** An environment whose flushes nobody listens to. */
    public LogEnvironment(Time time, FileLayer layer, OpenResources handles, OpenResources mappings,
                          ScheduledExecutorService scheduler) {
        this(time, layer, handles, mappings, scheduler, LogFlushListener.NONE);
    }

    /** Unbounded resources on the real file system, deletes at once. */
    public static LogEnvironment of(Time time) {
        return new LogEnvironment(time, FileLayer.DEFAULT, OpenResources.unbounded(), OpenResources.unbounded(),
            null);
    }

    public LogEnvironment withLayer(FileLayer newLayer) {
        return new LogEnvironment(time, newLayer, handles, mappings, scheduler, flushListener, health);
    }
}
