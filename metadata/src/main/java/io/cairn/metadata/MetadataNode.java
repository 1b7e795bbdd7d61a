package io.cairn.metadata;

import io.cairn.metadata.controller.ControllerEventListener;
import io.cairn.metadata.controller.ControllerMutationQuotas;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.ratis.RatisMetadataNode;
import io.cairn.wire.message.AddRaftVoterRequestData;
import io.cairn.wire.message.AddRaftVoterResponseData;
import io.cairn.wire.message.AllocateProducerIdsRequestData;
import io.cairn.wire.message.AllocateProducerIdsResponseData;
import io.cairn.wire.message.AlterPartitionRequestData;
import io.cairn.wire.message.AlterPartitionResponseData;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreatePartitionsRequestData;
import io.cairn.wire.message.CreatePartitionsResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.DeleteTopicsRequestData;
import io.cairn.wire.message.DeleteTopicsResponseData;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import io.cairn.wire.message.IncrementalAlterConfigsRequestData;
import io.cairn.wire.message.IncrementalAlterConfigsResponseData;
import io.cairn.wire.message.RemoveRaftVoterRequestData;
import io.cairn.wire.message.RemoveRaftVoterResponseData;
import io.cairn.wire.message.UnregisterBrokerRequestData;
import io.cairn.wire.message.UnregisterBrokerResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * What the rest of the broker uses of cluster metadata: the current image (a volatile read), committed updates in
 * log order, and controller commands routed to the active controller wherever it runs. Commands are Kafka's own
 * controller requests; the future completes with the Kafka response (its error code tells the outcome) once the
 * change is committed, or exceptionally (an {@link io.cairn.wire.error.ApiException} with NOT_CONTROLLER or
 * REQUEST_TIMED_OUT) when no controller could take it. Implementations are thread-safe.
 */
public interface MetadataNode extends AutoCloseable {

    /** Starts the node of this configuration (formatting a sole-voter combined node on first start). */
    static MetadataNode start(MetadataConfig config) throws IOException {
        return RatisMetadataNode.start(config);
    }

    /** {@link #start(MetadataConfig)}, a controller's event loop telling {@code controllerEvents} its times. */
    static MetadataNode start(MetadataConfig config, ControllerEventListener controllerEvents) throws IOException {
        return RatisMetadataNode.start(config, controllerEvents);
    }

    /**
     * {@link #start(MetadataConfig, ControllerEventListener)} with the quorum's links authenticated by {@code front}
     * (a SASL controller listener).
     */
    static MetadataNode start(MetadataConfig config, ControllerEventListener controllerEvents, QuorumFront front)
            throws IOException {
        return RatisMetadataNode.start(config, controllerEvents, front);
    }

    /** The latest committed image; a volatile read, never blocks. */
    MetadataImage currentImage();

    /**
     * Registers a listener for every update committed after the returned image, in order, on the apply thread.
     *
     * @return the image the listener starts from (the first update it receives follows it)
     */
    MetadataImage subscribe(MetadataListener listener);

    void unsubscribe(MetadataListener listener);

    /** Sends a controller request to the active controller. */
    CompletableFuture<ApiMessage> submit(ApiMessage request);

    /** The cluster id from meta.properties. */
    String clusterId();

    int nodeId();

    /** True when this node is the active controller. */
    boolean isActiveController();

    /** The node id of the active controller as this node last heard it, or -1. */
    int activeControllerId();

    /**
     * Completes with the cause when a write to this node's metadata log fails (a full disk, a failed device): the log
     * then takes no more entries, so the node can neither lead nor follow again, and the process should end (a broker
     * halts, as Kafka's does). Never completes otherwise; a node without a log of its own never completes it.
     */
    default CompletableFuture<Throwable> logFailure() {
        return new CompletableFuture<>();
    }

    @Override
    void close();

    /**
     * Makes this node's controller, whenever it is the active one, count forwarded CreateTopics, CreatePartitions
     * and DeleteTopics against {@code quotas} (KIP-599); a node that is no controller ignores them.
     */
    default void useControllerMutationQuotas(ControllerMutationQuotas quotas) {
    }

    default CompletableFuture<BrokerRegistrationResponseData> registerBroker(BrokerRegistrationRequestData r) {
        return submit(r).thenApply(BrokerRegistrationResponseData.class::cast);
    }

    default CompletableFuture<BrokerHeartbeatResponseData> heartbeat(BrokerHeartbeatRequestData r) {
        return submit(r).thenApply(BrokerHeartbeatResponseData.class::cast);
    }

    default CompletableFuture<UnregisterBrokerResponseData> unregisterBroker(UnregisterBrokerRequestData r) {
        return submit(r).thenApply(UnregisterBrokerResponseData.class::cast);
    }

    default CompletableFuture<CreateTopicsResponseData> createTopics(CreateTopicsRequestData r) {
        return submit(r).thenApply(CreateTopicsResponseData.class::cast);
    }

    default CompletableFuture<DeleteTopicsResponseData> deleteTopics(DeleteTopicsRequestData r) {
        return submit(r).thenApply(DeleteTopicsResponseData.class::cast);
    }

    default CompletableFuture<CreatePartitionsResponseData> createPartitions(CreatePartitionsRequestData r) {
        return submit(r).thenApply(CreatePartitionsResponseData.class::cast);
    }

    default CompletableFuture<AlterPartitionResponseData> alterPartition(AlterPartitionRequestData r) {
        return submit(r).thenApply(AlterPartitionResponseData.class::cast);
    }

    default CompletableFuture<IncrementalAlterConfigsResponseData> incrementalAlterConfigs(
            IncrementalAlterConfigsRequestData r) {
        return submit(r).thenApply(IncrementalAlterConfigsResponseData.class::cast);
    }

    /** DescribeQuorum, answered by the active controller from its Raft state. */
    default CompletableFuture<DescribeQuorumResponseData> describeQuorum(DescribeQuorumRequestData r) {
        return submit(r).thenApply(DescribeQuorumResponseData.class::cast);
    }

    /**
     * AddRaftVoter (KIP-853), answered by the active controller once the voter set with the new voter is committed,
     * or with Kafka's error code (UNSUPPORTED_VERSION for a static quorum, DUPLICATE_VOTER, REQUEST_TIMED_OUT, ...).
     */
    default CompletableFuture<AddRaftVoterResponseData> addRaftVoter(AddRaftVoterRequestData r) {
        return submit(r).thenApply(AddRaftVoterResponseData.class::cast);
    }

    /** RemoveRaftVoter (KIP-853), as {@link #addRaftVoter} (VOTER_NOT_FOUND for a voter key not in the set). */
    default CompletableFuture<RemoveRaftVoterResponseData> removeRaftVoter(RemoveRaftVoterRequestData r) {
        return submit(r).thenApply(RemoveRaftVoterResponseData.class::cast);
    }

    default CompletableFuture<AllocateProducerIdsResponseData> allocateProducerIds(AllocateProducerIdsRequestData r) {
        return submit(r).thenApply(AllocateProducerIdsResponseData.class::cast);
    }
}
