package io.cairn.broker.share.partition;

import io.cairn.broker.share.ShareCoordinator;
import io.cairn.broker.share.SharePartitionKey;
import io.cairn.broker.share.StateBatch;
import io.cairn.isr.client.BrokerConnection;
import io.cairn.isr.client.BrokerConnections;
import io.cairn.isr.client.ClientTls;
import io.cairn.isr.client.SourceBroker;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.ReadShareGroupStateRequestData;
import io.cairn.wire.message.ReadShareGroupStateResponseData;
import io.cairn.wire.message.WriteShareGroupStateRequestData;
import io.cairn.wire.message.WriteShareGroupStateResponseData;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The share-partition leader's persister (Kafka's {@code DefaultStatePersister} and {@code PersisterStateManager}):
 * ReadShareGroupState and WriteShareGroupState v0 to the share coordinator of the share-partition, the leader of its
 * {@code __share_group_state} partition in the metadata image; a call into the local {@link ShareCoordinator} when
 * that is this broker, otherwise a request over the inter-broker client on the {@code cairn-share-persister} thread.
 * NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE and network failures are retried with a
 * doubling backoff ({@value #FIRST_BACKOFF_MS} ms up to {@value #MAX_BACKOFF_MS} ms, {@value #MAX_ATTEMPTS}
 * attempts), as Kafka's persister retries them; then the error is the answer.
 *
 * <p>Thread-safety: thread-safe. Remote calls and retries run on the one persister thread; local calls complete on
 * the share coordinator's threads.
 */
public final class CoordinatorStatePersister implements StatePersister {

    private static final Logger LOGGER = LogManager.getLogger(CoordinatorStatePersister.class);
    static final long FIRST_BACKOFF_MS = 100;
    static final long MAX_BACKOFF_MS = 2_000;
    static final int MAX_ATTEMPTS = 10;
    /** A read answers one share-partition; its state batches are bounded by what the coordinator keeps. */
    private static final int MAX_RESPONSE_BYTES = 16 << 20;

    private final int brokerId;
    private final Supplier<MetadataImage> image;
    private final String listenerName;
    private final ShareCoordinator local;
    private final BrokerConnections connections;
    private final ScheduledExecutorService thread;

    public CoordinatorStatePersister(int brokerId, Supplier<MetadataImage> image, String listenerName,
                                     ShareCoordinator local, int socketTimeoutMs, ClientTls tls) {
        this.brokerId = brokerId;
        this.image = image;
        this.listenerName = listenerName;
        this.local = local;
        this.connections = new BrokerConnections("broker-" + brokerId + "-share-persister", "cairn-share-persister",
            socketTimeoutMs, MAX_RESPONSE_BYTES, List.of(
                new BrokerConnection.ApiRange(ApiKey.READ_SHARE_GROUP_STATE, (short) 0, (short) 0),
                new BrokerConnection.ApiRange(ApiKey.WRITE_SHARE_GROUP_STATE, (short) 0, (short) 0)), tls);
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cairn-share-persister");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public CompletableFuture<PersistedState> read(SharePartitionKey key, int leaderEpoch) {
        ReadShareGroupStateRequestData request = new ReadShareGroupStateRequestData().setGroupId(key.groupId())
            .setTopics(List.of(new ReadShareGroupStateRequestData.ReadStateData().setTopicId(key.topicId())
                .setPartitions(List.of(new ReadShareGroupStateRequestData.PartitionData()
                    .setPartition(key.partition()).setLeaderEpoch(leaderEpoch)))));
        CompletableFuture<PersistedState> result = new CompletableFuture<>();
        attempt(key, 1, FIRST_BACKOFF_MS, result,
            () -> local.readState(request),
            broker -> connections.get(broker).<ReadShareGroupStateResponseData>send(request),
            CoordinatorStatePersister::readResult, state -> state.error(),
            error -> PersistedState.failed(error, error.message()));
        return result;
    }

    private static PersistedState readResult(ReadShareGroupStateResponseData response) {
        if (response.results().isEmpty() || response.results().get(0).partitions().isEmpty()) {
            return PersistedState.failed(Errors.UNKNOWN_SERVER_ERROR, "Empty ReadShareGroupState response");
        }
        ReadShareGroupStateResponseData.PartitionResult p = response.results().get(0).partitions().get(0);
        if (p.errorCode() != Errors.NONE.code()) {
            return PersistedState.failed(Errors.forCode(p.errorCode()), p.errorMessage());
        }
        List<StateBatch> batches = new ArrayList<>(p.stateBatches().size());
        for (ReadShareGroupStateResponseData.StateBatch b : p.stateBatches()) {
            batches.add(new StateBatch(b.firstOffset(), b.lastOffset(), b.deliveryState(), b.deliveryCount()));
        }
        return new PersistedState(Errors.NONE, null, p.stateEpoch(), p.startOffset(), batches);
    }

    @Override
    public CompletableFuture<Errors> write(SharePartitionKey key, int stateEpoch, int leaderEpoch, long startOffset,
                                           List<StateBatch> batches) {
        List<WriteShareGroupStateRequestData.StateBatch> wireBatches = new ArrayList<>(batches.size());
        for (StateBatch b : batches) {
            wireBatches.add(new WriteShareGroupStateRequestData.StateBatch().setFirstOffset(b.firstOffset())
                .setLastOffset(b.lastOffset()).setDeliveryState(b.deliveryState())
                .setDeliveryCount(b.deliveryCount()));
        }
        WriteShareGroupStateRequestData request = new WriteShareGroupStateRequestData().setGroupId(key.groupId())
            .setTopics(List.of(new WriteShareGroupStateRequestData.WriteStateData().setTopicId(key.topicId())
                .setPartitions(List.of(new WriteShareGroupStateRequestData.PartitionData()
                    .setPartition(key.partition()).setStateEpoch(stateEpoch).setLeaderEpoch(leaderEpoch)
                    .setStartOffset(startOffset).setStateBatches(wireBatches)))));
        CompletableFuture<Errors> result = new CompletableFuture<>();
        attempt(key, 1, FIRST_BACKOFF_MS, result,
            () -> local.writeState(request),
            broker -> connections.get(broker).<WriteShareGroupStateResponseData>send(request),
            CoordinatorStatePersister::writeResult, Function.identity(), Function.identity());
        return result;
    }

    private static Errors writeResult(WriteShareGroupStateResponseData response) {
        if (response.results().isEmpty() || response.results().get(0).partitions().isEmpty()) {
            return Errors.UNKNOWN_SERVER_ERROR;
        }
        return Errors.forCode(response.results().get(0).partitions().get(0).errorCode());
    }

    /** A remote call: blocking, on the persister thread. */
    @FunctionalInterface
    private interface RemoteCall<R> {
        R send(SourceBroker broker) throws Exception;
    }

    /** One attempt; a retriable outcome schedules the next after {@code backoffMs}. */
    private <R, T> void attempt(SharePartitionKey key, int attempt, long backoffMs, CompletableFuture<T> result,
                                Supplier<CompletableFuture<R>> localCall, RemoteCall<R> remoteCall,
                                Function<R, T> toResult, Function<T, Errors> errorOf, Function<Errors, T> failed) {
        Optional<Integer> leader = coordinatorLeader(key);
        CompletableFuture<T> outcome;
        if (leader.isEmpty()) {
            outcome = CompletableFuture.completedFuture(failed.apply(Errors.COORDINATOR_NOT_AVAILABLE));
        } else if (leader.get() == brokerId) {
            outcome = localCall.get().thenApply(toResult);
        } else {
            Optional<SourceBroker> broker = endpoint(leader.get());
            if (broker.isEmpty()) {
                outcome = CompletableFuture.completedFuture(failed.apply(Errors.COORDINATOR_NOT_AVAILABLE));
            } else {
                outcome = new CompletableFuture<>();
                CompletableFuture<T> remote = outcome;
                submit(() -> {
                    try {
                        remote.complete(toResult.apply(remoteCall.send(broker.get())));
                    } catch (Exception e) {
                        LOGGER.debug("Share state call to {} failed: {}", broker.get(), e.toString());
                        remote.complete(failed.apply(Errors.COORDINATOR_NOT_AVAILABLE));
                    }
                }, 0, result, failed);
            }
        }
        outcome.whenComplete((value, failure) -> {
            T answer = failure != null ? failed.apply(Errors.forException(failure)) : value;
            Errors error = errorOf.apply(answer);
            boolean retriable = error == Errors.NOT_COORDINATOR || error == Errors.COORDINATOR_NOT_AVAILABLE
                || error == Errors.COORDINATOR_LOAD_IN_PROGRESS;
            if (retriable && attempt < MAX_ATTEMPTS) {
                submit(() -> attempt(key, attempt + 1, Math.min(MAX_BACKOFF_MS, backoffMs * 2), result, localCall,
                    remoteCall, toResult, errorOf, failed), backoffMs, result, failed);
            } else {
                result.complete(answer);
            }
        });
    }

    private <T> void submit(Runnable task, long delayMs, CompletableFuture<T> result, Function<Errors, T> failed) {
        try {
            thread.schedule(task, delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            result.complete(failed.apply(Errors.COORDINATOR_NOT_AVAILABLE));
        }
    }

    /** The leader of the share-partition's {@code __share_group_state} partition. */
    private Optional<Integer> coordinatorLeader(SharePartitionKey key) {
        Optional<TopicImage> topic = image.get().topic(ShareCoordinator.TOPIC);
        if (topic.isEmpty() || topic.get().partitions().isEmpty()) {
            return Optional.empty();
        }
        int partition = key.coordinatorPartition(topic.get().partitions().size());
        return topic.get().partition(partition).filter(PartitionRegistration::hasLeader)
            .map(PartitionRegistration::leader);
    }

    private Optional<SourceBroker> endpoint(int id) {
        Optional<BrokerEndpoint> endpoint = image.get().broker(id).filter(b -> !b.fenced())
            .flatMap(b -> b.endpoint(listenerName));
        return endpoint.map(e -> new SourceBroker(id, e.host(), e.port()));
    }

    @Override
    public void close() {
        thread.shutdownNow();
        connections.close();
    }
}
