package io.cairn.broker.group.share;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.broker.share.SharePartitionKey;
import io.cairn.isr.client.BrokerConnection;
import io.cairn.isr.client.BrokerConnections;
import io.cairn.isr.client.ClientTls;
import io.cairn.isr.client.SourceBroker;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The group coordinator's way to the share coordinator (Kafka's {@code DefaultStatePersister} for
 * InitializeShareGroupState): each share-partition goes to the leader of its {@code __share_group_state} partition,
 * a local call to {@link ShareCoordinator} when that is this broker, else InitializeShareGroupState v0 over the
 * inter-broker client. {@code __share_group_state} is created when it does not exist yet; share-partitions whose
 * coordinator is not available, not this one, or loading are retried every {@value #RETRY_MS} ms for up to
 * {@code timeoutMs}, as Kafka's persister retries its FindCoordinator and state calls.
 *
 * <p>Thread-safety: thread-safe; remote calls and retries run on one daemon thread.
 */
public final class ShareStateInitialization implements ShareStateInitializer {

    private static final Logger LOGGER = LogManager.getLogger(ShareStateInitialization.class);
    static final long RETRY_MS = 200;
    private static final Set<Errors> RETRIABLE = Set.of(Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
        Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.NETWORK_EXCEPTION, Errors.REQUEST_TIMED_OUT);

    private final MetadataNode metadata;
    private final ShareCoordinator shares;
    private final int brokerId;
    private final String listenerName;
    private final Runnable createTopic;
    private final long timeoutMs;
    /** When the creation of __share_group_state was last asked for (at most once in 5 s). */
    private volatile long lastCreation = System.nanoTime() - TimeUnit.SECONDS.toNanos(10);
    private final BrokerConnections connections;
    private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread thread = new Thread(r, "cairn-share-state-initializer");
        thread.setDaemon(true);
        return thread;
    });

    /**
     * @param listenerName the inter-broker listener, whose endpoints remote share coordinators are reached on
     * @param createTopic  asks the controller to create {@code __share_group_state} (as FindCoordinator does)
     * @param timeoutMs    how long a request is retried
     */
    public ShareStateInitialization(MetadataNode metadata, ShareCoordinator shares, int brokerId, String listenerName,
                                    ClientTls tls, Runnable createTopic, long timeoutMs) {
        this.metadata = metadata;
        this.shares = shares;
        this.brokerId = brokerId;
        this.listenerName = listenerName;
        this.createTopic = createTopic;
        this.timeoutMs = timeoutMs;
        this.connections = new BrokerConnections("broker-" + brokerId + "-share-state-initializer",
            "cairn-share-state-initializer", (int) Math.min(Integer.MAX_VALUE, timeoutMs), 16 << 20,
            List.of(new BrokerConnection.ApiRange(ApiKey.INITIALIZE_SHARE_GROUP_STATE, (short) 0, (short) 0)), tls);
    }

    @Override
    public CompletableFuture<Boolean> initialize(InitializeShareGroupStateRequestData request) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        attempt(request, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs), done);
        return done;
    }

    private void attempt(InitializeShareGroupStateRequestData request, long deadline,
                         CompletableFuture<Boolean> done) {
        MetadataImage image = metadata.currentImage();
        Optional<TopicImage> topic = shares.topic();
        if (topic.isEmpty()) {
            long now = System.nanoTime();
            if (now - lastCreation > TimeUnit.SECONDS.toNanos(5)) {
                lastCreation = now;
                createTopic.run();
            }
            retry(request, deadline, done, "__share_group_state does not exist yet");
            return;
        }
        Map<Integer, InitializeShareGroupStateRequestData> byLeader = new HashMap<>();
        InitializeShareGroupStateRequestData unavailable = emptyLike(request);
        for (InitializeShareGroupStateRequestData.InitializeStateData t : request.topics()) {
            for (InitializeShareGroupStateRequestData.PartitionData p : t.partitions()) {
                int partition = shares.partitionFor(new SharePartitionKey(request.groupId(), t.topicId(),
                    p.partition()));
                int leader = topic.get().partition(partition).filter(PartitionRegistration::hasLeader)
                    .map(PartitionRegistration::leader).orElse(-1);
                add(leader < 0 ? unavailable : byLeader.computeIfAbsent(leader, l -> emptyLike(request)), t, p);
            }
        }
        List<CompletableFuture<InitializeShareGroupStateRequestData>> retries = new ArrayList<>();
        retries.add(CompletableFuture.completedFuture(unavailable));
        byLeader.forEach((leader, sub) -> retries.add(send(image, leader, sub).handle((response, failure) ->
            failure != null ? sub : retriable(sub, response))));
        CompletableFuture.allOf(retries.toArray(CompletableFuture[]::new)).whenComplete((ignored, failure) -> {
            InitializeShareGroupStateRequestData again = emptyLike(request);
            for (CompletableFuture<InitializeShareGroupStateRequestData> f : retries) {
                InitializeShareGroupStateRequestData left = f.join();
                if (left == null) {
                    done.complete(false);
                    return;
                }
                left.topics().forEach(t -> t.partitions().forEach(p -> add(again, t, p)));
            }
            if (again.topics().isEmpty()) {
                done.complete(true);
            } else {
                retry(again, deadline, done, "share coordinator not available");
            }
        });
    }

    private CompletableFuture<InitializeShareGroupStateResponseData> send(MetadataImage image, int leader,
                                                                         InitializeShareGroupStateRequestData sub) {
        if (leader == brokerId) {
            return shares.initializeState(sub);
        }
        Optional<SourceBroker> destination = image.broker(leader).filter(b -> !b.fenced())
            .flatMap(b -> b.endpoint(listenerName)).map(e -> new SourceBroker(leader, e.host(), e.port()));
        if (destination.isEmpty()) {
            return CompletableFuture.failedFuture(Errors.COORDINATOR_NOT_AVAILABLE.exception());
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                return connections.get(destination.get()).<InitializeShareGroupStateResponseData>send(sub);
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, executor);
    }

    /** The share-partitions of {@code sub} to retry, or null when one failed for good. */
    private static InitializeShareGroupStateRequestData retriable(InitializeShareGroupStateRequestData sub,
                                                                  InitializeShareGroupStateResponseData response) {
        Map<String, Errors> errors = new HashMap<>();
        response.results().forEach(t -> t.partitions().forEach(p ->
            errors.put(t.topicId() + ":" + p.partition(), Errors.forCode(p.errorCode()))));
        InitializeShareGroupStateRequestData again = emptyLike(sub);
        for (InitializeShareGroupStateRequestData.InitializeStateData t : sub.topics()) {
            for (InitializeShareGroupStateRequestData.PartitionData p : t.partitions()) {
                Errors error = errors.getOrDefault(t.topicId() + ":" + p.partition(), Errors.UNKNOWN_SERVER_ERROR);
                if (RETRIABLE.contains(error)) {
                    add(again, t, p);
                } else if (error != Errors.NONE) {
                    LOGGER.warn("[GroupId {}] Cannot initialize share-partition {}:{}: {}", sub.groupId(),
                        t.topicId(), p.partition(), error);
                    return null;
                }
            }
        }
        return again;
    }

    private void retry(InitializeShareGroupStateRequestData request, long deadline, CompletableFuture<Boolean> done,
                       String why) {
        if (System.nanoTime() - deadline >= 0) {
            LOGGER.warn("[GroupId {}] Gave up initializing share-group state: {}", request.groupId(), why);
            done.complete(false);
            return;
        }
        try {
            executor.schedule(() -> attempt(request, deadline, done), RETRY_MS, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            done.complete(false);
        }
    }

    private static InitializeShareGroupStateRequestData emptyLike(InitializeShareGroupStateRequestData request) {
        return new InitializeShareGroupStateRequestData().setGroupId(request.groupId());
    }

    private static void add(InitializeShareGroupStateRequestData into,
                            InitializeShareGroupStateRequestData.InitializeStateData topic,
                            InitializeShareGroupStateRequestData.PartitionData partition) {
        InitializeShareGroupStateRequestData.InitializeStateData target = into.topics().stream()
            .filter(t -> t.topicId().equals(topic.topicId())).findFirst().orElse(null);
        if (target == null) {
            target = new InitializeShareGroupStateRequestData.InitializeStateData().setTopicId(topic.topicId());
            into.topics().add(target);
        }
        target.partitions().add(new InitializeShareGroupStateRequestData.PartitionData()
            .setPartition(partition.partition()).setStateEpoch(partition.stateEpoch())
            .setStartOffset(partition.startOffset()));
    }

    @Override
    public void close() {
        executor.shutdownNow();
        connections.close();
    }
}
