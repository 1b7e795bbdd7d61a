package io.cairn.log;

import static io.cairn.log.TestBatches.values;
import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.io.FileLayer;
import io.cairn.log.io.OpenResources;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code flush.messages} as Kafka's {@code UnifiedLog.append} honours it: the count of unflushed messages is the log
 * end offset minus the recovery point ({@code LocalLog.unflushedMessages}), and the append that reaches it is
 * reported only once flushed, whatever other appenders do meanwhile.
 */
class FlushTest {

    @TempDir
    Path tmp;

    private final MockTime time = new MockTime();

    /** A file layer whose {@code force} parks one chosen thread until released. */
    private static final class ParkingLayer implements FileLayer {
        final AtomicReference<Thread> parkThread = new AtomicReference<>();
        final CountDownLatch parked = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public FileChannel open(Path path, java.nio.file.OpenOption... options) throws IOException {
            return new DelegatingFileChannel(FileChannel.open(path, options)) {
                @Override
                public void force(boolean metaData) throws IOException {
                    if (parkThread.compareAndSet(Thread.currentThread(), null)) {
                        parked.countDown();
                        try {
                            release.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    super.force(metaData);
                }
            };
        }
    }

    @Test
    void messagesAppendedDuringAFlushStillCountTowardsFlushMessages() throws Exception {
        // Given flush.messages 3, one unflushed message, and a flush of it that is slow to fsync
        ParkingLayer layer = new ParkingLayer();
        PartitionLog log = PartitionLog.open(tmp.resolve("f-0"), LogConfig.builder().flushMessages(3).build(),
            LogEnvironment.of(time).withLayer(layer), true);
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        CompletableFuture<Void> slowFlush = new CompletableFuture<>();
        Thread flusher = new Thread(() -> {
            try {
                log.flush(1);
                slowFlush.complete(null);
            } catch (RuntimeException e) {
                slowFlush.completeExceptionally(e);
            }
        });
        layer.parkThread.set(flusher);
        flusher.start();
        assertThat(layer.parked.await(30, TimeUnit.SECONDS)).isTrue();

        // When one message is appended while that fsync runs, then two more after it
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);
        layer.release.countDown();
        slowFlush.get(30, TimeUnit.SECONDS);
        long afterSlowFlush = log.recoveryPoint();
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);
        long twoUnflushed = log.recoveryPoint();
        log.appendAsLeader(values(time.milliseconds(), "d"), 0, AppendOrigin.CLIENT);

        // Then the third unflushed message (b, c, d) is what triggers the flush
        assertThat(afterSlowFlush).isEqualTo(1);
        assertThat(twoUnflushed).isEqualTo(1);
        assertThat(log.recoveryPoint()).isEqualTo(4);
        log.close();
    }

    @Test
    void everySegmentFlushIsTimedForTheFlushListenerButNotAnAppendBelowFlushMessages() {
        // Given flush.messages 2, and a file layer whose fsync takes 7 ms of the clock
        List<Long> flushes = Collections.synchronizedList(new ArrayList<>());
        FileLayer slowForce = (path, options) -> new DelegatingFileChannel(FileChannel.open(path, options)) {
            @Override
            public void force(boolean metaData) throws IOException {
                time.sleep(7);
                super.force(metaData);
            }
        };
        LogEnvironment env = new LogEnvironment(time, slowForce, io.cairn.log.io.OpenResources.unbounded(),
            io.cairn.log.io.OpenResources.unbounded(), null, flushes::add);
        PartitionLog log = PartitionLog.open(tmp.resolve("t-0"), LogConfig.builder().flushMessages(2).build(), env,
            true);

        // When one append stays below flush.messages, the second reaches it, then a roll flushes the third's segment
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        int belowFlushMessages = flushes.size();
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);
        int atFlushMessages = flushes.size();
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);
        log.roll();

        // Then one timed flush per segment flushed, each at least its fsync's 7 ms
        assertThat(belowFlushMessages).isZero();
        assertThat(atFlushMessages).isEqualTo(1);
        assertThat(flushes).hasSize(2).allSatisfy(nanos -> assertThat(nanos).isGreaterThanOrEqualTo(7_000_000L));
        log.close();
    }

    @Test
    void aLaterRollsBackgroundFlushNeverMovesTheRecoveryPointPastASegmentNotFlushedYet() throws Exception {
        // Given: two background threads, and the first segment's fsync on one of them parked until released
        String first = "00000000000000000000.log";
        AtomicInteger firstForced = new AtomicInteger();
        CountDownLatch parked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean parkOnce = new AtomicBoolean(true);
        FileLayer layer = new FileLayer() {
            @Override
            public FileChannel open(Path path, java.nio.file.OpenOption... options) throws IOException {
                boolean isFirst = path.getFileName().toString().equals(first);
                return new DelegatingFileChannel(FileChannel.open(path, options)) {
                    @Override
                    public void force(boolean metaData) throws IOException {
                        if (isFirst && Thread.currentThread().getName().startsWith(Scheduler.THREAD_NAME_PREFIX)
                                && parkOnce.compareAndSet(true, false)) {
                            parked.countDown();
                            awaitQuietly(release);
                        }
                        super.force(metaData);
                        if (isFirst) {
                            firstForced.incrementAndGet();
                        }
                    }
                };
            }
        };
        try (Scheduler scheduler = new Scheduler(2)) {
            LogEnvironment env = new LogEnvironment(time, layer, OpenResources.unbounded(),
                OpenResources.unbounded(), scheduler.tasks("test"));
            PartitionLog log = PartitionLog.open(tmp.resolve("r-0"), LogConfig.defaults(), env, true);
            log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
            log.roll();
            assertThat(parked.await(10, TimeUnit.SECONDS)).isTrue();

            // When: a second roll, whose background flush runs while the first one is parked
            log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);
            log.roll();

            // Then: the recovery point reaches 2 only with the first segment fsynced (the second flush did it)
            Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> log.recoveryPoint() == 2);
            assertThat(firstForced.get()).isPositive();
            release.countDown();
            log.close();
        } finally {
            release.countDown();
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void theFlushOfARolledSegmentRestartsTheFlushMsClock() {
        // Given flush.ms 1000 and a segment rolled (and so flushed) 900 ms after the last flush
        PartitionLog log = PartitionLog.open(tmp.resolve("r-0"), LogConfig.builder().flushMs(1000).build(),
            LogEnvironment.of(time), true);
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        time.sleep(900);
        log.roll();
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);

        // When the flusher looks 100 ms later, then 1000 ms after the roll
        time.sleep(100);
        log.maybeFlushByTime();
        long early = log.recoveryPoint();
        time.sleep(900);
        log.maybeFlushByTime();

        // Then: Kafka's markFlushed sets lastFlushTime on the roll's flush too, so only the second look flushes
        assertThat(early).isEqualTo(1);
        assertThat(log.recoveryPoint()).isEqualTo(2);
        log.close();
    }

    @Test
    void withFlushMessagesOfOneEveryConcurrentAppendReturnsFlushed() throws Exception {
        // Given
        PartitionLog log = PartitionLog.open(tmp.resolve("g-0"), LogConfig.builder().flushMessages(1).build(),
            LogEnvironment.of(time), true);
        int writers = 8;
        int perWriter = 50;
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());

        // When
        for (int w = 0; w < writers; w++) {
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; i < perWriter; i++) {
                        LogAppendInfo info = log.appendAsLeader(values(time.milliseconds(), "x"), 0,
                            AppendOrigin.CLIENT);
                        if (log.recoveryPoint() <= info.lastOffset()) {
                            throw new AssertionError("append " + info.lastOffset() + " returned unflushed");
                        }
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }

        // Then
        assertThat(failures).isEmpty();
        assertThat(log.recoveryPoint()).isEqualTo(writers * perWriter);
        log.close();
    }

    @Test
    void flushesWriteTheOffsetsCheckpointOncePerIntervalAndACrashStillRecoversEveryFlushedRecord() {
        // Given flush.messages 1, so every append fsyncs
        Path dir = tmp.resolve("c-0");
        PartitionLog log = PartitionLog.open(dir, LogConfig.builder().flushMessages(1).build(),
            LogEnvironment.of(time), true);
        log.appendAsLeader(values(time.milliseconds(), "a"), 0, AppendOrigin.CLIENT);
        log.appendAsLeader(values(time.milliseconds(), "b"), 0, AppendOrigin.CLIENT);

        // Then each append is flushed, but the checkpoint on disk keeps the recovery point it was opened with
        assertThat(log.recoveryPoint()).isEqualTo(2);
        assertThat(checkpointedRecoveryPoint(dir)).isEqualTo(0);

        // When Kafka's log.flush.offset.checkpoint.interval.ms has passed, the next flush writes it
        time.sleep(PartitionLog.OFFSETS_CHECKPOINT_MS);
        log.appendAsLeader(values(time.milliseconds(), "c"), 0, AppendOrigin.CLIENT);
        assertThat(checkpointedRecoveryPoint(dir)).isEqualTo(3);

        // And a crash before the next interval recovers from the older point without losing a record
        log.appendAsLeader(values(time.milliseconds(), "d"), 0, AppendOrigin.CLIENT);
        assertThat(checkpointedRecoveryPoint(dir)).isEqualTo(3);
        log.closeWithoutFlush();
        PartitionLog reopened = PartitionLog.open(dir, LogConfig.builder().flushMessages(1).build(),
            LogEnvironment.of(time), false);
        assertThat(reopened.logEndOffset()).isEqualTo(4);

        // And a clean close writes the latest recovery point
        reopened.appendAsLeader(values(time.milliseconds(), "e"), 0, AppendOrigin.CLIENT);
        reopened.close();
        assertThat(checkpointedRecoveryPoint(dir)).isEqualTo(5);
    }

    private static long checkpointedRecoveryPoint(Path dir) {
        return io.cairn.log.io.CheckpointFile.readEntries(dir.resolve(
                io.cairn.log.recovery.LogLoader.OFFSETS_CHECKPOINT), 0).stream()
            .filter(line -> line.startsWith("recovery-point "))
            .mapToLong(line -> Long.parseLong(line.substring("recovery-point ".length())))
            .findFirst().orElseThrow();
    }
}
