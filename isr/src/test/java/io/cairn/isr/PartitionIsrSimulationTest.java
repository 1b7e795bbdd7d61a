package io.cairn.isr;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import io.cairn.metadata.controller.ControllerLogic;
import io.cairn.metadata.controller.ControllerResult;
import io.cairn.metadata.controller.ControllerSettings;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.NotEnoughReplicasException;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import io.cairn.wire.record.CompressionType;
import io.cairn.wire.record.RecordBatchBuilder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A seeded simulation of one leader's ISR against the real controller logic: random appends (acks 1 and all),
 * follower fetches, clock moves with the expiration task, fencing and unfencing of followers, AlterPartition
 * answers delivered late or lost (NOT_CONTROLLER) and metadata delivered late. After every step: the high watermark
 * never goes back nor passes the log end, every committed ISR member has everything below it, the leader stays in
 * its ISR, at most one change is in flight, and an offset acknowledged for acks=all is on at least the effective
 * {@code min.insync.replicas} replicas. At the end, with the chaos stopped, both followers are back in the ISR and
 * the high watermark reaches the log end.
 */
class PartitionIsrSimulationTest {

    private static final int LEADER = 1;
    private static final long LAG_MS = 10_000L;

    @TempDir
    Path dir;

    private final IsrHarness.ManualTime time = new IsrHarness.ManualTime();
    private final IsrHarness.ManualScheduler scheduler = new IsrHarness.ManualScheduler(time);
    private final ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(0));
    private final Deque<Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>>>
        requests = new ArrayDeque<>();
    private final Deque<MetadataImage> undelivered = new ArrayDeque<>();
    private final Map<Integer, Long> followerEnd = new HashMap<>(Map.of(2, 0L, 3, 0L));
    private MetadataImage controllerImage = MetadataImage.EMPTY;
    private MetadataImage brokerImage;
    private TopicPartition tp;
    private Partition partition;
    private AlterPartitionManager manager;
    private int minIsr;
    private long lastHighWatermark;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 1234, 20261201})
    void theLeadersIsrKeepsItsInvariantsUnderChaosAndHealsAfterwards(long seed) {
        Random random = new Random(seed);
        minIsr = 1 + random.nextInt(3);
        PartitionLog log = PartitionLog.open(dir.resolve("sim-0"), LogConfig.defaults(), LogEnvironment.of(
            Time.SYSTEM), true);
        try {
            // Given
            setUp(log);

            // When
            for (int step = 0; step < 600; step++) {
                step(random);
                checkInvariants(seed, step);
            }

            // Then
            heal();
            assertThat(partition.inSyncReplicaIds()).as("seed %d", seed).containsExactlyInAnyOrder(1, 2, 3);
            assertThat(partition.highWatermark()).as("seed %d", seed).isEqualTo(partition.logEndOffset());
        } finally {
            log.close();
        }
    }

    private void setUp(PartitionLog log) {
        for (int id = 1; id <= 3; id++) {
            BrokerRegistrationResponseData registered = (BrokerRegistrationResponseData) commit(
                logic.registerBroker(controllerImage, new BrokerRegistrationRequestData().setBrokerId(id)
                    .setIncarnationId(new Uuid(id, id)), b -> false));
            commit(logic.heartbeat(controllerImage, heartbeat(id, registered.brokerEpoch())));
        }
        CreateTopicsRequestData create = new CreateTopicsRequestData();
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName("sim")
            .setNumPartitions(-1).setReplicationFactor((short) -1);
        topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment().setPartitionIndex(0)
            .setBrokerIds(new ArrayList<>(List.of(1, 2, 3))));
        create.topics().add(topic);
        commit(logic.handle(controllerImage, create, b -> true));
        undelivered.clear();
        brokerImage = controllerImage;
        tp = new TopicPartition("sim", 0);
        manager = new AlterPartitionManager(LEADER, () -> epoch(LEADER), request -> {
            CompletableFuture<AlterPartitionResponseData> answer = new CompletableFuture<>();
            requests.add(Map.entry(request, answer));
            return answer;
        }, scheduler);
        IsrContext context = new IsrContext(LAG_MS, manager, id -> brokerImage.broker(id), () -> epoch(LEADER));
        partition = new Partition(tp, brokerImage.topic("sim").orElseThrow().id(), LEADER, log,
            brokerImage.partition(tp).orElseThrow(), minIsr, p -> { }, time, context);
    }

    private static BrokerHeartbeatRequestData heartbeat(int id, long epoch) {
        return new BrokerHeartbeatRequestData().setBrokerId(id).setBrokerEpoch(epoch).setWantFence(false);
    }

    private long epoch(int id) {
        return controllerImage.broker(id).orElseThrow().epoch();
    }

    /** Applies a controller decision; a changed image is queued for delivery to the leader. */
    private ApiMessage commit(ControllerResult<? extends ApiMessage> result) {
        commitRecords(result.records());
        return result.response();
    }

    private void commitRecords(List<ApiMessage> records) {
        if (!records.isEmpty()) {
            controllerImage = new MetadataDelta(controllerImage).replayAll(records).apply(controllerImage.offset()
                + 1);
            undelivered.add(controllerImage);
        }
    }

    private void step(Random random) {
        int dice = random.nextInt(100);
        if (dice < 20) {
            append(random);
        } else if (dice < 50) {
            int follower = 2 + random.nextInt(2);
            long end = followerEnd.get(follower);
            fetch(follower, end + (long) (random.nextDouble() * (partition.logEndOffset() - end + 1)));
        } else if (dice < 60) {
            time.sleep(random.nextInt((int) LAG_MS));
            partition.maybeShrinkIsr();
        } else if (dice < 75) {
            answerOne(random.nextInt(10) == 0);
        } else if (dice < 85) {
            deliverOne();
        } else if (dice < 90) {
            toggleFence(2 + random.nextInt(2));
        } else {
            scheduler.advance(AlterPartitionManager.RETRY_BACKOFF_MS);
        }
        scheduler.runPending();
    }

    private void append(Random random) {
        int acks = random.nextBoolean() ? -1 : 1;
        try {
            partition.appendRecordsToLeader(batch(1 + random.nextInt(3)), AppendOrigin.CLIENT, acks);
        } catch (NotEnoughReplicasException e) {
            assertThat(partition.inSyncReplicaIds().size()).isLessThan(Math.min(minIsr, 3));
        }
    }

    private void fetch(int follower, long offset) {
        partition.updateFollowerFetchState(follower, offset, 0L, time.milliseconds(), partition.logEndOffset(),
            epoch(follower));
        followerEnd.put(follower, offset);
    }

    private void answerOne(boolean lost) {
        Map.Entry<AlterPartitionRequestData, CompletableFuture<AlterPartitionResponseData>> request =
            requests.poll();
        if (request == null) {
            return;
        }
        if (lost) {
            request.getValue().completeExceptionally(Errors.NOT_CONTROLLER.exception());
            return;
        }
        ApiMessage response = commit(logic.handle(controllerImage, request.getKey(), b -> true));
        request.getValue().complete((AlterPartitionResponseData) response);
    }

    private void deliverOne() {
        MetadataImage image = undelivered.poll();
        if (image != null) {
            brokerImage = image;
            partition.update(image.partition(tp).orElseThrow());
        }
    }

    private void toggleFence(int follower) {
        if (controllerImage.broker(follower).orElseThrow().fenced()) {
            commit(logic.heartbeat(controllerImage, heartbeat(follower, epoch(follower))));
        } else {
            commitRecords(logic.fenceExpired(controllerImage, follower));
        }
    }

    private void checkInvariants(long seed, int step) {
        long hw = partition.highWatermark();
        String at = "seed " + seed + " step " + step + " " + partition + " followers " + followerEnd;
        assertThat(hw).as("HW never goes back: %s", at).isGreaterThanOrEqualTo(lastHighWatermark);
        assertThat(hw).as("HW within the log: %s", at).isLessThanOrEqualTo(partition.logEndOffset());
        lastHighWatermark = hw;
        PartitionRegistration reg = partition.registration();
        assertThat(reg.isr()).as("the leader stays in its ISR: %s", at).contains(LEADER);
        for (int member : partition.inSyncReplicaIds()) {
            if (member != LEADER) {
                assertThat(followerEnd.get(member)).as("ISR member %d has the HW: %s", member, at)
                    .isGreaterThanOrEqualTo(hw);
            }
        }
        assertThat(requests.size()).as("one request in flight: %s", at).isLessThanOrEqualTo(1);
        assertThat(manager.pendingCount()).as("one change per partition: %s", at).isLessThanOrEqualTo(1);
        if (hw > 0 && partition.checkEnoughReplicasReachOffset(hw).orElseThrow() == Errors.NONE) {
            long holders = 1 + followerEnd.values().stream().filter(end -> end >= hw).count();
            assertThat(holders).as("acks=all durability: %s", at).isGreaterThanOrEqualTo(Math.min(minIsr, 3));
        }
    }

    /** Stops the chaos: followers unfenced and fetching to the end, every answer and image delivered. */
    private void heal() {
        for (int follower = 2; follower <= 3; follower++) {
            if (controllerImage.broker(follower).orElseThrow().fenced()) {
                commit(logic.heartbeat(controllerImage, heartbeat(follower, epoch(follower))));
            }
        }
        for (int round = 0; round < 20; round++) {
            while (!undelivered.isEmpty()) {
                deliverOne();
            }
            fetch(2, partition.logEndOffset());
            fetch(3, partition.logEndOffset());
            scheduler.advance(AlterPartitionManager.RETRY_BACKOFF_MS);
            while (!requests.isEmpty()) {
                answerOne(false);
                scheduler.runPending();
            }
        }
    }

    private static ByteBuffer batch(int records) {
        RecordBatchBuilder builder = new RecordBatchBuilder(UnpooledByteBufAllocator.DEFAULT, CompressionType.NONE);
        for (int i = 0; i < records; i++) {
            builder.append(1L, new byte[] {(byte) i}, new byte[] {1, 2, 3});
        }
        ByteBuf buf = builder.build();
        try {
            ByteBuffer copy = ByteBuffer.allocate(buf.readableBytes());
            buf.getBytes(buf.readerIndex(), copy);
            return copy.flip();
        } finally {
            buf.release();
        }
    }
}
