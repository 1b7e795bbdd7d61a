package io.cairn.broker.coordinator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.coordinator.TestKvShard.Kv;
import io.cairn.broker.handler.PartitionsFixture;
import io.cairn.broker.purgatory.MockTimer;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.isr.Partition;
import io.cairn.log.FetchDataInfo;
import io.cairn.log.Time;
import io.cairn.wire.error.CoordinatorLoadInProgressException;
import io.cairn.wire.error.NotCoordinatorException;
import io.cairn.wire.error.RecordTooLargeException;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.record.RecordBatch;
import io.cairn.wire.record.RecordBatches;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The coordinator runtime on a real metadata node, replica manager and logs, with a key-value shard and a
 * hand-driven timer: batching across operations, loading, leadership loss, timers, transactions, and a shard that
 * never runs on two threads at once.
 */
@Timeout(120)
class CoordinatorRuntimeTest {

    private static final String TOPIC = "__test_coordinator";
    private static final int LINGER_MS = 5;

    @TempDir
    Path dir;

    private PartitionsFixture fixture;
    private PartitionPurgatory purgatory;
    private MockTimer timer;
    private CoordinatorRuntime<TestKvShard, Kv> runtime;
    private final ConcurrentLinkedQueue<TestKvShard> created = new ConcurrentLinkedQueue<>();
    private volatile CountDownLatch replayGate;

    @BeforeEach
    void start() throws Exception {
        fixture = PartitionsFixture.start(dir);
        purgatory = new PartitionPurgatory(fixture.replicaManager());
        fixture.createTopic(TOPIC, 2);
        await().atMost(Duration.ofSeconds(30)).until(() -> fixture.replicaManager().partition(
            new io.cairn.metadata.image.TopicPartition(TOPIC, 1)).map(Partition::isLeader).orElse(false)
            && fixture.partition(TOPIC, 0).isLeader());
    }

    @AfterEach
    void stop() {
        if (runtime != null) {
            runtime.close();
        }
        purgatory.close();
        fixture.close();
    }

    private CoordinatorRuntime<TestKvShard, Kv> startRuntime(int threads, int lingerMs) {
        timer = new MockTimer();
        runtime = new CoordinatorRuntime<>(new CoordinatorRuntimeConfig<>("test-coordinator", TOPIC,
            new CoordinatorRuntimeSettings(threads, lingerMs, 5_000L), TestKvShard.SERDE, ctx -> {
                TestKvShard shard = new TestKvShard(ctx, replayGate);
                created.add(shard);
                return shard;
            }), fixture.replicaManager(), purgatory, timer, Time.SYSTEM);
        runtime.start();
        return runtime;
    }

    /** Runs {@code f} on the shard of {@code partition} once it is loaded and returns its result. */
    private <T> T onShard(int partition, Function<TestKvShard, T> f) {
        awaitLoaded(partition);
        try {
            return runtime.call(partition, shard -> CompletableFuture.completedFuture(f.apply(shard)))
                .get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private Map<String, String> committed(int partition) {
        return onShard(partition, shard -> Map.copyOf(shard.committed));
    }

    private List<String> events(int partition) {
        return onShard(partition, shard -> List.copyOf(shard.events));
    }

    /** Starts a write of {@code records} on partition 0 and returns its future once the shard has taken it. */
    private CompletableFuture<Long> write(long producerId, Kv... records) throws Exception {
        return runtime.call(0, shard -> CompletableFuture.completedFuture(shard.ctx.write(List.of(records),
            producerId, (short) 0))).get(30, TimeUnit.SECONDS);
    }

    private void awaitLoaded(int partition) {
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> runtime.call(partition,
            shard -> CompletableFuture.completedFuture(true)).get(30, TimeUnit.SECONDS));
    }

    private List<RecordBatch> batches(int partition) {
        Partition p = fixture.partition(TOPIC, partition);
        List<RecordBatch> batches = new ArrayList<>();
        try (FetchDataInfo info = p.log().read(0L, 1 << 20, p.logEndOffset(), true)) {
            ByteBuf buf = Unpooled.wrappedBuffer(info.records().readBytes());
            for (RecordBatch batch : RecordBatches.of(buf)) {
                batches.add(batch);
            }
        }
        return batches;
    }

    @Test
    void recordsOfSeveralOperationsWhileABatchIsOpenAreAppendedAsOneBatchAfterTheLinger() throws Exception {
        // Given
        startRuntime(2, LINGER_MS);
        awaitLoaded(0);
        CompletableFuture<Long> first = write(-1L, new Kv("a", "1"), new Kv("b", "1"));
        CompletableFuture<Long> second = write(-1L, new Kv("c", "1"));
        CompletableFuture<Long> third = write(-1L, new Kv("a", "2"));
        assertThat(fixture.partition(TOPIC, 0).logEndOffset()).isZero();

        // When
        timer.advance(LINGER_MS);

        // Then
        assertThat(first.get(30, TimeUnit.SECONDS)).isZero();
        assertThat(second.get(30, TimeUnit.SECONDS)).isEqualTo(2L);
        assertThat(third.get(30, TimeUnit.SECONDS)).isEqualTo(3L);
        List<RecordBatch> batches = batches(0);
        assertThat(batches).hasSize(1);
        assertThat(batches.get(0).recordCount()).isEqualTo(4);
        assertThat(batches.get(0).producerId()).isEqualTo(RecordBatch.NO_PRODUCER_ID);
    }

    @Test
    void anOpenBatchIsAppendedFirstWhenTheNextOperationsRecordsWouldPassMaxMessageBytes() throws Exception {
        // Given: batches of at most 200 bytes, and two operations of about 100 bytes each
        fixture.metadata().node().incrementalAlterConfigs(new IncrementalAlterConfigsRequestData().setResources(
            List.of(new IncrementalAlterConfigsRequestData.AlterConfigsResource().setResourceType((byte) 2)
                .setResourceName(TOPIC).setConfigs(List.of(new IncrementalAlterConfigsRequestData.AlterableConfig()
                    .setName("max.message.bytes").setConfigOperation((byte) 0).setValue("200"))))))
            .get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() ->
            fixture.partition(TOPIC, 0).log().config().maxMessageBytes() == 200);
        startRuntime(1, LINGER_MS);
        awaitLoaded(0);
        CompletableFuture<Long> first = write(-1L, new Kv("a", "x".repeat(60)));

        // When
        CompletableFuture<Long> second = write(-1L, new Kv("b", "y".repeat(60)));

        // Then: the first batch went out without waiting for the linger; the second waits for it
        assertThat(first.get(30, TimeUnit.SECONDS)).isZero();
        assertThat(second).isNotDone();
        timer.advance(LINGER_MS);
        assertThat(second.get(30, TimeUnit.SECONDS)).isEqualTo(1L);
        assertThat(batches(0)).extracting(RecordBatch::recordCount).containsExactly(1, 1);
    }

    @Test
    void withoutLingerEveryOperationIsItsOwnBatchAndOversizedRecordsFail() throws Exception {
        // Given
        startRuntime(1, 0);
        awaitLoaded(0);

        // When
        long a = write(-1L, new Kv("a", "1")).get(30, TimeUnit.SECONDS);
        long b = write(-1L, new Kv("b", "1")).get(30, TimeUnit.SECONDS);
        CompletableFuture<Long> huge = write(-1L, new Kv("big", "x".repeat(2 << 20)));

        // Then
        assertThat(List.of(a, b)).containsExactly(0L, 1L);
        assertThat(batches(0)).hasSize(2);
        assertThatThrownBy(() -> huge.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(RecordTooLargeException.class);
    }

    @Test
    void aShardIsLoadedFromItsLogAndAnswersLoadInProgressMeanwhile() throws Exception {
        // Given: records written by a first runtime, then a second one whose load is held
        startRuntime(1, 0);
        awaitLoaded(0);
        write(-1L, new Kv("a", "1"), new Kv("b", "2")).get(30, TimeUnit.SECONDS);
        write(-1L, new Kv("a", "3")).get(30, TimeUnit.SECONDS);
        runtime.close();
        replayGate = new CountDownLatch(1);
        startRuntime(1, 0);

        // When
        CompletableFuture<Boolean> whileLoading = runtime.call(0, shard -> CompletableFuture.completedFuture(true));

        // Then
        assertThatThrownBy(() -> whileLoading.get(30, TimeUnit.SECONDS))
            .hasCauseInstanceOf(CoordinatorLoadInProgressException.class);
        replayGate.countDown();
        assertThat(committed(0)).isEqualTo(Map.of("a", "3", "b", "2"));
        assertThat(events(0)).containsExactly("loaded");
    }

    @Test
    void losingTheLeadershipFailsPendingWritesAndUnloadsTheShard() throws Exception {
        // Given: a write in an open batch
        startRuntime(1, LINGER_MS);
        awaitLoaded(0);
        TestKvShard shard = onShard(0, s -> s);
        CompletableFuture<Long> pending = write(-1L, new Kv("a", "1"));

        // When: the partition goes away
        fixture.metadata().node().deleteTopics(new DeleteTopicsRequestData().setTopics(List.of(
            new DeleteTopicsRequestData.DeleteTopicState().setName(TOPIC)))).get(30, TimeUnit.SECONDS);

        // Then
        assertThatThrownBy(() -> pending.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(NotCoordinatorException.class);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThatThrownBy(() -> runtime.call(0,
            s -> CompletableFuture.completedFuture(true)).get(30, TimeUnit.SECONDS))
            .hasCauseInstanceOf(NotCoordinatorException.class));
        assertThat(List.copyOf(shard.events)).contains("unloaded");
        assertThat(timer.size()).isZero();
    }

    @Test
    void timersRunOnTheShardThreadOnceAndStopWithTheShard() throws Exception {
        // Given
        startRuntime(2, LINGER_MS);
        awaitLoaded(0);
        ConcurrentLinkedQueue<String> ran = new ConcurrentLinkedQueue<>();
        onShard(0, shard -> {
            shard.ctx.schedule("t", 100, () -> ran.add("first " + Thread.currentThread().getName()));
            shard.ctx.schedule("t", 200, () -> ran.add("replaced " + Thread.currentThread().getName()));
            shard.ctx.schedule("u", 300, () -> ran.add("u"));
            return null;
        });

        // When
        timer.advance(200);

        // Then
        await().atMost(Duration.ofSeconds(30)).until(() -> ran.size() == 1);
        assertThat(ran.peek()).startsWith("replaced cairn-test-coordinator-");
        onShard(0, shard -> {
            shard.ctx.cancel("u");
            return null;
        });
        timer.advance(1_000);
        awaitLoaded(0);
        assertThat(ran).hasSize(1);
    }

    @Test
    void transactionalRecordsArePendingUntilTheirMarkerAndReplayTheSameWay() throws Exception {
        // Given: producer 7's and producer 8's transactional writes between plain ones
        startRuntime(1, LINGER_MS);
        awaitLoaded(0);
        CompletableFuture<Long> plain = write(-1L, new Kv("p", "1"));
        long seven = write(7L, new Kv("a", "7")).get(30, TimeUnit.SECONDS);
        long eight = write(8L, new Kv("b", "8")).get(30, TimeUnit.SECONDS);
        assertThat(plain.get(30, TimeUnit.SECONDS)).isZero();

        // When
        runtime.completeTransaction(0, 7L, (short) 0, 3, true).get(30, TimeUnit.SECONDS);
        runtime.completeTransaction(0, 8L, (short) 0, 3, false).get(30, TimeUnit.SECONDS);

        // Then: the markers follow the writes in the log; a reload replays the same outcome
        assertThat(List.of(seven, eight)).containsExactly(1L, 2L);
        List<RecordBatch> batches = batches(0);
        assertThat(batches).extracting(RecordBatch::isTransactional).containsExactly(false, true, true, true, true);
        assertThat(batches).extracting(RecordBatch::isControlBatch).containsExactly(false, false, false, true, true);
        assertThat(events(0)).containsExactly("loaded", "commit-7", "abort-8");
        runtime.close();
        startRuntime(1, LINGER_MS);
        assertThat(committed(0)).isEqualTo(Map.of("p", "1", "a", "7"));
        Boolean noPending = onShard(0, shard -> shard.pending.isEmpty());
        assertThat(noPending).isTrue();
    }

    @Test
    void aMarkerForAPartitionThisBrokerDoesNotLeadIsNotCoordinator() {
        // Given
        startRuntime(1, LINGER_MS);

        // When
        CompletableFuture<Void> marker = runtime.completeTransaction(5, 7L, (short) 0, 0, true);

        // Then
        assertThatThrownBy(() -> marker.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
            .hasCauseInstanceOf(NotCoordinatorException.class);
    }

    @Test
    void aShardNeverRunsOnTwoThreadsAtOnce() throws Exception {
        // Given: four threads, two shards, operations submitted from several threads
        startRuntime(4, LINGER_MS);
        awaitLoaded(0);
        awaitLoaded(1);
        List<List<CompletableFuture<Integer>>> perSubmitter = new ArrayList<>();
        List<Thread> submitters = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            List<CompletableFuture<Integer>> mine = new ArrayList<>();
            perSubmitter.add(mine);
            submitters.add(new Thread(() -> {
                for (int i = 0; i < 500; i++) {
                    mine.add(runtime.call(i % 2, shard -> CompletableFuture.completedFuture(shard.operation(() -> {
                        shard.committed.merge("n", "1", (x, y) -> Integer.toString(Integer.parseInt(x) + 1));
                        return 1;
                    }))));
                }
            }));
        }

        // When
        submitters.forEach(Thread::start);
        for (Thread submitter : submitters) {
            submitter.join();
        }

        // Then

        for (List<CompletableFuture<Integer>> mine : perSubmitter) {
            CompletableFuture.allOf(mine.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        }
        for (int p = 0; p < 2; p++) {
            Integer maxInside = onShard(p, shard -> shard.maxInside.get());
            assertThat(maxInside).isEqualTo(1);
            assertThat(committed(p)).containsEntry("n", "1000");
        }
    }
}
