package io.cairn.broker.net;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Kafka's {@code queued.max.request.bytes}: a budget of request bytes shared by every connection of the broker.
 * A connection reserves a request's size as soon as the size prefix is read, before the body is buffered, and
 * releases it when the request's dispatch stage completed; a connection that finds the budget spent stops reading
 * until bytes are released. Like Kafka's non-strict {@code SimpleMemoryPool}, a reservation succeeds whenever any
 * budget is left, even if it overdraws it, so a single request larger than the budget is still served.
 *
 * <p>Thread-safe: reservations and releases come from every network thread.
 */
final class RequestMemoryPool {

    private final long capacity;
    /** Written and read by every network thread (CAS); may go negative through overdraw. */
    private final AtomicLong available;
    private final Queue<Runnable> waiters = new ConcurrentLinkedQueue<>();

    /** @param capacity the budget in bytes, or a value &lt;= 0 for no bound (Kafka's default -1) */
    RequestMemoryPool(long capacity) {
        this.capacity = capacity;
        this.available = new AtomicLong(capacity);
    }

    boolean bounded() {
        return capacity > 0;
    }

    /** Reserves {@code bytes} when any budget is left. */
    boolean tryReserve(int bytes) {
        if (!bounded()) {
            return true;
        }
        while (true) {
            long left = available.get();
            if (left <= 0) {
                return false;
            }
            if (available.compareAndSet(left, left - bytes)) {
                return true;
            }
        }
    }

    void release(int bytes) {
        if (!bounded()) {
            return;
        }
        available.addAndGet(bytes);
        wakeWaiters();
    }

    /** Runs {@code wakeUp} once budget is available again (at once if it already is). */
    void awaitBudget(Runnable wakeUp) {
        waiters.add(wakeUp);
        wakeWaiters();
    }

    private void wakeWaiters() {
        Runnable waiter;
        while (available.get() > 0 && (waiter = waiters.poll()) != null) {
            waiter.run();
        }
    }

    long available() {
        return available.get();
    }
}
