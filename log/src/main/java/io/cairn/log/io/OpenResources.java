package io.cairn.log.io;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An explicit bound on open file handles or live index mappings shared by every partition of a log directory:
 * users register when they open ({@link #touch}) and forget when they close; {@link #enforce()} closes the least
 * recently opened ones beyond the bound. Closed resources reopen on their next use, so eviction costs latency,
 * never correctness.
 *
 * <p>Thread-safety: thread-safe. Eviction callbacks run in {@link #enforce()} without this object's lock held, and
 * callers must call {@code enforce()} while holding no lock of a resource (the log does it at the end of its
 * public operations), so an eviction never waits on a lock held by a thread that waits on this object.
 */
public final class OpenResources {

    private final int maxOpen;
    private final LinkedHashMap<Runnable, Boolean> open = new LinkedHashMap<>(16, 0.75f, true);

    public OpenResources(int maxOpen) {
        if (maxOpen < 1) {
            throw new IllegalArgumentException("maxOpen must be positive: " + maxOpen);
        }
        this.maxOpen = maxOpen;
    }

    /** A budget that never evicts. */
    public static OpenResources unbounded() {
        return new OpenResources(Integer.MAX_VALUE);
    }

    public int maxOpen() {
        return maxOpen;
    }

    /** Registers (or marks as recently used) a resource whose {@code evictor} closes it. */
    public synchronized void touch(Runnable evictor) {
        open.put(evictor, Boolean.TRUE);
    }

    /** The resource was closed by its owner. */
    public synchronized void forget(Runnable evictor) {
        open.remove(evictor);
    }

    public synchronized int openCount() {
        return open.size();
    }

    public synchronized boolean isOver() {
        return open.size() > maxOpen;
    }

    /** Closes least recently used resources until the count is within the bound. */
    public void enforce() {
        List<Runnable> victims;
        synchronized (this) {
            int excess = open.size() - maxOpen;
            if (excess <= 0) {
                return;
            }
            victims = new ArrayList<>(excess);
            for (Map.Entry<Runnable, Boolean> e : open.entrySet()) {
                if (victims.size() == excess) {
                    break;
                }
                victims.add(e.getKey());
            }
            for (Runnable victim : victims) {
                open.remove(victim);
            }
        }
        for (Runnable victim : victims) {
            victim.run();
        }
    }
}
