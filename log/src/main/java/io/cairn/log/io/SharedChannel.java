package io.cairn.log.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * A reference-counted {@link FileChannel}: the segment holds one reference while the handle is open and every
 * {@code FileSlice} handed to a reader holds another, so evicting or deleting a segment never closes a channel a
 * zero-copy send still uses. The channel closes when the count reaches zero. Thread-safe (lock-free).
 */
public final class SharedChannel {

    private static final Logger LOGGER = LogManager.getLogger(SharedChannel.class);

    private final FileChannel channel;
    private final AtomicInteger refs = new AtomicInteger(1);

    public SharedChannel(FileChannel channel) {
        this.channel = channel;
    }

    public FileChannel channel() {
        return channel;
    }

    /** Takes a reference unless the channel is already closed; returns whether it did. */
    public boolean tryRetain() {
        while (true) {
            int n = refs.get();
            if (n <= 0) {
                return false;
            }
            if (refs.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Drops a reference, closing the channel with the last one. */
    public void release() {
        int n = refs.decrementAndGet();
        if (n == 0) {
            try {
                channel.close();
            } catch (IOException e) {
                LOGGER.warn("Closing a segment channel failed: {}", e.toString());
            }
        } else if (n < 0) {
            throw new IllegalStateException("channel released more often than retained");
        }
    }

    public int refCount() {
        return refs.get();
    }
}
