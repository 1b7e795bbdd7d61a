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
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateSummaryRequestData;
import io.cairn.wire.message.ReadShareGroupStateSummaryResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
 * InitializeShareGroupState, DeleteShareGroupState and ReadShareGroupStateSummary): each share-partition goes to the
 * leader of its {@code __share_group_state} partition, a local call to {@link ShareCoordinator} when that is this
 * broker, else the RPC (v0) over the inter-broker client. {@code __share_group_state} is created when it does not
 * exist yet; share-partitions whose coordinator is not available, not this one, or loading are retried every
 * {@value #RETRY_MS} ms for up to {@code timeoutMs}, as Kafka's persister retries its FindCoordinator and state calls;
 * one that still fails then answers its last error.
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
            List.of(new BrokerConnection.ApiRange(ApiKey.INITIALIZE_SHARE_GROUP_STATE, (short) 0, (short) 0),
                new BrokerConnection.ApiRange(ApiKey.DELETE_SHARE_GROUP_STATE, (short) 0, (short) 0),
                new BrokerConnection.ApiRange(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, (short) 0, (short) 0)), tls);
    }

    @Override
    public CompletableFuture<InitializeShareGroupStateResponseData> initializeState(
            InitializeShareGroupStateRequestData request) {
        Map<Uuid, List<InitializeShareGroupStateRequestData.PartitionData>> partitions = new LinkedHashMap<>();
        request.topics().forEach(t -> partitions.computeIfAbsent(t.topicId(), id -> new ArrayList<>())
            .addAll(t.partitions()));
        return route(request.groupId(), partitions, new Rpc<InitializeShareGroupStateRequestData,
                InitializeShareGroupStateResponseData, InitializeShareGroupStateRequestData.PartitionData,
                InitializeShareGroupStateResponseData.PartitionResult>() {
            @Override
            public InitializeShareGroupStateRequestData request(String groupId,
                    Map<Uuid, List<InitializeShareGroupStateRequestData.PartitionData>> sub) {
                InitializeShareGroupStateRequestData data = new InitializeShareGroupStateRequestData()
                    .setGroupId(groupId);
                sub.forEach((topic, ps) -> data.topics().add(new InitializeShareGroupStateRequestData
                    .InitializeStateData().setTopicId(topic).setPartitions(new ArrayList<>(ps))));
                return data;
            }

            @Override
            public CompletableFuture<InitializeShareGroupStateResponseData> local(
                    InitializeShareGroupStateRequestData data) {
                return shares.initializeState(data);
            }

            @Override
            public Map<Uuid, List<InitializeShareGroupStateResponseData.PartitionResult>> results(
                    InitializeShareGroupStateResponseData response) {
                Map<Uuid, List<InitializeShareGroupStateResponseData.PartitionResult>> results = new HashMap<>();
                response.results().forEach(t -> results.computeIfAbsent(t.topicId(), id -> new ArrayList<>())
                    .addAll(t.partitions()));
                return results;
            }

            @Override
            public int partition(InitializeShareGroupStateRequestData.PartitionData data) {
                return data.partition();
            }

            @Override
            public int resultPartition(InitializeShareGroupStateResponseData.PartitionResult result) {
                return result.partition();
            }

            @Override
            public short errorCode(InitializeShareGroupStateResponseData.PartitionResult result) {
                return result.errorCode();
            }

            @Override
            public InitializeShareGroupStateResponseData.PartitionResult failed(
                    InitializeShareGroupStateRequestData.PartitionData data, Errors error) {
                return new InitializeShareGroupStateResponseData.PartitionResult().setPartition(data.partition())
                    .setErrorCode(error.code()).setErrorMessage(error.message());
            }
        }).thenApply(results -> {
            InitializeShareGroupStateResponseData response = new InitializeShareGroupStateResponseData();
            results.forEach((topic, ps) -> response.results().add(new InitializeShareGroupStateResponseData
                .InitializeStateResult().setTopicId(topic).setPartitions(ps)));
            return response;
        });
    }

    @Override
    public CompletableFuture<DeleteShareGroupStateResponseData> deleteState(DeleteShareGroupStateRequestData request) {
        Map<Uuid, List<DeleteShareGroupStateRequestData.PartitionData>> partitions = new LinkedHashMap<>();
        request.topics().forEach(t -> partitions.computeIfAbsent(t.topicId(), id -> new ArrayList<>())
            .addAll(t.partitions()));
        return route(request.groupId(), partitions, new Rpc<DeleteShareGroupStateRequestData,
                DeleteShareGroupStateResponseData, DeleteShareGroupStateRequestData.PartitionData,
                DeleteShareGroupStateResponseData.PartitionResult>() {
            @Override
            public DeleteShareGroupStateRequestData request(String groupId,
                    Map<Uuid, List<DeleteShareGroupStateRequestData.PartitionData>> sub) {
                DeleteShareGroupStateRequestData data = new DeleteShareGroupStateRequestData().setGroupId(groupId);
                sub.forEach((topic, ps) -> data.topics().add(new DeleteShareGroupStateRequestData.DeleteStateData()
                    .setTopicId(topic).setPartitions(new ArrayList<>(ps))));
                return data;
            }

            @Override
            public CompletableFuture<DeleteShareGroupStateResponseData> local(DeleteShareGroupStateRequestData data) {
                return shares.deleteState(data);
            }

            @Override
            public Map<Uuid, List<DeleteShareGroupStateResponseData.PartitionResult>> results(
                    DeleteShareGroupStateResponseData response) {
                Map<Uuid, List<DeleteShareGroupStateResponseData.PartitionResult>> results = new HashMap<>();
                response.results().forEach(t -> results.computeIfAbsent(t.topicId(), id -> new ArrayList<>())
                    .addAll(t.partitions()));
                return results;
            }

            @Override
            public int partition(DeleteShareGroupStateRequestData.PartitionData data) {
                return data.partition();
            }

            @Override
            public int resultPartition(DeleteShareGroupStateResponseData.PartitionResult result) {
                return result.partition();
            }

            @Override
            public short errorCode(DeleteShareGroupStateResponseData.PartitionResult result) {
                return result.errorCode();
            }

            @Override
            public DeleteShareGroupStateResponseData.PartitionResult failed(
                    DeleteShareGroupStateRequestData.PartitionData data, Errors error) {
                return new DeleteShareGroupStateResponseData.PartitionResult().setPartition(data.partition())
                    .setErrorCode(error.code()).setErrorMessage(error.message());
            }
        }).thenApply(results -> {
            DeleteShareGroupStateResponseData response = new DeleteShareGroupStateResponseData();
            results.forEach((topic, ps) -> response.results().add(new DeleteShareGroupStateResponseData
                .DeleteStateResult().setTopicId(topic).setPartitions(ps)));
            return response;
        });
    }

    @Override
    public CompletableFuture<ReadShareGroupStateSummaryResponseData> readStateSummary(
            ReadShareGroupStateSummaryRequestData request) {
        Map<Uuid, List<ReadShareGroupStateSummaryRequestData.PartitionData>> partitions = new LinkedHashMap<>();
        request.topics().forEach(t -> partitions.computeIfAbsent(t.topicId(), id -> new ArrayList<>())
            .addAll(t.partitions()));
        return route(request.groupId(), partitions, new Rpc<ReadShareGroupStateSummaryRequestData,
                ReadShareGroupStateSummaryResponseData, ReadShareGroupStateSummaryRequestData.PartitionData,
                ReadShareGroupStateSummaryResponseData.PartitionResult>() {
            @Override
            public ReadShareGroupStateSummaryRequestData request(String groupId,
                    Map<Uuid, List<ReadShareGroupStateSummaryRequestData.PartitionData>> sub) {
                ReadShareGroupStateSummaryRequestData data = new ReadShareGroupStateSummaryRequestData()
                    .setGroupId(groupId);
                sub.forEach((topic, ps) -> data.topics().add(new ReadShareGroupStateSummaryRequestData
                    .ReadStateSummaryData().setTopicId(topic).setPartitions(new ArrayList<>(ps))));
                return data;
            }

            @Override
            public CompletableFuture<ReadShareGroupStateSummaryResponseData> local(
                    ReadShareGroupStateSummaryRequestData data) {
                return shares.readStateSummary(data);
            }

            @Override
            public Map<Uuid, List<ReadShareGroupStateSummaryResponseData.PartitionResult>> results(
                    ReadShareGroupStateSummaryResponseData response) {
                Map<Uuid, List<ReadShareGroupStateSummaryResponseData.PartitionResult>> results = new HashMap<>();
                response.results().forEach(t -> results.computeIfAbsent(t.topicId(), id -> new ArrayList<>())
                    .addAll(t.partitions()));
                return results;
            }

            @Override
            public int partition(ReadShareGroupStateSummaryRequestData.PartitionData data) {
                return data.partition();
            }

            @Override
            public int resultPartition(ReadShareGroupStateSummaryResponseData.PartitionResult result) {
                return result.partition();
            }

            @Override
            public short errorCode(ReadShareGroupStateSummaryResponseData.PartitionResult result) {
                return result.errorCode();
            }

            @Override
            public ReadShareGroupStateSummaryResponseData.PartitionResult failed(
                    ReadShareGroupStateSummaryRequestData.PartitionData data, Errors error) {
                return new ReadShareGroupStateSummaryResponseData.PartitionResult().setPartition(data.partition())
                    .setErrorCode(error.code()).setErrorMessage(error.message()).setStartOffset(-1L);
            }
        }).thenApply(results -> {
            ReadShareGroupStateSummaryResponseData response = new ReadShareGroupStateSummaryResponseData();
            results.forEach((topic, ps) -> response.results().add(new ReadShareGroupStateSummaryResponseData
                .ReadStateSummaryResult().setTopicId(topic).setPartitions(ps)));
            return response;
        });
    }

    /** One state RPC: how its requests are built, sent locally and read back, per share-partition. */
    private interface Rpc<Q extends ApiMessage, S extends ApiMessage, P, R> {
        Q request(String groupId, Map<Uuid, List<P>> partitions);

        CompletableFuture<S> local(Q request);

        Map<Uuid, List<R>> results(S response);

        int partition(P data);

        int resultPartition(R result);

        short errorCode(R result);

        R failed(P data, Errors error);
    }

    /** A share-partition of a request still to be answered, and its last retriable error. */
    private record Pending<P>(Uuid topicId, P data, Errors lastError) {
    }

    /**
     * Sends each share-partition to the leader of its {@code __share_group_state} partition, retrying those whose
     * coordinator is not available (or moved, or loads) until the timeout; the results by topic, every share-partition
     * with one.
     */
    private <Q extends ApiMessage, S extends ApiMessage, P, R> CompletableFuture<Map<Uuid, List<R>>> route(
            String groupId, Map<Uuid, List<P>> partitions, Rpc<Q, S, P, R> rpc) {
        List<Pending<P>> pending = new ArrayList<>();
        partitions.forEach((topic, ps) -> ps.forEach(p -> pending.add(new Pending<>(topic, p,
            Errors.COORDINATOR_NOT_AVAILABLE))));
        Map<Uuid, List<R>> results = new LinkedHashMap<>();
        partitions.keySet().forEach(topic -> results.put(topic, new ArrayList<>()));
        CompletableFuture<Map<Uuid, List<R>>> done = new CompletableFuture<>();
        attempt(groupId, pending, rpc, results, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs), done);
        return done;
    }

    private <Q extends ApiMessage, S extends ApiMessage, P, R> void attempt(String groupId, List<Pending<P>> pending,
            Rpc<Q, S, P, R> rpc, Map<Uuid, List<R>> results, long deadline,
            CompletableFuture<Map<Uuid, List<R>>> done) {
        if (pending.isEmpty()) {
            done.complete(results);
            return;
        }
        MetadataImage image = metadata.currentImage();
        Optional<TopicImage> topic = shares.topic();
        if (topic.isEmpty()) {
            long now = System.nanoTime();
            if (now - lastCreation > TimeUnit.SECONDS.toNanos(5)) {
                lastCreation = now;
                createTopic.run();
            }
            retry(groupId, pending, rpc, results, deadline, done, "__share_group_state does not exist yet");
            return;
        }
        List<Pending<P>> again = new ArrayList<>();
        Map<Integer, List<Pending<P>>> byLeader = new HashMap<>();
        for (Pending<P> p : pending) {
            int partition = shares.partitionFor(new SharePartitionKey(groupId, p.topicId(), rpc.partition(p.data())));
            int leader = topic.get().partition(partition).filter(PartitionRegistration::hasLeader)
                .map(PartitionRegistration::leader).orElse(-1);
            if (leader < 0) {
                again.add(new Pending<>(p.topicId(), p.data(), Errors.COORDINATOR_NOT_AVAILABLE));
            } else {
                byLeader.computeIfAbsent(leader, l -> new ArrayList<>()).add(p);
            }
        }
        List<CompletableFuture<Void>> sends = new ArrayList<>();
        byLeader.forEach((leader, items) -> {
            Map<Uuid, List<P>> sub = new LinkedHashMap<>();
            items.forEach(p -> sub.computeIfAbsent(p.topicId(), t -> new ArrayList<>()).add(p.data()));
            sends.add(send(image, leader, rpc.request(groupId, sub), rpc).handle((response, failure) -> {
                Map<Uuid, List<R>> answered = failure == null ? rpc.results(response) : Map.of();
                synchronized (results) {
                    for (Pending<P> p : items) {
                        R result = answered.getOrDefault(p.topicId(), List.of()).stream()
                            .filter(r -> rpc.resultPartition(r) == rpc.partition(p.data())).findFirst().orElse(null);
                        Errors error = failure != null ? Errors.forException(failure)
                            : result == null ? Errors.UNKNOWN_SERVER_ERROR : Errors.forCode(rpc.errorCode(result));
                        if (RETRIABLE.contains(error) || failure != null && error == Errors.UNKNOWN_SERVER_ERROR) {
                            again.add(new Pending<>(p.topicId(), p.data(), error == Errors.UNKNOWN_SERVER_ERROR
                                ? Errors.COORDINATOR_NOT_AVAILABLE : error));
                        } else {
                            results.get(p.topicId()).add(result != null ? result : rpc.failed(p.data(), error));
                        }
                    }
                }
                return null;
            }));
        });
        CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).whenComplete((ignored, failure) -> {
            if (again.isEmpty()) {
                done.complete(results);
            } else {
                retry(groupId, again, rpc, results, deadline, done, "share coordinator not available");
            }
        });
    }

    @SuppressWarnings("unchecked")
    private <Q extends ApiMessage, S extends ApiMessage, P, R> CompletableFuture<S> send(MetadataImage image,
            int leader, Q request, Rpc<Q, S, P, R> rpc) {
        if (leader == brokerId) {
            try {
                return rpc.local(request);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        Optional<SourceBroker> destination = image.broker(leader).filter(b -> !b.fenced())
            .flatMap(b -> b.endpoint(listenerName)).map(e -> new SourceBroker(leader, e.host(), e.port()));
        if (destination.isEmpty()) {
            return CompletableFuture.failedFuture(Errors.COORDINATOR_NOT_AVAILABLE.exception());
        }
        return CompletableFuture.supplyAsync(() -> {
            try {
                return (S) connections.get(destination.get()).send(request);
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        }, executor);
    }

    private <Q extends ApiMessage, S extends ApiMessage, P, R> void retry(String groupId, List<Pending<P>> pending,
            Rpc<Q, S, P, R> rpc, Map<Uuid, List<R>> results, long deadline, CompletableFuture<Map<Uuid, List<R>>> done,
            String why) {
        if (System.nanoTime() - deadline >= 0) {
            LOGGER.warn("[GroupId {}] Gave up on share-group state request: {}", groupId, why);
            synchronized (results) {
                pending.forEach(p -> results.get(p.topicId()).add(rpc.failed(p.data(), p.lastError())));
            }
            done.complete(results);
            return;
        }
        try {
            executor.schedule(() -> attempt(groupId, pending, rpc, results, deadline, done), RETRY_MS,
                TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            synchronized (results) {
                pending.forEach(p -> results.get(p.topicId())
                    .add(rpc.failed(p.data(), Errors.COORDINATOR_NOT_AVAILABLE)));
            }
            done.complete(results);
        }
    }

    @Override
    public void close() {
        executor.shutdownNow();
        connections.close();
    }
}
