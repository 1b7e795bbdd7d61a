package io.cairn.log;

import java.util.concurrent.atomic.AtomicLong;

/** A clock tests move by hand. Thread-safe. */
public final class MockTime implements Time {

    private final AtomicLong millis;
    private final AtomicLong nanos = new AtomicLong();

    public MockTime() {
        this(1_700_000_000_000L);
    }

    public MockTime(long startMs) {
        this.millis = new AtomicLong(startMs);
    }

    @Override
    public long milliseconds() {
        return millis.get();
    }

    @Override
    public long nanoseconds() {
        return nanos.get();
    }

    /** Moves the clock forward. */
    public void sleep(long ms) {
        millis.addAndGet(ms);
        nanos.addAndGet(ms * 1_000_000L);
    }

    /** Moves the clock forward to {@code ms}; a clock never goes back, so an earlier time is an error. */
    public void setCurrentTimeMs(long ms) {
        long now = millis.get();
        if (ms < now) {
            throw new IllegalArgumentException("Setting the clock back from " + now + " ms to " + ms + " ms");
        }
        sleep(ms - now);
    }
}
