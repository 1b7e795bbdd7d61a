package io.cairn.metadata.controller;

import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.record.ClusterIdRecord;
import io.cairn.metadata.record.ControllerChangeRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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

    private record Deferred(ApiMessage request, CompletableFuture<ApiMessage> future) {
    }

    private final ControllerLogic logic;
    private final String clusterId;
    private final MetadataLog log;
    private final Supplier<MetadataImage> committed;
    private final EventLoop loop;

    private volatile boolean active;
    private boolean ready;
    private long term = -1;
    private long generation;
    private MetadataImage pending = MetadataImage.EMPTY;
    private long readySinceMs;
    private final Map<Integer, Long> lastContactMs = new HashMap<>();
    private final Deque<Deferred> deferred = new ArrayDeque<>();

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
        this.logic = logic;
        this.clusterId = clusterId;
        this.log = log;
        this.committed = committed;
        this.loop = loop;
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
        CompletableFuture<ApiMessage> future = new CompletableFuture<>();
        loop.execute(() -> handle(request, future));
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
            generation++;
            bootstrap(generation);
            scheduleFencing(generation);
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
            readySinceMs = loop.nowMs();
            lastContactMs.clear();
            LOGGER.info("Active controller {} ready in term {} at offset {}", logic.settings().nodeId(), term,
                    pending.offset());
            while (!deferred.isEmpty() && ready) {
                Deferred d = deferred.poll();
                handle(d.request(), d.future());
            }
        }));
    }

    private void handle(ApiMessage request, CompletableFuture<ApiMessage> future) {
        if (!active) {
            future.completeExceptionally(Errors.NOT_CONTROLLER.exception());
            return;
        }
        if (!ready) {
            deferred.add(new Deferred(request, future));
            return;
        }
        ControllerResult<? extends ApiMessage> result;
        try {
            noteContact(request);
            result = logic.handle(pending, request, this::alive);
        } catch (RuntimeException e) {
            LOGGER.error("Controller command {} failed", request, e);
            future.completeExceptionally(Errors.UNKNOWN_SERVER_ERROR.exception(e.toString()));
            return;
        }
        if (result.records().isEmpty()) {
            future.complete(result.response());
            return;
        }
        appendAndComplete(result.records(), () -> future.complete(result.response()), future);
    }

    private void appendAndComplete(List<ApiMessage> records, Runnable onSuccess, CompletableFuture<?> future) {
        pending = ControllerLogic.apply(pending, records);
        long gen = generation;
        log.append(term, records).whenComplete((index, error) -> {
            if (error == null) {
                onSuccess.run();
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
        } else if (key == ApiKey.BROKER_REGISTRATION) {
            // Registration does not refresh the session of another live incarnation; the new one starts now.
            BrokerRegistrationRequestData registration = (BrokerRegistrationRequestData) request;
            if (!alive(registration.brokerId())) {
                lastContactMs.put(registration.brokerId(), loop.nowMs());
            }
        }
    }

    private boolean alive(int brokerId) {
        long last = lastContactMs.getOrDefault(brokerId, readySinceMs);
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

    private void fenceExpiredBrokers() {
        for (BrokerRegistration broker : pending.brokers().values().stream()
                .sorted((a, b) -> Integer.compare(a.id(), b.id())).toList()) {
            if (!broker.fenced() && !alive(broker.id())) {
                List<ApiMessage> records = logic.fenceExpired(pending, broker.id());
                if (!records.isEmpty()) {
                    LOGGER.info("Fencing broker {} (epoch {}): no heartbeat for {} ms", broker.id(), broker.epoch(),
                            logic.settings().brokerSessionTimeoutMs());
                    appendAndComplete(records, () -> { }, null);
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
