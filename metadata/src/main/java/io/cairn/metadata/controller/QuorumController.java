package io.cairn.metadata.controller;

import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.ClusterIdRecord;
import io.cairn.metadata.record.ControllerChangeRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.EnvelopeRequestData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The active controller: while this node leads the metadata quorum it turns commands into records with
 * {@link ControllerLogic}, appends them to the {@link MetadataLog} and completes each command's future once its
 * records are committed and applied. Decisions are taken against a <em>pending image</em> (the committed image plus
 * the batches still in flight), so consecutive commands see each other without waiting for commits. On becoming
 * leader it first commits a {@link ControllerChangeRecord} and only then, with an image that holds every earlier
 * entry, starts deciding; after any failed append it does the same again. It also tracks broker heartbeats and
 * fences brokers silent for {@code broker.session.timeout.ms}. Thread-safe: public methods may be called from any
 * thread; all state is confined to the {@link EventLoop}.
 */
public final class QuorumController implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(QuorumController.class);
    private static final long RETRY_BOOTSTRAP_MS = 100;
    /** The pause before the next periodic election pass when the last one used its whole budget (Kafka's 10 ms). */
    private static final long BALANCE_AGAIN_MS = 10;
    /** How many request ids this controller remembers the futures of (in-flight or answered in its terms). */
    private static final int RECENT_REQUESTS = 1000;

    private record Deferred(UUID requestId, ApiMessage request, CompletableFuture<ApiMessage> future) {
    }

    private final ControllerLogic logic;
    private final String clusterId;
    private final MetadataLog log;
    private final Supplier<MetadataImage> committed;
    private final EventLoop loop;
    private final Function<UUID, ApiMessage> appliedResponses;
    /** The wall clock delegation tokens are timed by (epoch ms), as Kafka's controller reads {@code Time.SYSTEM}. */
    private volatile LongSupplier wallClockMs = System::currentTimeMillis;
    /** The controller mutation quotas of forwarded topic commands: set once by the broker, read on the loop. */
    private volatile ControllerMutationQuotas mutationQuotas = ControllerMutationQuotas.NONE;

    private volatile boolean active;
    private boolean ready;
    private long term = -1;
    private long generation;
    private MetadataImage pending = MetadataImage.EMPTY;
    /**
     * When this controller became active in its term: every broker's session counts from here until its first
     * heartbeat to this controller, as Kafka's {@code ClusterControlManager.activate()} gives each unfenced broker a
     * contact time when its controller claims the quorum, before its own first records commit (not from readiness:
     * the commit of this controller's first record, seconds on a loaded host, would lengthen a dead broker's session).
     */
    private long activeSinceMs;
    /** The last heartbeat of each broker to this controller in its current term. */
    private final Map<Integer, Long> lastContactMs = new HashMap<>();
    /**
     * Per broker in controlled shutdown: the committed offset at which it was first seen leading nothing (Kafka's
     * controlled shutdown offset); it is told to shut down once its heartbeat reports that offset applied.
     */
    private final Map<Integer, Long> shutdownOffsets = new HashMap<>();
    /**
     * Per broker: the offset of the entry that committed its current registration (Kafka's register broker record
     * offset). A heartbeat is caught up once its {@code currentMetadataOffset} reaches it; a broker registered under
     * an earlier controller is held to {@link #readyOffset} instead, which is at or after its registration. Written
     * where an append completes, hence concurrent.
     */
    private final Map<Integer, Long> registrationOffsets = new ConcurrentHashMap<>();
    /** The committed offset when this controller became ready. */
    private long readyOffset = -1L;
    private final Deque<Deferred> deferred = new ArrayDeque<>();
    /** The futures of the last commands decided by this controller, by request id, in decision order. */
    private final Map<UUID, CompletableFuture<ApiMessage>> recent = new LinkedHashMap<>();

    /**
     * @param settings  the controller's settings
     * @param clusterId the cluster id committed by the first controller of a fresh quorum
     * @param log       the replicated log
     * @param committed the node's committed image (updated by the apply thread)
     * @param loop      the thread this controller runs on
     */
    public QuorumController(ControllerSettings settings, String clusterId, MetadataLog log,
                            Supplier<MetadataImage> committed, EventLoop loop) {
        this(new ControllerLogic(settings), clusterId, log, committed, loop);
    }

    /** With the given logic (a simulation passes one with a seeded topic-id generator). */
    public QuorumController(ControllerLogic logic, String clusterId, MetadataLog log,
                            Supplier<MetadataImage> committed, EventLoop loop) {
        this(logic, clusterId, log, committed, loop, id -> null);
    }

    /**
     * With the responses of recently applied commands by request id (see {@link AppliedCommands}), so that a retried
     * command that already committed is answered with its first response instead of being applied again.
     */
    public QuorumController(ControllerLogic logic, String clusterId, MetadataLog log,
                            Supplier<MetadataImage> committed, EventLoop loop,
                            Function<UUID, ApiMessage> appliedResponses) {
        this.appliedResponses = appliedResponses;
        this.logic = logic;
        this.clusterId = clusterId;
        this.log = log;
        this.committed = committed;
        this.loop = loop;
    }

    /** Replaces the wall clock (tests). */
    void wallClock(LongSupplier clock) {
        this.wallClockMs = clock;
    }

    /** Counts forwarded topic commands against {@code quotas} from now on (Kafka's controller mutation quota). */
    public void useMutationQuotas(ControllerMutationQuotas quotas) {
        this.mutationQuotas = quotas;
    }

    /** True while this node is the active controller (it may still be committing its first record). */
    public boolean isActive() {
        return active;
    }

    /**
     * Handles a controller request. The future completes with the Kafka response (whose error code tells the
     * outcome) once the resulting records are committed, or exceptionally with the NOT_CONTROLLER
     * {@link io.cairn.wire.error.ApiException} when this node is not (or stops being) the active controller.
     */
    public CompletableFuture<ApiMessage> submit(ApiMessage request) {
        return submit(UUID.randomUUID(), request);
    }

    /**
     * Handles a controller request identified by {@code requestId}, which the sender keeps across its retries: a
     * command whose id this controller already decided, or whose entry the log already applied, is answered with the
     * first response and changes nothing.
     */
    public CompletableFuture<ApiMessage> submit(UUID requestId, ApiMessage request) {
        CompletableFuture<ApiMessage> future = new CompletableFuture<>();
        loop.execute(() -> handle(requestId, request, future));
        return future;
    }

    /** Called when this node became the Raft leader of {@code newTerm}. */
    public void becomeLeader(long newTerm) {
        loop.execute(() -> {
            if (active && term == newTerm) {
                return;
            }
            LOGGER.info("Node {} becomes the active controller in term {}", logic.settings().nodeId(), newTerm);
            active = true;
            ready = false;
            term = newTerm;
            activeSinceMs = loop.nowMs();
            lastContactMs.clear();
            generation++;
            bootstrap(generation);
            scheduleFencing(generation);
            schedulePeriodicElections(generation);
            scheduleTokenSweep(generation);
        });
    }

    /** Called when this node stopped being the leader. */
    public void resign() {
        loop.execute(() -> {
            if (!active) {
                return;
            }
            LOGGER.info("Node {} is no longer the active controller (term {})", logic.settings().nodeId(), term);
            active = false;
            ready = false;
            generation++;
            failDeferred();
        });
    }

    @Override
    public void close() {
        resign();
        loop.execute(loop::close);
    }

    private void bootstrap(long gen) {
        List<ApiMessage> records = new ArrayList<>();
        if (clusterId != null && !clusterId.isEmpty()) {
            records.add(new ClusterIdRecord().setClusterId(clusterId));
        }
        records.add(new ControllerChangeRecord().setControllerId(logic.settings().nodeId()).setTerm(term));
        log.append(term, records).whenComplete((index, error) -> loop.execute(() -> {
            if (gen != generation || !active) {
                return;
            }
            if (error != null) {
                LOGGER.warn("Controller bootstrap in term {} failed, retrying: {}", term, error.toString());
                loop.schedule(() -> {
                    if (gen == generation && active) {
                        bootstrap(gen);
                    }
                }, RETRY_BOOTSTRAP_MS);
                return;
            }
            pending = committed.get();
            ready = true;
            readyOffset = pending.offset();
            shutdownOffsets.clear();
            registrationOffsets.clear();
            LOGGER.info("Active controller {} ready in term {} at offset {}", logic.settings().nodeId(), term,
                    pending.offset());
            List<ApiMessage> features = logic.bootstrapFeatures(pending);
            if (!features.isEmpty()) {
                LOGGER.info("Finalizing the bootstrap feature levels: {}", features);
                appendAndComplete(features, null, null, () -> { }, null);
            }
            while (!deferred.isEmpty() && ready) {
                Deferred d = deferred.poll();
                handle(d.requestId(), d.request(), d.future());
            }
        }));
    }

    private void handle(UUID requestId, ApiMessage request, CompletableFuture<ApiMessage> future) {
        if (!active) {
            future.completeExceptionally(Errors.NOT_CONTROLLER.exception());
            return;
        }
        if (!ready) {
            deferred.add(new Deferred(requestId, request, future));
            return;
        }
        if (answerDuplicate(requestId, future)) {
            return;
        }
        ControllerResult<? extends ApiMessage> result;
        try {
            noteContact(request);
            // Reads are answered from the committed image, as Kafka's controller reads at its last committed offset.
            MetadataImage base = ApiKey.forId(request.apiKey()) == ApiKey.LIST_PARTITION_REASSIGNMENTS
                    ? committed.get() : pending;
            result = request instanceof EnvelopeRequestData envelope
                    ? logic.handleForwarded(base, ForwardedRequest.unwrap(envelope), wallClockMs.getAsLong(),
                            mutationQuotas)
                    : ApiKey.forId(request.apiKey()) == ApiKey.BROKER_HEARTBEAT
                    ? logic.heartbeat(base, (BrokerHeartbeatRequestData) request,
                            caughtUp((BrokerHeartbeatRequestData) request))
                    : logic.handle(base, request, this::alive);
            noteAcceptedRegistration(request, result.response());
            holdShutdownUntilApplied(request, result);
        } catch (RuntimeException e) {
            LOGGER.error("Controller command {} failed", request, e);
            future.completeExceptionally(Errors.UNKNOWN_SERVER_ERROR.exception(e.toString()));
            return;
        }
        remember(requestId, future);
        if (result.records().isEmpty()) {
            future.complete(result.response());
            return;
        }
        if (ApiKey.forId(request.apiKey()) == ApiKey.BROKER_REGISTRATION
                && ((BrokerRegistrationResponseData) result.response()).errorCode() == Errors.NONE.code()) {
            int brokerId = ((BrokerRegistrationRequestData) request).brokerId();
            // Noted before the broker learns its epoch, so its first heartbeat finds it.
            appendAndComplete(result.records(), requestId, result.response(), index -> {
                registrationOffsets.put(brokerId, index);
                future.complete(result.response());
            }, future);
            return;
        }
        appendAndComplete(result.records(), requestId, result.response(),
                index -> future.complete(result.response()), future);
    }

    /**
     * Kafka's caught-up rule: the broker has applied the metadata log up to its own registration record, so its image
     * holds everything committed before it registered (no stale image opens or deletes its logs).
     */
    private boolean caughtUp(BrokerHeartbeatRequestData heartbeat) {
        long registered = registrationOffsets.getOrDefault(heartbeat.brokerId(), readyOffset);
        return heartbeat.currentMetadataOffset() >= registered;
    }

    /**
     * Answers a retried command with its first outcome: from this controller's own in-flight or answered commands
     * (a failed try is forgotten, its retry is decided again once the log shows whether it committed), else from the
     * responses the log applied (which after a bootstrap cover every earlier entry).
     */
    private boolean answerDuplicate(UUID requestId, CompletableFuture<ApiMessage> future) {
        CompletableFuture<ApiMessage> first = recent.get(requestId);
        if (first != null && !first.isCompletedExceptionally()) {
            LOGGER.debug("Command {} is a retry of one in flight or answered; returning its outcome", requestId);
            first.whenComplete((response, error) -> {
                if (error == null) {
                    future.complete(response);
                } else {
                    future.completeExceptionally(error);
                }
            });
            return true;
        }
        ApiMessage applied = appliedResponses.apply(requestId);
        if (applied != null) {
            LOGGER.debug("Command {} was already applied; returning its first response", requestId);
            future.complete(applied);
            return true;
        }
        return false;
    }

    private void remember(UUID requestId, CompletableFuture<ApiMessage> future) {
        recent.put(requestId, future);
        if (recent.size() > RECENT_REQUESTS) {
            recent.remove(recent.keySet().iterator().next());
        }
        future.whenComplete((response, error) -> {
            if (error != null) {
                loop.execute(() -> recent.remove(requestId, future));
            }
        });
    }

    private void appendAndComplete(List<ApiMessage> records, UUID requestId, ApiMessage response, Runnable onSuccess,
                                   CompletableFuture<?> future) {
        appendAndComplete(records, requestId, response, index -> onSuccess.run(), future);
    }

    /** Appends {@code records}; {@code onSuccess} is told the committed entry's offset. */
    private void appendAndComplete(List<ApiMessage> records, UUID requestId, ApiMessage response,
                                   LongConsumer onSuccess, CompletableFuture<?> future) {
        pending = ControllerLogic.apply(pending, records);
        long gen = generation;
        CompletableFuture<Long> appended = requestId == null ? log.append(term, records)
                : log.append(term, records, requestId, response);
        appended.whenComplete((index, error) -> {
            if (error == null) {
                onSuccess.accept(index);
                return;
            }
            if (future != null) {
                future.completeExceptionally(Errors.NOT_CONTROLLER.exception(
                        "The metadata change was not committed: " + error.getMessage()));
            }
            loop.execute(() -> {
                if (gen == generation && active) {
                    LOGGER.warn("Metadata append failed in term {}; re-synchronising: {}", term, error.toString());
                    ready = false;
                    generation++;
                    bootstrap(generation);
                    scheduleFencing(generation);
                    schedulePeriodicElections(generation);
                    scheduleTokenSweep(generation);
                }
            });
        });
    }

    private void noteContact(ApiMessage request) {
        ApiKey key = ApiKey.forId(request.apiKey());
        if (key == ApiKey.BROKER_HEARTBEAT) {
            BrokerHeartbeatRequestData heartbeat = (BrokerHeartbeatRequestData) request;
            boolean current = pending.broker(heartbeat.brokerId())
                    .map(b -> b.epoch() == heartbeat.brokerEpoch()).orElse(false);
            if (current) {
                lastContactMs.put(heartbeat.brokerId(), loop.nowMs());
            }
        }
    }

    /**
     * A registration is judged against the session of the registered incarnation as it stands (Kafka's rule: a
     * different incarnation is rejected with DUPLICATE_BROKER_REGISTRATION while that session is alive, accepted
     * once it expired); only an accepted one starts the new incarnation's session, so a rejected retry never
     * extends the old one.
     */
    private void noteAcceptedRegistration(ApiMessage request, ApiMessage response) {
        if (ApiKey.forId(request.apiKey()) == ApiKey.BROKER_REGISTRATION
                && ((BrokerRegistrationResponseData) response).errorCode() == Errors.NONE.code()) {
            int brokerId = ((BrokerRegistrationRequestData) request).brokerId();
            lastContactMs.put(brokerId, loop.nowMs());
            shutdownOffsets.remove(brokerId);
        }
    }

    /**
     * Kafka's rule for {@code shouldShutDown}: the pending image may show a broker in controlled shutdown leading
     * nothing before those records have committed, and a committed move is only safe to stop on once the broker has
     * applied it (else it closes its logs while it still acts as leader). So the answer stays false until the
     * committed image shows the broker leading nothing and the heartbeat's {@code currentMetadataOffset} has reached
     * the offset where that was first seen.
     */
    private void holdShutdownUntilApplied(ApiMessage request, ControllerResult<? extends ApiMessage> result) {
        if (ApiKey.forId(request.apiKey()) != ApiKey.BROKER_HEARTBEAT
                || !((BrokerHeartbeatResponseData) result.response()).shouldShutDown()) {
            return;
        }
        BrokerHeartbeatRequestData heartbeat = (BrokerHeartbeatRequestData) request;
        BrokerHeartbeatResponseData response = (BrokerHeartbeatResponseData) result.response();
        int brokerId = heartbeat.brokerId();
        MetadataImage image = committed.get();
        boolean committedAway = result.records().isEmpty()
                && image.broker(brokerId).map(BrokerRegistration::inControlledShutdown).orElse(false)
                && image.leaderships(brokerId).isEmpty();
        if (!committedAway) {
            response.setShouldShutDown(false);
            return;
        }
        long offset = shutdownOffsets.computeIfAbsent(brokerId, id -> image.offset());
        response.setShouldShutDown(heartbeat.currentMetadataOffset() >= offset);
    }

    private boolean alive(int brokerId) {
        long last = lastContactMs.getOrDefault(brokerId, activeSinceMs);
        return loop.nowMs() - last < logic.settings().brokerSessionTimeoutMs();
    }

    private void scheduleFencing(long gen) {
        long period = Math.max(10, logic.settings().brokerSessionTimeoutMs() / 10);
        loop.schedule(() -> {
            if (gen != generation || !active) {
                return;
            }
            if (ready) {
                fenceExpiredBrokers();
            }
            scheduleFencing(gen);
        }, period);
    }

    /**
     * Kafka's periodic elections: every {@code leader.imbalance.check.interval.seconds} (when
     * {@code auto.leader.rebalance.enable}) the active controller moves leadership back to preferred replicas that
     * are in the ISR and usable, and every {@code unclean.leader.election.interval.ms} it elects leaders for
     * leaderless partitions of topics that allow unclean election; a pass that used its whole election budget is
     * followed by the next one after {@value #BALANCE_AGAIN_MS} ms.
     */
    private void schedulePeriodicElections(long gen) {
        schedulePeriodic(gen, logic.settings().leaderImbalanceCheckIntervalMs(), "Leader balancing",
                () -> logic.leadersImbalanced(pending) ? logic.balanceLeaders(pending) : List.of());
        schedulePeriodic(gen, logic.settings().uncleanLeaderElectionIntervalMs(), "Unclean leader election",
                () -> logic.electUncleanLeaders(pending));
    }

    /**
     * Kafka's expired-token sweep: every {@code delegation.token.expiry.check.interval.ms} (when tokens are enabled)
     * the active controller removes the tokens past their expiry or maximum lifetime.
     */
    private void scheduleTokenSweep(long gen) {
        DelegationTokenSettings tokens = logic.settings().delegationTokens();
        if (!tokens.enabled()) {
            return;
        }
        loop.schedule(() -> {
            if (gen != generation || !active) {
                return;
            }
            if (ready) {
                List<ApiMessage> records = DelegationTokenCommands.sweepExpired(pending, wallClockMs.getAsLong());
                if (!records.isEmpty()) {
                    LOGGER.info("Removing {} expired delegation token(s)", records.size());
                    appendAndComplete(records, null, null, () -> { }, null);
                }
            }
            scheduleTokenSweep(gen);
        }, tokens.expiryCheckIntervalMs());
    }

    private void schedulePeriodic(long gen, long intervalMs, String what, Supplier<List<ApiMessage>> pass) {
        if (intervalMs > 0) {
            schedulePass(gen, intervalMs, intervalMs, what, pass);
        }
    }

    private void schedulePass(long gen, long delayMs, long intervalMs, String what,
                              Supplier<List<ApiMessage>> pass) {
        loop.schedule(() -> {
            if (gen != generation || !active) {
                return;
            }
            boolean more = false;
            if (ready) {
                List<ApiMessage> records = pass.get();
                if (!records.isEmpty()) {
                    LOGGER.info("{}: electing leaders of {} partition(s)", what, records.size());
                    appendAndComplete(records, null, null, () -> { }, null);
                }
                more = records.size() >= LeaderCommands.MAX_ELECTIONS_PER_IMBALANCE;
            }
            schedulePass(gen, more ? BALANCE_AGAIN_MS : intervalMs, intervalMs, what, pass);
        }, delayMs);
    }

    private void fenceExpiredBrokers() {
        for (BrokerRegistration broker : pending.brokers().values().stream()
                .sorted((a, b) -> Integer.compare(a.id(), b.id())).toList()) {
            if (!broker.fenced() && !alive(broker.id())) {
                List<ApiMessage> records = logic.fenceExpired(pending, broker.id());
                if (!records.isEmpty()) {
                    LOGGER.info("Fencing broker {} (epoch {}): no heartbeat for {} ms", broker.id(), broker.epoch(),
                            logic.settings().brokerSessionTimeoutMs());
                    appendAndComplete(records, null, null, () -> { }, null);
                }
            }
        }
    }

    private void failDeferred() {
        while (!deferred.isEmpty()) {
            deferred.poll().future().completeExceptionally(Errors.NOT_CONTROLLER.exception());
        }
    }
}
