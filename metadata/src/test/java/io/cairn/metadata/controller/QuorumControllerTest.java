package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.ConfigRecord;
import io.cairn.metadata.record.RegisterBrokerRecord;
import io.cairn.metadata.record.RemoveDelegationTokenRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateDelegationTokenRequestData;
import io.cairn.wire.message.CreateDelegationTokenResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The active controller on a simulated clock over an in-memory log whose apply path records command responses as
 * the Ratis state machine does: retried commands (same request id) and re-registrations of a broker.
 */
class QuorumControllerTest {

    private static final long COMMIT_DELAY_MS = 5;
    private static final long SESSION_TIMEOUT_MS = 1000;

    private final SimScheduler scheduler = new SimScheduler(42);
    private final List<List<ApiMessage>> entries = new ArrayList<>();
    private final AppliedCommands applied = new AppliedCommands(100);
    private MetadataImage image = MetadataImage.EMPTY;
    /** How long the log takes to commit an entry. */
    private long commitDelayMs = COMMIT_DELAY_MS;

    /** The replicated log: commits after a delay, applies in order and remembers each command's response. */
    private final MetadataLog log = new MetadataLog() {
        @Override
        public CompletableFuture<Long> append(long term, List<ApiMessage> records) {
            return append(term, records, null, null);
        }

        @Override
        public CompletableFuture<Long> append(long term, List<ApiMessage> records, UUID requestId,
                                              ApiMessage response) {
            CompletableFuture<Long> future = new CompletableFuture<>();
            List<ApiMessage> copy = List.copyOf(records);
            scheduler.at(commitDelayMs, () -> {
                entries.add(copy);
                long offset = entries.size() - 1;
                if (requestId != null) {
                    applied.record(requestId, response);
                }
                image = new MetadataDelta(image).replayAll(copy).apply(offset);
                future.complete(offset);
            });
            return future;
        }
    };

    private QuorumController controller(int nodeId) {
        ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(nodeId)
                .withBrokerSessionTimeoutMs(SESSION_TIMEOUT_MS));
        return new QuorumController(logic, "test-cluster", log, () -> image, scheduler.loop(), applied::response);
    }

    private QuorumController leader(int nodeId, long term) {
        QuorumController controller = controller(nodeId);
        controller.becomeLeader(term);
        scheduler.runUntil(scheduler.now() + 2 * COMMIT_DELAY_MS);
        assertThat(controller.isActive()).isTrue();
        return controller;
    }

    private <R> R runTo(long timeMs, CompletableFuture<ApiMessage> future, Class<R> type) {
        scheduler.runUntil(timeMs);
        assertThat(future).isCompleted();
        return type.cast(future.join());
    }

    private long registrationRecords() {
        return entries.stream().flatMap(List::stream).filter(r -> r instanceof RegisterBrokerRecord).count();
    }

    @Test
    void aForwardedTokenIsCreatedForItsRequesterAndTheSweepRemovesItOnceExpired() {
        // Given: tokens living 1 s, swept every 100 ms, the wall clock following the simulated one
        ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(1)
                .withBrokerSessionTimeoutMs(SESSION_TIMEOUT_MS)
                .withDelegationTokens(new DelegationTokenSettings("secret", 10_000L, 1000L, 100L)));
        QuorumController controller = new QuorumController(logic, "test-cluster", log, () -> image,
                scheduler.loop(), applied::response);
        controller.wallClock(() -> 1_000_000L + scheduler.now());
        controller.becomeLeader(1);
        scheduler.runUntil(scheduler.now() + 2 * COMMIT_DELAY_MS);

        // When
        CreateDelegationTokenResponseData created = runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                ForwardedRequest.wrap(new CreateDelegationTokenRequestData().setMaxLifetimeMs(-1), "User:alice")),
                CreateDelegationTokenResponseData.class);

        // Then: committed for alice, still there before its expiry, gone within a sweep after it
        assertThat(created.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(image.delegationTokens().get(created.tokenId()).owner()).isEqualTo("User:alice");
        scheduler.runUntil(created.expiryTimestampMs() - 1_000_000L - 1);
        assertThat(image.delegationTokens()).containsKey(created.tokenId());
        scheduler.runUntil(created.expiryTimestampMs() - 1_000_000L + 200);
        assertThat(image.delegationTokens()).isEmpty();
        assertThat(entries.stream().flatMap(List::stream).filter(r -> r instanceof RemoveDelegationTokenRecord))
                .hasSize(1);
    }

    @Test
    void aRetriedRegistrationWhileTheFirstTryIsInFlightReturnsTheFirstEpochAndRegistersOnce() {
        // Given
        QuorumController controller = leader(1, 1);
        UUID requestId = UUID.randomUUID();
        BrokerRegistrationRequestData registration = TestRequests.registration(1, null);

        // When
        CompletableFuture<ApiMessage> first = controller.submit(requestId, registration);
        scheduler.runUntil(scheduler.now() + 1);
        CompletableFuture<ApiMessage> retry = controller.submit(requestId, registration);
        long done = scheduler.now() + 10 * COMMIT_DELAY_MS;

        // Then
        BrokerRegistrationResponseData firstResponse = runTo(done, first, BrokerRegistrationResponseData.class);
        BrokerRegistrationResponseData retryResponse = runTo(done, retry, BrokerRegistrationResponseData.class);
        assertThat(firstResponse.errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(retryResponse.brokerEpoch()).isEqualTo(firstResponse.brokerEpoch());
        assertThat(image.broker(1).orElseThrow().epoch()).isEqualTo(firstResponse.brokerEpoch());
        assertThat(registrationRecords()).isEqualTo(1);
    }

    @Test
    void aBrokerInControlledShutdownIsToldToStopOnlyOnceItHasAppliedTheCommittedMoveOfItsLeaderships() {
        // Given two unfenced brokers and a topic led partly by broker 2
        QuorumController controller = leader(1, 1);
        long[] epochs = new long[3];
        for (int id = 1; id <= 2; id++) {
            BrokerRegistrationResponseData registered = runTo(scheduler.now() + 20,
                    controller.submit(UUID.randomUUID(), TestRequests.registration(id, null)),
                    BrokerRegistrationResponseData.class);
            epochs[id] = registered.brokerEpoch();
            runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(), TestRequests.heartbeat(id, epochs[id])),
                    ApiMessage.class);
        }
        runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                TestRequests.createTopic("t", 4, 2, Map.of())), CreateTopicsResponseData.class);
        assertThat(image.leaderships(2)).isNotEmpty();
        long before = image.offset();

        // When broker 2 asks to shut down, then heartbeats first at its old offset and then at the committed one
        BrokerHeartbeatResponseData asked = runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                shutdownHeartbeat(epochs[2], before)), BrokerHeartbeatResponseData.class);
        BrokerHeartbeatResponseData behind = runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                shutdownHeartbeat(epochs[2], before)), BrokerHeartbeatResponseData.class);
        BrokerHeartbeatResponseData caughtUp = runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                shutdownHeartbeat(epochs[2], image.offset())), BrokerHeartbeatResponseData.class);

        // Then the move committed with the first answer, but only the broker that applied it is told to stop
        assertThat(image.leaderships(2)).isEmpty();
        assertThat(image.offset()).isGreaterThan(before);
        assertThat(asked.shouldShutDown()).isFalse();
        assertThat(behind.shouldShutDown()).isFalse();
        assertThat(caughtUp.shouldShutDown()).isTrue();
    }

    @Test
    void aBrokerIsCaughtUpAndUnfencedOnlyOnceItsMetadataOffsetReachedItsRegistrationRecord() {
        // Given a topic created before broker 1 registers (again), and the offset of its registration's entry
        QuorumController controller = leader(1, 1);
        runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                TestRequests.createTopic("early", 1, 1, Map.of())), CreateTopicsResponseData.class);
        long beforeRegistration = image.offset();
        BrokerRegistrationResponseData registered = runTo(scheduler.now() + 20,
                controller.submit(UUID.randomUUID(), TestRequests.registration(1, null)),
                BrokerRegistrationResponseData.class);
        long registrationOffset = image.offset();
        assertThat(registrationOffset).isGreaterThan(beforeRegistration);

        // When it heartbeats from an image that has not applied its registration yet, then from one that has
        BrokerHeartbeatResponseData stale = runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                TestRequests.heartbeat(1, registered.brokerEpoch()).setCurrentMetadataOffset(beforeRegistration)),
                BrokerHeartbeatResponseData.class);
        boolean fencedAfterStale = image.broker(1).orElseThrow().fenced();
        BrokerHeartbeatResponseData current = runTo(scheduler.now() + 20, controller.submit(UUID.randomUUID(),
                TestRequests.heartbeat(1, registered.brokerEpoch()).setCurrentMetadataOffset(registrationOffset)),
                BrokerHeartbeatResponseData.class);

        // Then the stale one is neither caught up nor unfenced (so the broker opens no log from that image)
        assertThat(stale.isCaughtUp()).isFalse();
        assertThat(stale.isFenced()).isTrue();
        assertThat(fencedAfterStale).isTrue();
        assertThat(current.isCaughtUp()).isTrue();
        assertThat(current.isFenced()).isFalse();
        assertThat(image.broker(1).orElseThrow().fenced()).isFalse();
    }

    @Test
    void aBrokerRegisteredUnderAnEarlierControllerIsCaughtUpAtTheOffsetTheNewOneStartedFrom() {
        // Given broker 1 registered with controller 1, then controller 2 took over
        QuorumController first = leader(1, 1);
        BrokerRegistrationResponseData registered = runTo(scheduler.now() + 20,
                first.submit(UUID.randomUUID(), TestRequests.registration(1, null)),
                BrokerRegistrationResponseData.class);
        long registrationOffset = image.offset();
        first.resign();
        QuorumController second = leader(2, 2);

        // When it heartbeats at its registration's offset, then at the new controller's start
        BrokerHeartbeatResponseData behind = runTo(scheduler.now() + 20, second.submit(UUID.randomUUID(),
                TestRequests.heartbeat(1, registered.brokerEpoch()).setCurrentMetadataOffset(registrationOffset - 1)),
                BrokerHeartbeatResponseData.class);
        BrokerHeartbeatResponseData current = runTo(scheduler.now() + 20, second.submit(UUID.randomUUID(),
                TestRequests.heartbeat(1, registered.brokerEpoch()).setCurrentMetadataOffset(image.offset())),
                BrokerHeartbeatResponseData.class);

        // Then only the second is caught up
        assertThat(behind.isCaughtUp()).isFalse();
        assertThat(current.isCaughtUp()).isTrue();
        assertThat(current.isFenced()).isFalse();
    }

    private static BrokerHeartbeatRequestData shutdownHeartbeat(long epoch, long metadataOffset) {
        return TestRequests.heartbeat(2, epoch).setWantShutDown(true).setCurrentMetadataOffset(metadataOffset);
    }

    @Test
    void aRetriedCreateTopicsThatAlreadyCommittedIsAnsweredWithItsFirstResponseByTheNextController() {
        // Given
        QuorumController first = leader(1, 1);
        UUID brokerRequest = UUID.randomUUID();
        CompletableFuture<ApiMessage> registered = first.submit(brokerRequest, TestRequests.registration(1, null));
        BrokerRegistrationResponseData broker = runTo(scheduler.now() + 20, registered,
                BrokerRegistrationResponseData.class);
        runTo(scheduler.now() + 20, first.submit(UUID.randomUUID(), TestRequests.heartbeat(1, broker.brokerEpoch())),
                ApiMessage.class);
        UUID requestId = UUID.randomUUID();
        CreateTopicsRequestData create = TestRequests.createTopic("orders", 3, 1, Map.of());
        CreateTopicsResponseData created = runTo(scheduler.now() + 20, first.submit(requestId, create),
                CreateTopicsResponseData.class);
        int entriesBefore = entries.size();

        // When: the sender's try timed out, leadership moved, and it retries the same command at the new controller
        first.resign();
        QuorumController second = leader(2, 2);
        CreateTopicsResponseData retried = runTo(scheduler.now() + 20, second.submit(requestId, create),
                CreateTopicsResponseData.class);
        CreateTopicsResponseData another = runTo(scheduler.now() + 20, second.submit(UUID.randomUUID(), create),
                CreateTopicsResponseData.class);

        // Then
        assertThat(created.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(retried).isEqualTo(created);
        assertThat(retried.topics().get(0).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(entries).hasSize(entriesBefore + 1); // only the new controller's ControllerChangeRecord
        assertThat(another.topics().get(0).errorCode()).isEqualTo(Errors.TOPIC_ALREADY_EXISTS.code());
    }

    @Test
    void aNewIncarnationIsRejectedWhileTheOldSessionLivesAndAcceptedOnceItExpiredWithoutExtendingIt() {
        // Given: incarnation A registered and unfenced by a heartbeat at t0
        QuorumController controller = leader(1, 1);
        BrokerRegistrationResponseData a = runTo(scheduler.now() + 20,
                controller.submit(UUID.randomUUID(), TestRequests.registration(1, null)),
                BrokerRegistrationResponseData.class);
        long t0 = scheduler.now();
        runTo(t0 + 20, controller.submit(UUID.randomUUID(), TestRequests.heartbeat(1, a.brokerEpoch())),
                ApiMessage.class);
        assertThat(image.broker(1).orElseThrow().fenced()).isFalse();
        BrokerRegistrationRequestData b = TestRequests.registration(1, null);

        // When: incarnation B retries every 200 ms while A's session lives, then once just after it expired (before
        // the periodic fencing check has fenced A)
        List<Long> offsets = List.of(190L, 390L, 590L, 790L, 990L, SESSION_TIMEOUT_MS + 1);
        List<CompletableFuture<ApiMessage>> futures = new ArrayList<>();
        for (long offset : offsets) {
            scheduler.runUntil(t0 + offset);
            futures.add(controller.submit(UUID.randomUUID(), b));
        }
        scheduler.runUntil(t0 + SESSION_TIMEOUT_MS + 20);
        List<BrokerRegistrationResponseData> answers = futures.stream()
                .map(f -> (BrokerRegistrationResponseData) f.join()).toList();

        // Then: rejected while A's session (from its heartbeat at t0) lives, the rejections did not extend it, and
        // the first try after it expired is accepted
        for (int i = 0; i < offsets.size() - 1; i++) {
            assertThat(answers.get(i).errorCode()).as("registration at t0+%d", offsets.get(i))
                    .isEqualTo(Errors.DUPLICATE_BROKER_REGISTRATION.code());
        }
        assertThat(answers.get(offsets.size() - 1).errorCode()).isEqualTo(Errors.NONE.code());
        assertThat(image.broker(1).orElseThrow().incarnationId()).isEqualTo(b.incarnationId());
    }

    @Test
    void aSilentBrokerIsFencedASessionAfterTheNewControllerBecameActiveHoweverLongItsFirstCommitTakes() {
        // Given: broker 1 registered and unfenced under controller 1, which then dies; its successor's log commits
        // slowly (a loaded host)
        QuorumController first = leader(1, 1);
        BrokerRegistrationResponseData registered = runTo(scheduler.now() + 20,
                first.submit(UUID.randomUUID(), TestRequests.registration(1, null)),
                BrokerRegistrationResponseData.class);
        runTo(scheduler.now() + 20,
                first.submit(UUID.randomUUID(), TestRequests.heartbeat(1, registered.brokerEpoch())), ApiMessage.class);
        first.resign();
        scheduler.runUntil(scheduler.now() + 20);
        assertThat(image.broker(1).orElseThrow().fenced()).isFalse();
        commitDelayMs = 400;
        QuorumController second = controller(2);

        // When: the successor becomes active and broker 1 never heartbeats to it
        long activated = scheduler.now();
        second.becomeLeader(2);

        // Then: alive for a session from the activation (not from the first commit, 400 ms later), fenced within a
        // fencing period (a tenth of the session) and a commit after it
        scheduler.runUntil(activated + SESSION_TIMEOUT_MS - 1);
        assertThat(image.broker(1).orElseThrow().fenced()).isFalse();
        scheduler.runUntil(activated + SESSION_TIMEOUT_MS + SESSION_TIMEOUT_MS / 10 + commitDelayMs + 1);
        assertThat(image.broker(1).orElseThrow().fenced()).isTrue();
    }

    @Test
    void appliedCommandsKeepTheFirstResponseAndForgetTheOldestBeyondCapacity() {
        // Given
        AppliedCommands cache = new AppliedCommands(2);
        UUID one = UUID.randomUUID();
        UUID two = UUID.randomUUID();
        UUID three = UUID.randomUUID();
        BrokerRegistrationResponseData firstAnswer = new BrokerRegistrationResponseData().setBrokerEpoch(1);

        // When
        cache.record(one, firstAnswer);
        cache.record(one, new BrokerRegistrationResponseData().setBrokerEpoch(2));
        cache.record(two, new BrokerRegistrationResponseData().setBrokerEpoch(3));
        cache.record(three, new BrokerRegistrationResponseData().setBrokerEpoch(4));

        // Then
        assertThat(cache.size()).isEqualTo(2);
        assertThat(cache.response(one)).isNull();
        assertThat(((BrokerRegistrationResponseData) cache.response(two)).brokerEpoch()).isEqualTo(3);
        assertThat(((BrokerRegistrationResponseData) cache.response(three)).brokerEpoch()).isEqualTo(4);
    }

    private QuorumController balancingLeader(long intervalMs) {
        ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(1)
                .withBrokerSessionTimeoutMs(SESSION_TIMEOUT_MS).withLeaderImbalanceCheckIntervalMs(intervalMs));
        QuorumController controller = new QuorumController(logic, "test-cluster", log, () -> image,
                scheduler.loop(), applied::response);
        controller.becomeLeader(1);
        return controller;
    }

    @Test
    void theActiveControllerMovesLeadershipBackToThePreferredReplicaEveryCheckInterval() {
        // Given: partition 0 is led by its second replica while the preferred one is in the ISR
        image = new PartitionImages().brokers(2)
                .topic("t", PartitionImages.partition(List.of(1, 2), List.of(1, 2), 2)).image();
        long start = scheduler.now();

        // When
        balancingLeader(400);

        // Then
        scheduler.runUntil(start + 390);
        assertThat(PartitionImages.partition(image, "t", 0).leader()).isEqualTo(2);
        scheduler.runUntil(start + 400 + 2 * COMMIT_DELAY_MS);
        assertThat(PartitionImages.partition(image, "t", 0).leader()).isEqualTo(1);
    }

    @Test
    void withoutAutoLeaderRebalanceLeadershipStaysWhereItIs() {
        // Given
        image = new PartitionImages().brokers(2)
                .topic("t", PartitionImages.partition(List.of(1, 2), List.of(1, 2), 2)).image();
        long start = scheduler.now();

        // When
        balancingLeader(-1);

        // Then
        scheduler.runUntil(start + 900);
        assertThat(PartitionImages.partition(image, "t", 0).leader()).isEqualTo(2);
    }

    @Test
    void theActiveControllerElectsUncleanLeadersForLeaderlessPartitionsEveryInterval() {
        // Given: unclean election allowed cluster-wide, the only ISR member of t-0 is fenced
        ControllerLogic logic = new ControllerLogic(new ControllerSettings(1, SESSION_TIMEOUT_MS, (short) 1, 1, true,
                true, 1000).withLeaderImbalanceCheckIntervalMs(-1).withUncleanLeaderElectionIntervalMs(300));
        image = new PartitionImages().brokers(2).fenced(1)
                .topic("t", PartitionImages.partition(List.of(1, 2), List.of(1), -1)).image();
        long start = scheduler.now();

        // When
        new QuorumController(logic, "test-cluster", log, () -> image, scheduler.loop(), applied::response)
                .becomeLeader(1);

        // Then
        scheduler.runUntil(start + 290);
        assertThat(PartitionImages.partition(image, "t", 0).leader()).isEqualTo(-1);
        scheduler.runUntil(start + 300 + 2 * COMMIT_DELAY_MS);
        assertThat(PartitionImages.partition(image, "t", 0).leader()).isEqualTo(2);
    }

    @Test
    void theUncleanElectionPassReadsTheDynamicClusterDefault() {
        // Given: unclean election off in server.properties, on as a dynamic cluster default; the only ISR member of
        // t-0 is fenced
        ControllerLogic logic = new ControllerLogic(new ControllerSettings(1, SESSION_TIMEOUT_MS, (short) 1, 1, false,
                true, 1000).withLeaderImbalanceCheckIntervalMs(-1).withUncleanLeaderElectionIntervalMs(300));
        image = ControllerLogic.apply(new PartitionImages().brokers(2).fenced(1)
                .topic("t", PartitionImages.partition(List.of(1, 2), List.of(1), -1)).image(), List.of(
                new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName("")
                        .setName("unclean.leader.election.enable").setValue("true")));
        long start = scheduler.now();

        // When
        new QuorumController(logic, "test-cluster", log, () -> image, scheduler.loop(), applied::response)
                .becomeLeader(1);

        // Then
        scheduler.runUntil(start + 300 + 2 * COMMIT_DELAY_MS);
        assertThat(PartitionImages.partition(image, "t", 0).leader()).isEqualTo(2);
    }
}
