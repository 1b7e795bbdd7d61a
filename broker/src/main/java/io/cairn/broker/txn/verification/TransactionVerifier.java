package io.cairn.broker.txn.verification;

import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.isr.client.BrokerConnection;
import io.cairn.isr.client.BrokerConnections;
import io.cairn.isr.client.ClientTls;
import io.cairn.isr.client.SourceBroker;
import io.cairn.metadata.image.BrokerEndpoint;
import io.cairn.metadata.image.BrokerRegistration;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.PartitionRegistration;
import io.cairn.metadata.image.TopicImage;
import io.cairn.metadata.image.TopicPartition;
import io.cairn.wire.error.Errors;
import io.cairn.wire.error.UnsupportedVersionException;
import io.cairn.wire.message.AddPartitionsToTxnRequestData;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic;
import io.cairn.wire.message.AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction;
import io.cairn.wire.message.AddPartitionsToTxnResponseData;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnPartitionResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnResult;
import io.cairn.wire.message.AddPartitionsToTxnResponseData.AddPartitionsToTxnTopicResult;
import io.cairn.wire.message.ApiKey;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * Asks transaction coordinators whether partitions are in a producer's ongoing transaction (KIP-890 part 1: Produce
 * and TxnOffsetCommit v0-4), or (transaction.version 2, KIP-890 part 2: Produce v12+, TxnOffsetCommit v5) to add
 * them to it (Kafka's {@code AddPartitionsToTxnManager}):
 * AddPartitionsToTxn v4+, with {@code verify_only} unless adding, one request per coordinator carrying every
 * transaction queued for it, one request in flight per coordinator. The coordinator of a transactional
 * id is the leader of its {@code __transaction_state} partition ({@code abs(hashCode) % partitions}) in the metadata
 * image, reached on the inter-broker listener; no topic, no leader or no live endpoint is COORDINATOR_NOT_AVAILABLE.
 * Outcomes, as Kafka's: the errors of the partitions not verified (an empty map: all verified); PRODUCER_FENCED
 * becomes INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE becomes INVALID_TXN_STATE for clients too old to know it, a
 * request-wide error applies to every partition (CLUSTER_AUTHORIZATION_FAILED as INVALID_TXN_STATE), no answer is
 * NETWORK_EXCEPTION, a coordinator that does not serve v4 skips verification; a second verification of one
 * transactional id queued for the same coordinator ends the older one with NETWORK_EXCEPTION (same epoch, the
 * producer retried) or INVALID_PRODUCER_EPOCH (older epoch), or is itself refused with INVALID_PRODUCER_EPOCH when its
 * epoch is the older.
 *
 * <p>Threads: {@link #verify} queues and returns; the {@code cairn-add-partitions-to-txn-sender} thread sends (each
 * request is bounded by the socket timeout) and completes the futures, so callers continue on their own executor.
 * Thread-safe: the queue is guarded by this object's monitor.
 *
 * <p>{@code transaction.partition.verification.enable} is read live, at each question, as Kafka's verifier reads its
 * current {@code KafkaConfig}: this broker's dynamic value, else the cluster default's, else {@code server.properties}'
 * (the value it was made with).
 */
public final class TransactionVerifier implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(TransactionVerifier.class);
    static final String TRANSACTION_STATE_TOPIC = TransactionCoordinator.TOPIC;
    /** Every AddPartitionsToTxn response this client can cause names each partition once: far below this. */
    private static final int MAX_RESPONSE_BYTES = 16 << 20;
    /** The dynamic broker config that turns verification on and off. */
    static final String VERIFICATION_ENABLE = "transaction.partition.verification.enable";

    /** One transaction waiting for its coordinator's answer. */
    private record Pending(long producerId, short producerEpoch, List<TopicPartition> partitions,
                           boolean abortableSupported, boolean add,
                           CompletableFuture<Map<TopicPartition, Errors>> result) {
    }

    /** The transactions queued for one coordinator. */
    private record Batch(SourceBroker coordinator, Map<String, Pending> transactions) {
    }

    private final Supplier<MetadataImage> image;
    private final String listenerName;
    private final VerificationTransport transport;
    /** This broker's dynamic configs, whose {@code transaction.partition.verification.enable} wins. */
    private final ConfigResource brokerConfigs;
    /** {@code transaction.partition.verification.enable} of {@code server.properties}. */
    private final boolean verificationEnabled;
    private final Thread thread;
    /** Coordinator id → queued transactions; guarded by {@code this}. */
    private final Map<Integer, Batch> queued = new LinkedHashMap<>();
    private boolean closed;

    /**
     * A verifier over the inter-broker client; {@link #start()} it. {@code verificationEnabled}:
     * transaction.partition.verification.enable (adding partitions for transaction.version 2 needs no setting).
     */
    public static TransactionVerifier create(int brokerId, Supplier<MetadataImage> image, String listenerName,
                                             int socketTimeoutMs, boolean verificationEnabled) {
        return create(brokerId, image, listenerName, socketTimeoutMs, verificationEnabled, ClientTls.PLAINTEXT);
    }

    /** As {@link #create(int, Supplier, String, int, boolean)}, reaching coordinators over {@code tls}. */
    public static TransactionVerifier create(int brokerId, Supplier<MetadataImage> image, String listenerName,
                                             int socketTimeoutMs, boolean verificationEnabled, ClientTls tls) {
        BrokerConnections connections = new BrokerConnections("broker-" + brokerId + "-add-partitions-to-txn",
            "cairn-add-partitions-to-txn-sender", socketTimeoutMs, MAX_RESPONSE_BYTES,
            List.of(new BrokerConnection.ApiRange(ApiKey.ADD_PARTITIONS_TO_TXN, (short) 4, (short) 5)), tls);
        VerificationTransport transport = new VerificationTransport() {
            @Override
            public AddPartitionsToTxnResponseData send(SourceBroker coordinator, AddPartitionsToTxnRequestData request)
                    throws IOException {
                return connections.get(coordinator).send(request);
            }

            @Override
            public void close() {
                connections.close();
            }
        };
        return new TransactionVerifier(image, brokerId, listenerName, verificationEnabled, transport);
    }

    /** A verifying verifier reaching coordinators through {@code transport} (tests); {@link #start()} it. */
    public TransactionVerifier(Supplier<MetadataImage> image, String listenerName, VerificationTransport transport) {
        this(image, listenerName, true, transport);
    }

    /**
     * A verifier reaching coordinators through {@code transport}, whose verification only the cluster default's
     * dynamic configs change (tests); {@link #start()} it.
     */
    public TransactionVerifier(Supplier<MetadataImage> image, String listenerName, boolean verificationEnabled,
                                VerificationTransport transport) {
        this(image, -1, listenerName, verificationEnabled, transport);
    }

    /**
     * A verifier of broker {@code brokerId} reaching coordinators through {@code transport}; {@link #start()} it.
     * {@code verificationEnabled}: {@code transaction.partition.verification.enable} of {@code server.properties}.
     */
    public TransactionVerifier(Supplier<MetadataImage> image, int brokerId, String listenerName,
                                boolean verificationEnabled, VerificationTransport transport) {
        this.brokerConfigs = ConfigResource.broker(Integer.toString(brokerId));
        this.verificationEnabled = verificationEnabled;
        this.image = image;
        this.listenerName = listenerName;
        this.transport = transport;
        this.thread = new Thread(this::run, "cairn-add-partitions-to-txn-sender");
        this.thread.setDaemon(true);
    }

    public void start() {
        thread.start();
    }

    /**
     * transaction.partition.verification.enable now: whether partitions are verified (adding is always done); this
     * broker's dynamic value, else the cluster default's, else the static one.
     */
    public boolean verificationEnabled() {
        MetadataImage now = image.get();
        String value = now == null ? null : now.configs(brokerConfigs).get(VERIFICATION_ENABLE);
        if (value == null && now != null) {
            value = now.configs(ConfigResource.broker("")).get(VERIFICATION_ENABLE);
        }
        return value == null ? verificationEnabled : Boolean.parseBoolean(value.trim());
    }

    /**
     * Verifies that {@code partitions} are in the transaction of {@code transactionalId}; completes with the errors
     * of those that are not. {@code abortableSupported}: the producer's request is new enough (Produce v11+) to be
     * told TRANSACTION_ABORTABLE.
     */
    public CompletableFuture<Map<TopicPartition, Errors>> verify(String transactionalId, long producerId,
            short producerEpoch, Collection<TopicPartition> partitions, boolean abortableSupported) {
        return verifyOrAdd(transactionalId, producerId, producerEpoch, partitions, abortableSupported, false);
    }

    /**
     * As {@link #verify}, or with {@code add} (transaction.version 2) adds {@code partitions} to the transaction;
     * completes with the errors of those not added.
     */
    public CompletableFuture<Map<TopicPartition, Errors>> verifyOrAdd(String transactionalId, long producerId,
            short producerEpoch, Collection<TopicPartition> partitions, boolean abortableSupported, boolean add) {
        CompletableFuture<Map<TopicPartition, Errors>> result = new CompletableFuture<>();
        List<TopicPartition> tps = List.copyOf(partitions);
        Optional<SourceBroker> coordinator = coordinator(image.get(), transactionalId);
        if (coordinator.isEmpty()) {
            result.complete(all(tps, Errors.COORDINATOR_NOT_AVAILABLE));
            return result;
        }
        synchronized (this) {
            if (!closed) {
                enqueue(coordinator.get(), transactionalId, new Pending(producerId, producerEpoch, tps,
                    abortableSupported, add, result));
                notifyAll();
                return result;
            }
        }
        result.complete(all(tps, Errors.NETWORK_EXCEPTION));
        return result;
    }

    /** Queues {@code pending}, applying Kafka's rule for a transactional id already queued. */
    private void enqueue(SourceBroker coordinator, String transactionalId, Pending pending) {
        Batch batch = queued.computeIfAbsent(coordinator.id(), id -> new Batch(coordinator, new LinkedHashMap<>()));
        Pending existing = batch.transactions().get(transactionalId);
        if (existing != null) {
            if (existing.producerEpoch() > pending.producerEpoch()) {
                pending.result().complete(all(pending.partitions(), Errors.INVALID_PRODUCER_EPOCH));
                return;
            }
            existing.result().complete(all(existing.partitions(), existing.producerEpoch() < pending.producerEpoch()
                ? Errors.INVALID_PRODUCER_EPOCH : Errors.NETWORK_EXCEPTION));
        }
        batch.transactions().put(transactionalId, pending);
    }

    /** The leader of the transactional id's {@code __transaction_state} partition, if it has a live endpoint. */
    Optional<SourceBroker> coordinator(MetadataImage current, String transactionalId) {
        Optional<TopicImage> topic = current.topic(TRANSACTION_STATE_TOPIC);
        if (topic.isEmpty() || topic.get().partitions().isEmpty()) {
            return Optional.empty();
        }
        int partition = GroupCoordinator.partitionFor(transactionalId, topic.get().partitions().size());
        Optional<PartitionRegistration> registration = topic.get().partition(partition);
        if (registration.isEmpty() || !registration.get().hasLeader()) {
            return Optional.empty();
        }
        int leader = registration.get().leader();
        Optional<BrokerRegistration> broker = current.broker(leader).filter(b -> !b.fenced());
        Optional<BrokerEndpoint> endpoint = broker.flatMap(b -> b.endpoint(listenerName));
        return endpoint.map(e -> new SourceBroker(leader, e.host(), e.port()));
    }

    private void run() {
        try {
            while (true) {
                List<Batch> batches;
                synchronized (this) {
                    while (queued.isEmpty() && !closed) {
                        wait();
                    }
                    if (closed) {
                        return;
                    }
                    batches = new ArrayList<>(queued.values());
                    queued.clear();
                }
                batches.forEach(this::send);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void send(Batch batch) {
        AddPartitionsToTxnRequestData request = new AddPartitionsToTxnRequestData();
        batch.transactions().forEach((id, pending) -> request.transactions().add(transaction(id, pending)));
        AddPartitionsToTxnResponseData response;
        try {
            response = transport.send(batch.coordinator(), request);
        } catch (UnsupportedVersionException e) {
            LOGGER.warn("{} does not serve AddPartitionsToTxn v4+, which suggests it cannot verify transactions; "
                + "appending without verification", batch.coordinator());
            batch.transactions().values().forEach(p -> p.result().complete(Map.of()));
            return;
        } catch (IOException | RuntimeException e) {
            LOGGER.warn("AddPartitionsToTxn to {} failed: {}", batch.coordinator(), e.toString());
            batch.transactions().values().forEach(p -> p.result().complete(all(p.partitions(),
                Errors.NETWORK_EXCEPTION)));
            return;
        }
        complete(batch.transactions(), response);
    }

    /** Kafka's mapping of the coordinator's answer to the errors of the partitions not verified. */
    private static void complete(Map<String, Pending> transactions, AddPartitionsToTxnResponseData response) {
        if (response.errorCode() != Errors.NONE.code()) {
            Errors error = response.errorCode() == Errors.CLUSTER_AUTHORIZATION_FAILED.code()
                ? Errors.INVALID_TXN_STATE : Errors.forCode(response.errorCode());
            LOGGER.error("AddPartitionsToTxn returned with error {}", Errors.forCode(response.errorCode()));
            transactions.values().forEach(p -> p.result().complete(all(p.partitions(), error)));
            return;
        }
        Map<String, AddPartitionsToTxnResult> results = new HashMap<>();
        response.resultsByTransaction().forEach(r -> results.put(r.transactionalId(), r));
        transactions.forEach((id, pending) -> {
            AddPartitionsToTxnResult result = results.get(id);
            if (result == null) {
                pending.result().complete(all(pending.partitions(), Errors.NETWORK_EXCEPTION));
                return;
            }
            Map<TopicPartition, Errors> unverified = new HashMap<>();
            for (AddPartitionsToTxnTopicResult topic : result.topicResults()) {
                for (AddPartitionsToTxnPartitionResult p : topic.resultsByPartition()) {
                    if (p.partitionErrorCode() != Errors.NONE.code()) {
                        unverified.put(new TopicPartition(topic.name(), p.partitionIndex()),
                            clientError(Errors.forCode(p.partitionErrorCode()), pending.abortableSupported()));
                    }
                }
            }
            pending.result().complete(unverified);
        });
    }

    private static Errors clientError(Errors error, boolean abortableSupported) {
        if (error == Errors.PRODUCER_FENCED) {
            return Errors.INVALID_PRODUCER_EPOCH;
        }
        if (error == Errors.TRANSACTION_ABORTABLE && !abortableSupported) {
            return Errors.INVALID_TXN_STATE;
        }
        return error;
    }

    private static AddPartitionsToTxnTransaction transaction(String transactionalId, Pending pending) {
        Map<String, AddPartitionsToTxnTopic> topics = new LinkedHashMap<>();
        for (TopicPartition tp : pending.partitions()) {
            topics.computeIfAbsent(tp.topic(), name -> new AddPartitionsToTxnTopic().setName(name)).partitions()
                .add(tp.partition());
        }
        return new AddPartitionsToTxnTransaction().setTransactionalId(transactionalId)
            .setProducerId(pending.producerId()).setProducerEpoch(pending.producerEpoch()).setVerifyOnly(!pending.add())
            .setTopics(new ArrayList<>(topics.values()));
    }

    static Map<TopicPartition, Errors> all(Collection<TopicPartition> partitions, Errors error) {
        Map<TopicPartition, Errors> errors = new HashMap<>();
        partitions.forEach(tp -> errors.put(tp, error));
        return errors;
    }

    /** Stops the sender; queued verifications end with NETWORK_EXCEPTION (the producer retries elsewhere). */
    @Override
    public void close() {
        List<Batch> left;
        synchronized (this) {
            closed = true;
            left = new ArrayList<>(queued.values());
            queued.clear();
            notifyAll();
        }
        transport.close();
        left.forEach(b -> b.transactions().values().forEach(p -> p.result().complete(all(p.partitions(),
            Errors.NETWORK_EXCEPTION))));
        try {
            thread.join(10_000L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
