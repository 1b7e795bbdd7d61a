package io.cairn.broker;

import io.cairn.broker.produce.DeleteRecordsService;
import io.cairn.broker.produce.ProduceService;
import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.BrokerReconfigurable;
import io.cairn.broker.config.CleanerSettings;
import io.cairn.broker.config.DynamicConnectionLimits;
import io.cairn.broker.config.DynamicListeners;
import io.cairn.broker.config.DynamicNetworkThreads;
import io.cairn.broker.config.DynamicSaslSettings;
import io.cairn.broker.config.DynamicLogCleaner;
import io.cairn.broker.config.DynamicThreadPools;
import io.cairn.broker.config.Endpoint;
import io.cairn.broker.fetch.FetchService;
import io.cairn.broker.fetch.FetchSessionCache;
import io.cairn.broker.group.GroupCoordinator;
import io.cairn.broker.handler.AddOffsetsToTxnHandler;
import io.cairn.broker.handler.AddPartitionsToTxnHandler;
import io.cairn.broker.handler.AlterConfigsHandler;
import io.cairn.broker.handler.AlterClientQuotasHandler;
import io.cairn.broker.handler.AlterUserScramCredentialsHandler;
import io.cairn.broker.handler.AlterPartitionReassignmentsHandler;
import io.cairn.broker.handler.AlterReplicaLogDirsHandler;
import io.cairn.broker.handler.ApiHandler;
import io.cairn.broker.handler.AutoTopicCreation;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.broker.handler.ClusterAuthorizedHandler;
import io.cairn.broker.handler.ConsumerGroupDescribeHandler;
import io.cairn.broker.handler.ConsumerGroupHeartbeatHandler;
import io.cairn.broker.handler.CreateAclsHandler;
import io.cairn.broker.handler.CreateDelegationTokenHandler;
import io.cairn.broker.handler.CreatePartitionsHandler;
import io.cairn.broker.handler.CreateTopicsHandler;
import io.cairn.broker.handler.DeleteAclsHandler;
import io.cairn.broker.handler.DeleteGroupsHandler;
import io.cairn.broker.handler.DeleteRecordsHandler;
import io.cairn.broker.handler.DeleteTopicsHandler;
import io.cairn.broker.handler.DescribeAclsHandler;
import io.cairn.broker.handler.DescribeClientQuotasHandler;
import io.cairn.broker.handler.DescribeClusterHandler;
import io.cairn.broker.handler.DescribeConfigsHandler;
import io.cairn.broker.handler.DescribeDelegationTokenHandler;
import io.cairn.broker.handler.DescribeGroupsHandler;
import io.cairn.broker.handler.DescribeLogDirsHandler;
import io.cairn.broker.handler.DescribeProducersHandler;
import io.cairn.broker.handler.DescribeQuorumHandler;
import io.cairn.broker.handler.AddRaftVoterHandler;
import io.cairn.broker.handler.RemoveRaftVoterHandler;
import io.cairn.broker.handler.DescribeTopicPartitionsHandler;
import io.cairn.broker.handler.DescribeTransactionsHandler;
import io.cairn.broker.handler.DescribeUserScramCredentialsHandler;
import io.cairn.broker.handler.ElectLeadersHandler;
import io.cairn.broker.handler.EndTxnHandler;
import io.cairn.broker.handler.ExpireDelegationTokenHandler;
import io.cairn.broker.handler.FetchHandler;
import io.cairn.broker.handler.FindCoordinatorHandler;
import io.cairn.broker.handler.InitializeShareGroupStateHandler;
import io.cairn.broker.handler.ReadShareGroupStateHandler;
import io.cairn.broker.handler.WriteShareGroupStateHandler;
import io.cairn.broker.handler.DeleteShareGroupStateHandler;
import io.cairn.broker.handler.ReadShareGroupStateSummaryHandler;
import io.cairn.broker.handler.GroupHandlers;
import io.cairn.broker.handler.HandlerRegistry;
import io.cairn.broker.handler.IncrementalAlterConfigsHandler;
import io.cairn.broker.handler.InitProducerIdHandler;
import io.cairn.broker.handler.ListConfigResourcesHandler;
import io.cairn.broker.handler.ListGroupsHandler;
import io.cairn.broker.handler.ListOffsetsHandler;
import io.cairn.broker.handler.ListPartitionReassignmentsHandler;
import io.cairn.broker.handler.ListTransactionsHandler;
import io.cairn.broker.handler.MarkerAppender;
import io.cairn.broker.handler.MetadataHandler;
import io.cairn.broker.handler.OffsetFetchHandler;
import io.cairn.broker.handler.OffsetForLeaderEpochHandler;
import io.cairn.broker.handler.ProduceHandler;
import io.cairn.broker.txn.ProducerIdManager;
import io.cairn.broker.handler.RenewDelegationTokenHandler;
import io.cairn.broker.handler.SaslAuthenticateHandler;
import io.cairn.broker.handler.SaslHandshakeHandler;
import io.cairn.broker.handler.TopicConfigDefaults;
import io.cairn.broker.handler.UnregisterBrokerHandler;
import io.cairn.broker.handler.UpdateFeaturesHandler;
import io.cairn.broker.handler.WriteTxnMarkersHandler;
import io.cairn.broker.metrics.BrokerMetrics;
import io.cairn.broker.metrics.BrokerState;
import io.cairn.broker.metrics.ConsumerLagCollector;
import io.cairn.broker.metrics.ControllerMutationQuotaCollector;
import io.cairn.broker.metrics.FetcherLagMetrics;
import io.cairn.broker.metrics.GroupCoordinatorMetrics;
import io.cairn.broker.metrics.GroupMetadataCollector;
import io.cairn.broker.metrics.LogCleanerMetrics;
import io.cairn.broker.metrics.MetricsHttpServer;
import io.cairn.broker.metrics.PartitionLogCollector;
import io.cairn.broker.metrics.ReplicationMetrics;
import io.cairn.broker.metrics.TransactionCoordinatorMetrics;
import io.cairn.broker.net.RequestHandlerPool;
import io.cairn.broker.net.SocketServer;
import io.cairn.broker.purgatory.PartitionPurgatory;
import io.cairn.broker.quota.ClientQuotas;
import io.cairn.broker.quota.RequestQuotas;
import io.cairn.broker.security.Authorizer;
import io.cairn.broker.security.DelegationTokenCache;
import io.cairn.broker.security.DynamicSslStores;
import io.cairn.broker.security.InterBrokerClientSecurity;
import io.cairn.broker.security.ScramCredentials;
import io.cairn.broker.security.SslFactory;
import io.cairn.broker.security.StandardAclAuthorizer;
import io.cairn.broker.share.ShareCoordinator;
import io.cairn.broker.share.ShareGroupsGate;
import io.cairn.broker.share.partition.CoordinatorStatePersister;
import io.cairn.broker.share.partition.ShareFetchService;
import io.cairn.broker.share.partition.SharePartitionManager;
import io.cairn.broker.share.partition.ShareSessionCache;
import io.cairn.broker.purgatory.SystemTimer;
import io.cairn.broker.purgatory.Timer;
import io.cairn.broker.handler.ShareAcknowledgeHandler;
import io.cairn.broker.handler.ShareFetchHandler;
import io.cairn.broker.group.share.ShareStateInitialization;
import io.cairn.broker.handler.ShareGroupDescribeHandler;
import io.cairn.broker.handler.DescribeShareGroupOffsetsHandler;
import io.cairn.broker.handler.AlterShareGroupOffsetsHandler;
import io.cairn.broker.handler.DeleteShareGroupOffsetsHandler;
import io.cairn.broker.group.ShareOffsetsCoordinator;
import io.cairn.broker.handler.ShareGroupHeartbeatHandler;
import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.broker.txn.TransactionMarkerSender;
import io.cairn.broker.txn.markers.TransactionMarkerChannel;
import io.cairn.broker.txn.verification.TransactionVerifier;
import io.cairn.isr.LogConfigs;
import io.cairn.isr.RackAwareReplicaSelector;
import io.cairn.isr.ReplicaManager;
import io.cairn.isr.client.ClientTls;
import io.cairn.log.LogConfig;
import io.cairn.log.LogManager;
import io.cairn.log.Scheduler;
import io.cairn.log.Time;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.config.ConfigTable;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.ConfigResource;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import io.micrometer.core.instrument.Gauge;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import org.apache.logging.log4j.Logger;

/**
 * One Cairn node: its log directories, its handlers and its listeners, started and stopped together. {@link Main}
 * runs one per process; tests may run one in their own JVM.
 *
 * <p>Lifecycle: {@link #start()} once, then {@link #close()} (idempotent). Thread-safe: close may be called from a
 * shutdown hook while another thread waits.
 */
public final class CairnServer implements AutoCloseable {

    private static final Logger LOGGER = org.apache.logging.log4j.LogManager.getLogger(CairnServer.class);

    private final BrokerConfig config;
    /** How long startup waits for the controller to register and unfence this broker. */
    private static final long REGISTRATION_TIMEOUT_MS = 60_000L;
    /** Kafka's {@code retry.backoff.ms} default, the marker channel's wait before routing a failed marker again. */
    private static final long MARKER_RETRY_BACKOFF_MS = 100L;
    /** The most partition markers the channel holds at once; later transactions wait for room. */
    private static final int MAX_QUEUED_MARKERS = 10_000;
    /** A marker request's read timeout exceeds the leader's acks wait by this much, so its answer arrives. */
    private static final int INTER_BROKER_SOCKET_MARGIN_MS = 10_000;

    private final List<ApiHandler<?, ?>> extraHandlers;
    private final String logPrefix;
    private List<ApiHandler<?, ?>> handlers = List.of();
    private BrokerMetadata metadata;
    /** The standard authorizer when {@code authorizer.class.name} selects it, else null. */
    private StandardAclAuthorizer aclAuthorizer;
    /** The client byte-rate quotas, following the metadata image. */
    private ClientQuotas clientQuotas;
    private DelegationTokenCache delegationTokens;
    /** The {@code background.threads} pool ({@code kafka-scheduler-N}) the log managers and replica manager share. */
    private Scheduler scheduler;
    private LogDirFailureHandler logDirFailures;
    private final List<LogManager> logManagers = new ArrayList<>();
    private ReplicaManager replicaManager;
    private FetchService fetchService;
    private PartitionPurgatory purgatory;
    private GroupCoordinator groupCoordinator;
    private TransactionCoordinator transactionCoordinator;
    private ShareCoordinator shareCoordinator;
    private SharePartitionManager sharePartitions;
    private Timer shareLockTimer;
    private RequestHandlerPool requestHandlers;
    private DynamicThreadPools threadPools;
    private DynamicListeners listeners;
    private DynamicNetworkThreads networkThreads;
    private DynamicSaslSettings saslSettings;
    private DynamicConnectionLimits connectionLimits;
    /** The SSL listeners' reloadable stores; set once the socket server has loaded them (before any request). */
    private volatile DynamicSslStores sslStores;
    private DynamicLogCleaner logCleaner;
    private TransactionMarkerChannel markerChannel;
    /** Built on first use by {@link #interBrokerSecurity()}; guarded by {@code this}. */
    private InterBrokerClientSecurity interBrokerSecurity;
    private TransactionVerifier transactionVerifier;
    private SocketServer socketServer;
    private BrokerMetrics metrics;
    private MetricsHttpServer metricsServer;
    /** Written under this object's monitor, read by metrics scrapes. */
    private volatile BrokerState state = BrokerState.NOT_RUNNING;
    private boolean closed;

    /** A server with the APIs implemented so far (ApiVersions, Metadata, CreateTopics, DeleteTopics, ...). */
    public CairnServer(BrokerConfig config) {
        this(config, List.of());
    }

    /** A server that also serves {@code extraHandlers} (tests). */
    CairnServer(BrokerConfig config, List<ApiHandler<?, ?>> extraHandlers) {
        this.config = config;
        this.extraHandlers = List.copyOf(extraHandlers);
        this.logPrefix = "[CairnServer id=" + config.nodeId() + "] ";
    }

    /**
     * Creates the log directories, starts the metadata node, binds the listeners and registers this broker with the
     * controller (waiting until it is unfenced); on failure everything started is stopped again.
     *
     * @throws IOException when the metadata node cannot start or the broker is not unfenced in time
     */
    public synchronized void start() throws InterruptedException, IOException {
        LOGGER.info("{}starting", logPrefix);
        state = BrokerState.STARTING;
        for (String unknown : config.unknownKeys()) {
            LOGGER.warn("The configuration '{}' was supplied but isn't a known config.", unknown);
        }
        if (!config.notActedOnKeys().isEmpty()) {
            LOGGER.info("{}These configurations are Kafka's but Cairn accepts them without acting on them: {}",
                    logPrefix, String.join(", ", config.notActedOnKeys()));
        }
        createLogDirs();
        metrics = config.metricsEnabled() ? BrokerMetrics.create() : BrokerMetrics.disabled();
        metadata = BrokerMetadata.startNode(config, metrics.controllerEvents());
        try {
            if (config.authorizer() != null) {
                aclAuthorizer = new StandardAclAuthorizer(config.authorizer().superUsers(),
                        config.authorizer().allowEveryoneIfNoAclFound());
                aclAuthorizer.load(metadata.node().subscribe(aclAuthorizer));
            }
            clientQuotas = ClientQuotas.subscribe(metadata.node(), config, Time.SYSTEM);
            Map<String, String> topicDefaults = LogConfigs.merge(TopicConfigDefaults.defaults(),
                    config.topicDefaults());
            LogConfig defaultLogConfig = LogConfigs.toLogConfig(topicDefaults);
            scheduler = new Scheduler(config.backgroundThreads());
            startLogManagers(defaultLogConfig);
            replicaManager = new ReplicaManager(config.nodeId(), logManagers, topicDefaults, Time.SYSTEM,
                    config.replicaLagTimeMaxMs(), metadata::brokerEpoch);
            replicaManager.useScheduler(scheduler);
            metadata.reportAppliedOffset(replicaManager::appliedMetadataOffset);
            replicaManager.useReplicaFetchers(config.replicaFetch().toFetcherConfig(
                    defaultLogConfig.maxMessageBytes()), config.replicaFetch().interBrokerListenerName(),
                    interBrokerTls());
            if (config.rackAwareReplicaSelector()) {
                replicaManager.useReplicaSelector(new RackAwareReplicaSelector());
            }
            purgatory = new PartitionPurgatory(replicaManager);
            fetchService = new FetchService(metadata.node(), replicaManager, new FetchSessionCache(
                    config.fetchSessionCacheSlots(), FetchSessionCache.DEFAULT_EVICTION_MS, Time.SYSTEM),
                    config.fetchMaxBytes(), purgatory, metrics.topics());
            groupCoordinator = new GroupCoordinator(replicaManager, metadata.node(), config.groupConfig(),
                    config.consumerGroupConfig(), config.shareGroupConfig(), config.groupCoordinatorRuntime(),
                    config.internalTopics().offsetsPartitions(), Time.SYSTEM, purgatory);
            groupCoordinator.start();
            requestHandlers = new RequestHandlerPool(config.numIoThreads());
            fetchService.useRequestHandlers(requestHandlers);
            threadPools = dynamicThreadPools();
            metadata.node().subscribe(threadPools);
            logCleaner = new DynamicLogCleaner(config.nodeId(), config.cleaner(),
                    () -> logManagers.stream().map(LogManager::cleaner).toList());
            metadata.node().subscribe(logCleaner);
            // The socket server binds and closes them; it is made below, before the kept listeners are bound.
            listeners = new DynamicListeners(config, () -> socketServer);
            networkThreads = new DynamicNetworkThreads(config, () -> socketServer);
            connectionLimits = new DynamicConnectionLimits(config.nodeId(), config.originals(),
                    config.kafkaListeners().stream().map(Endpoint::listenerName).toList(),
                    limits -> socketServer.connectionQuotas().update(limits));
            ProducerIdManager producerIds = startTransactionAndShareCoordinators();
            saslSettings = dynamicSaslSettings();
            handlers = handlers(config, metadata.node(), replicaManager, fetchService, purgatory, groupCoordinator,
                    metrics, new TransactionServices(transactionVerifier, requestHandlers, transactionCoordinator,
                            producerIds), shareCoordinator, shareFetchService(),
                    BrokerReconfigurable.all(List.<BrokerReconfigurable>of(threadPools, networkThreads,
                            connectionLimits, listeners, logCleaner, this::validateSslStores, saslSettings)),
                    clientQuotas, extraHandlers);
            registerMetrics();
            MetadataNode node = metadata.node();
            socketServer = new SocketServer(config, this::registryFor, requestHandlers, metrics,
                    scramCredentials(node, subscribeDelegationTokens(node)));
            metadata.node().subscribe(connectionLimits);
            clientQuotas.useIpConnectionRates(socketServer.connectionQuotas()::updateIpRates);
            subscribeSslStoresAndSasl();
            if (config.metricsEnabled()) {
                metricsServer = startMetrics(config, metrics);
            }
            registerAndListen();
            // The pool sizes kept in metadata (dynamic num.io.threads, background.threads...) from the caught-up image.
            threadPools.apply(metadata.node().currentImage());
            connectionLimits.apply(metadata.node().currentImage());
            logCleaner.apply(metadata.node().currentImage());
            listeners.apply(metadata.node().currentImage());
            metadata.node().subscribe(listeners);
            networkThreads.apply(metadata.node().currentImage());
            metadata.node().subscribe(networkThreads);
            replicaManager.startHighWatermarkCheckpoints(config.replicaHighWatermarkCheckpointIntervalMs());
            replicaManager.startIsrExpiration();
            state = BrokerState.RUNNING;
        } catch (InterruptedException | IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * The SASL listeners' settings as dynamic configs change them, and the inter-broker clients' credentials. It is
     * given the credentials' holder itself: the metadata thread applying a change must not wait for this server's
     * monitor, which {@link #start} holds while it waits for that thread.
     */
    private DynamicSaslSettings dynamicSaslSettings() {
        return new DynamicSaslSettings(config.nodeId(), config.originals(), () -> socketServer,
                config.replicaFetch().interBrokerListenerName(), interBrokerSecurity()::useSasl);
    }

    /** The pools dynamic configs resize (Kafka's {@code DynamicThreadPool}), at their server.properties sizes. */
    private DynamicThreadPools dynamicThreadPools() {
        return new DynamicThreadPools(config.nodeId(), Map.of(
                DynamicThreadPools.NUM_IO_THREADS, config.numIoThreads(),
                DynamicThreadPools.NUM_REPLICA_FETCHERS, config.replicaFetch().numFetchers(),
                DynamicThreadPools.BACKGROUND_THREADS, config.backgroundThreads(),
                DynamicThreadPools.NUM_RECOVERY_THREADS_PER_DATA_DIR, config.numRecoveryThreadsPerDataDir()), Map.of(
                DynamicThreadPools.NUM_IO_THREADS, requestHandlers::resize,
                DynamicThreadPools.NUM_REPLICA_FETCHERS, replicaManager::resizeFetcherThreadPool,
                DynamicThreadPools.BACKGROUND_THREADS, scheduler::resize,
                DynamicThreadPools.NUM_RECOVERY_THREADS_PER_DATA_DIR,
                threads -> logManagers.forEach(m -> m.resizeRecoveryThreadPool(threads))));
    }

    /**
     * Registers with the controller, opens the partitions and binds the listeners. Like Kafka, answer clients only
     * once the controller has unfenced this broker, so the first Metadata already lists it; an advertised port 0 is
     * only known once bound, so then the listeners come first. Partitions are opened (and stray logs deleted) only
     * once the controller answered isCaughtUp: this node's image has applied the broker's own registration record, so
     * it is not stale. The key stores and SASL settings changed by dynamic configs are applied from that caught-up
     * image before clients connect (with port 0, right after registration).
     */
    private void registerAndListen() throws InterruptedException, IOException {
        if (config.advertisedListeners().stream().allMatch(endpoint -> endpoint.port() != 0)) {
            metadata.register(socketServer::boundPort, previousBrokerEpoch(), REGISTRATION_TIMEOUT_MS);
            sslStores.apply(metadata.node().currentImage());
            saslSettings.apply(metadata.node().currentImage());
            replicaManager.start(metadata.node());
            socketServer.start();
        } else {
            socketServer.start();
            metadata.register(socketServer::boundPort, previousBrokerEpoch(), REGISTRATION_TIMEOUT_MS);
            sslStores.apply(metadata.node().currentImage());
            saslSettings.apply(metadata.node().currentImage());
            replicaManager.start(metadata.node());
        }
    }

    /**
     * The inter-broker clients of transactions: the marker channel (for the transaction coordinator) and the produce
     * path's verifier, which verifies with {@code transaction.partition.verification.enable} and adds partitions for
     * transaction.version 2 producers in any case.
     */
    private void startTransactionChannels() {
        MetadataNode node = metadata.node();
        String listener = config.replicaFetch().interBrokerListenerName();
        markerChannel = TransactionMarkerChannel.create(config.nodeId(), node::currentImage, Time.SYSTEM,
                new TransactionMarkerChannel.Config(listener, MARKER_RETRY_BACKOFF_MS, MAX_QUEUED_MARKERS,
                        (int) MarkerAppender.DEFAULT_TIMEOUT_MS + INTER_BROKER_SOCKET_MARGIN_MS), interBrokerTls());
        markerChannel.start();
        transactionVerifier = TransactionVerifier.create(config.nodeId(), node::currentImage, listener,
                (int) MarkerAppender.DEFAULT_TIMEOUT_MS, config.transactionPartitionVerificationEnable(),
                interBrokerTls());
        transactionVerifier.start();
    }

    /**
     * How the inter-broker clients (followers, marker sender, verifier) secure their connections
     * ({@link InterBrokerClientSecurity}; built once, a bad store fails startup naming its key); its TLS engines take
     * the inter-broker listener's reloaded stores through {@link DynamicSslStores}.
     */
    private synchronized InterBrokerClientSecurity interBrokerSecurity() {
        if (interBrokerSecurity == null) {
            interBrokerSecurity = InterBrokerClientSecurity.create(config.interBrokerSsl(), config.interBrokerSasl());
        }
        return interBrokerSecurity;
    }

    private ClientTls interBrokerTls() {
        return interBrokerSecurity().clientTls();
    }

    /** The SSL listeners' stores and settings and the SASL listeners' settings follow dynamic configs from now on. */
    private void subscribeSslStoresAndSasl() {
        QuorumStores quorum = metadata.quorumStores();
        sslStores = new DynamicSslStores(config.nodeId(), config.originals(), reloadableSslListeners(),
                interBrokerSecurity().reloadable(), quorum == null ? Set.of() : Set.of(quorum.listenerName()));
        metadata.node().subscribe(sslStores);
        metadata.node().subscribe(saslSettings);
    }

    /**
     * The engines of the SSL listeners whose stores dynamic configs replace: the socket server's, and the SSL or
     * SASL_SSL controller listener's, whose replacements the metadata quorum's TLS (gRPC's, or its quorum front's)
     * takes for its new connections.
     */
    private Map<String, SslFactory> reloadableSslListeners() {
        Map<String, SslFactory> factories = new LinkedHashMap<>(socketServer.sslFactories());
        QuorumStores quorum = metadata.quorumStores();
        if (quorum != null) {
            factories.put(quorum.listenerName(), new SslFactory(quorum.engines(), false, quorum::replace));
        }
        return factories;
    }

    /** The checks of a change of the SSL listeners' stores (none before the socket server has loaded them). */
    private Optional<String> validateSslStores(String resourceName, Map<String, String> props, MetadataImage image) {
        DynamicSslStores stores = sslStores;
        return stores == null ? Optional.empty() : stores.validate(resourceName, props, image);
    }

    /** The delegation tokens' SCRAM credentials, following the metadata image from now on. */
    private DelegationTokenCache subscribeDelegationTokens(MetadataNode node) {
        delegationTokens = new DelegationTokenCache(MetadataConfig.delegationTokens(config.originals()));
        delegationTokens.load(node.subscribe(delegationTokens));
        return delegationTokens;
    }

    /** What SASL/SCRAM listeners check: users' credentials in the current image, and delegation tokens. */
    private static ScramCredentials scramCredentials(MetadataNode node, DelegationTokenCache tokens) {
        return new ScramCredentials() {
            @Override
            public ScramCredential credential(String user, ScramMechanism mechanism) {
                return scramCredential(node.currentImage(), user, mechanism);
            }

            @Override
            public TokenCredential tokenCredential(String tokenId, ScramMechanism mechanism) {
                return tokens.credential(tokenId, mechanism);
            }
        };
    }

    /** The SCRAM credential of {@code user} in {@code image}, or null: what SASL/SCRAM listeners check. */
    private static ScramCredential scramCredential(MetadataImage image, String user, ScramMechanism mechanism) {
        Map<Byte, ScramCredential> forUser = image.scram().get(user);
        return forUser == null ? null : forUser.get(mechanism.type());
    }

    /** The marker channel the transaction coordinator writes markers with. */
    public synchronized TransactionMarkerSender transactionMarkers() {
        return markerChannel;
    }

    /**
     * The transaction services the handlers use: the produce path's verifier and where it
     * continues, the coordinator and the broker's one producer id manager.
     */
    private record TransactionServices(TransactionVerifier verifier, Executor requestHandlers,
                                       TransactionCoordinator coordinator, ProducerIdManager producerIds) {
    }

    /** The meters that read the server's components (the request and topic meters are recorded by them). */
    private void registerMetrics() {
        metrics.socketServer().requestHandlerIdle(requestHandlers::busyNanos, requestHandlers::threadCount);
        ReplicationMetrics.register(metrics, replicaManager, metadata.node(), () -> state);
        metrics.addCollector(new PartitionLogCollector(replicaManager));
        metrics.addCollector(new ControllerMutationQuotaCollector(clientQuotas.controllerMutation()));
        metrics.addCollector(new ConsumerLagCollector(groupCoordinator, replicaManager));
        metrics.addCollector(new GroupMetadataCollector(groupCoordinator));
        GroupCoordinatorMetrics.register(metrics, groupCoordinator);
        TransactionCoordinatorMetrics.register(metrics, transactionCoordinator, markerChannel);
        LogCleanerMetrics.register(metrics, logManagers);
        FetcherLagMetrics.register(metrics, replicaManager);
        // Cairn has one purgatory for every kind of delayed operation (produce, fetch, coordinator writes).
        Gauge.builder("kafka.server.delayedoperationpurgatory.numdelayedoperations", purgatory,
                PartitionPurgatory::pendingCount).description("Delayed operations waiting in the purgatory")
                .tag("delayedOperation", "All").strongReference(true)
                .register(metrics.registry());
        Gauge.builder("kafka.server.fetchsessioncache.numincrementalfetchsessions", fetchService.sessions(),
                FetchSessionCache::size).description("Cached incremental fetch sessions").strongReference(true)
                .register(metrics.registry());
    }

    /** Closes every log directory (with the clean-shutdown marker), then the failure handler's thread. */
    private void closeLogs() {
        long brokerEpoch = metadata == null ? -1L : metadata.brokerEpoch();
        for (LogManager manager : logManagers) {
            try {
                manager.close(brokerEpoch);
            } catch (RuntimeException e) {
                LOGGER.error("{}Cannot close the logs of {}", logPrefix, manager.logDir(), e);
            }
        }
        if (logDirFailures != null) {
            logDirFailures.close();
        }
    }

    /**
     * Loads every log directory, each with its {@code LogManager}; a failed write to one of them, or to the metadata
     * log, halts the broker ({@link LogDirFailureHandler}).
     */
    private void startLogManagers(LogConfig defaultLogConfig) {
        // a dynamic num.recovery.threads.per.data.dir the metadata node holds already loads the logs
        int recoveryThreads = DynamicThreadPools.effectiveSize(metadata.node().currentImage(), config.nodeId(),
                DynamicThreadPools.NUM_RECOVERY_THREADS_PER_DATA_DIR, config.numRecoveryThreadsPerDataDir());
        LogDirFailureHandler handler = new LogDirFailureHandler(config.logDirs());
        logDirFailures = handler;
        Path metadataLogDir = metadata.metadataLogDir();
        metadata.node().logFailure().thenAccept(cause -> handler.onMetadataLogFailure(metadataLogDir, cause));
        for (Path dir : config.logDirs()) {
            logManagers.add(LogManager.start(dir, defaultLogConfig, Time.SYSTEM,
                    logManagerOptions(config).withFlushListener(metrics.logFlush()).withFailureListener(handler),
                    scheduler, Math.max(1, recoveryThreads)));
        }
    }

    /** The log managers' intervals and cleaner settings from server.properties, the rest Cairn's defaults. */
    private static LogManager.Options logManagerOptions(BrokerConfig config) {
        CleanerSettings cleaner = config.cleaner();
        return LogManager.Options.defaults().withIntervals(config.logRetentionCheckIntervalMs(),
                config.logFlushSchedulerIntervalMs()).withCleaner(cleaner.threadsToRun(),
                cleaner.scheduledBackoffMs(), cleaner.ioMaxBytesPerSecond())
                .withCleanerBuffers(cleaner.bufferSizes())
                .withProducerIdExpirationCheckMs(config.producerIdExpirationCheckIntervalMs());
    }

    /**
     * Starts the transaction channels and the transaction coordinator (with the producer id manager it draws from,
     * which it returns) and the share coordinator, each following the leadership of its internal topic.
     */
    private ProducerIdManager startTransactionAndShareCoordinators() {
        startTransactionChannels();
        ProducerIdManager producerIds = new ProducerIdManager(metadata.node(), config.nodeId(), Time.SYSTEM);
        transactionCoordinator = new TransactionCoordinator(replicaManager, metadata.node(), purgatory,
                config.transactionConfig(), Time.SYSTEM, markerChannel, producerIds::generateProducerId);
        transactionCoordinator.start();
        shareCoordinator = new ShareCoordinator(replicaManager, metadata.node(), purgatory,
                config.shareCoordinatorConfig(), Time.SYSTEM);
        shareCoordinator.start();
        // Share groups initialize their share-partitions' state at the share coordinator (locally or over the
        // inter-broker client), creating __share_group_state first if needed, as FindCoordinator does.
        BrokerConfig.InternalTopicDefaults internal = config.internalTopics();
        AutoTopicCreation shareTopic = new AutoTopicCreation(false, internal.offsetsPartitions(),
                internal.offsetsReplication(), internal.transactionPartitions(), internal.transactionReplication(),
                config.transactionConfig().logMinIsr(), config.transactionConfig().logSegmentBytes(),
                config.shareCoordinatorConfig());
        ShareStateInitialization initialization = new ShareStateInitialization(metadata.node(), shareCoordinator,
                config.nodeId(), config.replicaFetch().interBrokerListenerName(), interBrokerTls(), () -> {
                    CreateTopicsRequestData creation = new CreateTopicsRequestData().setTimeoutMs(30_000);
                    creation.topics().add(shareTopic.creatableTopic(ShareCoordinator.TOPIC));
                    metadata.node().createTopics(creation);
                }, config.groupCoordinatorRuntime().writeTimeoutMs() * 6);
        groupCoordinator.useShareStateInitializer(initialization);
        return producerIds;
    }

    /**
     * The share-partition leader (KIP-932): the share-partitions this broker leads, persisted through the share
     * coordinator, and the ShareFetch/ShareAcknowledge service over them, served while share groups are enabled.
     */
    private ShareFetchService shareFetchService() {
        MetadataNode node = metadata.node();
        CoordinatorStatePersister persister = new CoordinatorStatePersister(config.nodeId(), node::currentImage,
                config.replicaFetch().interBrokerListenerName(), shareCoordinator,
                (int) MarkerAppender.DEFAULT_TIMEOUT_MS + INTER_BROKER_SOCKET_MARGIN_MS, interBrokerTls());
        shareLockTimer = new SystemTimer("share-record-locks");
        sharePartitions = new SharePartitionManager(replicaManager, purgatory, persister, shareLockTimer,
                config.sharePartitionConfig(), group -> config.groupConfigs().settings(
                        node.currentImage().configs(new ConfigResource(ConfigResource.GROUP, group))));
        return new ShareFetchService(sharePartitions,
                new ShareSessionCache(config.sharePartitionConfig().maxShareSessions()), node::currentImage,
                new ShareGroupsGate(node::currentImage, config.groupShareEnable())::enabled);
    }

    /** The share coordinator's five state APIs (KIP-932), inter-broker: CLUSTER_ACTION on the cluster. */
    private static List<ApiHandler<?, ?>> shareStateHandlers(ShareCoordinator shares) {
        return List.of(
                ClusterAuthorizedHandler.requiring(AclOperation.CLUSTER_ACTION,
                        new InitializeShareGroupStateHandler(shares)),
                ClusterAuthorizedHandler.requiring(AclOperation.CLUSTER_ACTION, new ReadShareGroupStateHandler(shares)),
                ClusterAuthorizedHandler.requiring(AclOperation.CLUSTER_ACTION,
                        new WriteShareGroupStateHandler(shares)),
                ClusterAuthorizedHandler.requiring(AclOperation.CLUSTER_ACTION,
                        new DeleteShareGroupStateHandler(shares)),
                ClusterAuthorizedHandler.requiring(AclOperation.CLUSTER_ACTION,
                        new ReadShareGroupStateSummaryHandler(shares)));
    }

    /** The APIs Cairn serves (ApiVersions is added by the registry itself). */
    private static List<ApiHandler<?, ?>> handlers(BrokerConfig config, MetadataNode node,
                                                   ReplicaManager replicaManager, FetchService fetchService,
                                                   PartitionPurgatory purgatory, GroupCoordinator groups,
                                                   BrokerMetrics metrics, TransactionServices transactions,
                                                   ShareCoordinator shares, ShareFetchService shareFetch,
                                                   BrokerReconfigurable reconfigurables, RequestQuotas quotas,
                                                   List<ApiHandler<?, ?>> extra) {
        BrokerConfig.InternalTopicDefaults internal = config.internalTopics();
        AutoTopicCreation autoCreation = new AutoTopicCreation(config.autoCreateTopicsEnable(),
                internal.offsetsPartitions(), internal.offsetsReplication(), internal.transactionPartitions(),
                internal.transactionReplication(), config.transactionConfig().logMinIsr(),
                config.transactionConfig().logSegmentBytes(), config.shareCoordinatorConfig());
        List<ApiHandler<?, ?>> handlers = new ArrayList<>();
        handlers.add(new MetadataHandler(node, autoCreation));
        handlers.add(new CreateTopicsHandler(node));
        handlers.add(new DeleteTopicsHandler(node));
        handlers.add(new CreatePartitionsHandler(node));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER, new ElectLeadersHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER, new UpdateFeaturesHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER, new UnregisterBrokerHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER,
                new AlterPartitionReassignmentsHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.DESCRIBE,
                new ListPartitionReassignmentsHandler(node)));
        handlers.add(new DescribeTopicPartitionsHandler(node));
        handlers.add(new DescribeClusterHandler(node));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.DESCRIBE, new DescribeQuorumHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER, new AddRaftVoterHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER, new RemoveRaftVoterHandler(node)));
        handlers.add(new CreateAclsHandler(node));
        handlers.add(new DescribeAclsHandler());
        handlers.add(new DeleteAclsHandler(node));
        handlers.add(new SaslHandshakeHandler());
        handlers.add(new SaslAuthenticateHandler());
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER,
                new AlterUserScramCredentialsHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.DESCRIBE,
                new DescribeUserScramCredentialsHandler(node)));
        handlers.add(new CreateDelegationTokenHandler(node));
        handlers.add(new RenewDelegationTokenHandler(node));
        handlers.add(new ExpireDelegationTokenHandler(node));
        handlers.add(new DescribeDelegationTokenHandler(node, MetadataConfig.delegationTokens(config.originals())));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER_CONFIGS,
                new AlterClientQuotasHandler(node)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.DESCRIBE_CONFIGS,
                new DescribeClientQuotasHandler(node)));
        handlers.add(new ProduceHandler(new ProduceService(replicaManager, node, purgatory, metrics.topics(),
                transactions.verifier(), transactions.requestHandlers())));
        handlers.add(new DescribeConfigsHandler(node, config.nodeId(), config.originals(),
                ConfigTable.get().cairnDefaults(), config.groupConfigs()));
        handlers.add(new IncrementalAlterConfigsHandler(node, config.nodeId(), reconfigurables,
                config.groupConfigs()));
        handlers.add(new AlterConfigsHandler(node, config.nodeId(), reconfigurables, config.groupConfigs()));
        handlers.add(new FetchHandler(fetchService, quotas));
        MarkerAppender markers = new MarkerAppender(replicaManager, purgatory, Time.SYSTEM,
                MarkerAppender.DEFAULT_TIMEOUT_MS);
        // __consumer_offsets markers go through the group coordinator, which applies its transactional offsets.
        handlers.add(new WriteTxnMarkersHandler(markers, groups::completeTransaction));
        handlers.add(new DescribeProducersHandler(replicaManager, node));
        handlers.add(new DeleteRecordsHandler(new DeleteRecordsService(replicaManager, node, purgatory)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.DESCRIBE,
                new DescribeLogDirsHandler(replicaManager)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.ALTER,
                new AlterReplicaLogDirsHandler(replicaManager)));
        handlers.add(ClusterAuthorizedHandler.requiring(AclOperation.DESCRIBE_CONFIGS,
                new ListConfigResourcesHandler(node)));
        handlers.add(new ListOffsetsHandler(replicaManager));
        handlers.add(new OffsetForLeaderEpochHandler(replicaManager));
        TransactionCoordinator txn = transactions.coordinator();
        handlers.add(new InitProducerIdHandler(transactions.producerIds(), txn));
        handlers.add(new FindCoordinatorHandler(node, groups, txn, shares, autoCreation));
        handlers.addAll(shareStateHandlers(shares));
        handlers.add(new ShareFetchHandler(shareFetch));
        handlers.add(new ShareAcknowledgeHandler(shareFetch));
        handlers.add(new AddPartitionsToTxnHandler(txn, node));
        handlers.add(new AddOffsetsToTxnHandler(txn, groups));
        handlers.add(new EndTxnHandler(txn));
        handlers.add(new DescribeTransactionsHandler(txn));
        handlers.add(new ListTransactionsHandler(txn));
        handlers.add(GroupHandlers.txnOffsetCommit(groups, node, transactions.verifier()));
        handlers.add(GroupHandlers.joinGroup(groups));
        handlers.add(GroupHandlers.syncGroup(groups));
        handlers.add(GroupHandlers.heartbeat(groups));
        handlers.add(GroupHandlers.leaveGroup(groups));
        handlers.add(GroupHandlers.offsetCommit(groups, node));
        handlers.add(new OffsetFetchHandler(groups));
        handlers.add(GroupHandlers.offsetDelete(groups));
        handlers.add(new ListGroupsHandler(groups));
        handlers.add(new DescribeGroupsHandler(groups));
        handlers.add(new DeleteGroupsHandler(groups));
        handlers.add(new ConsumerGroupHeartbeatHandler(groups, node));
        handlers.add(new ConsumerGroupDescribeHandler(groups, node));
        // Share groups (KIP-932): every share group API handler answers UNSUPPORTED_VERSION while this gate is shut.
        ShareGroupsGate shareGroups = new ShareGroupsGate(node::currentImage, config.groupShareEnable());
        handlers.add(new ShareGroupHeartbeatHandler(groups, shareGroups));
        handlers.add(new ShareGroupDescribeHandler(groups, shareGroups));
        ShareOffsetsCoordinator shareOffsets = new ShareOffsetsCoordinator(groups);
        handlers.add(new DescribeShareGroupOffsetsHandler(shareOffsets, shareGroups));
        handlers.add(new AlterShareGroupOffsetsHandler(shareOffsets, shareGroups, node::currentImage));
        handlers.add(new DeleteShareGroupOffsetsHandler(shareOffsets, shareGroups));
        handlers.addAll(extra);
        return List.copyOf(handlers);
    }

    /** Closes the share-partition leader (its locks' timer, its persister), then the share coordinator. */
    private void closeShares() {
        if (sharePartitions != null) {
            sharePartitions.close();
        }
        if (shareLockTimer != null) {
            shareLockTimer.close();
        }
        if (shareCoordinator != null) {
            shareCoordinator.close();
        }
    }

    /**
     * The broker epoch of the last clean shutdown when every log dir recorded the same one (Kafka's
     * {@code readBrokerEpochFromCleanShutdownFiles}), else -1: an unclean shutdown of any dir counts for the broker.
     */
    private long previousBrokerEpoch() {
        long epoch = logManagers.isEmpty() ? -1L : logManagers.get(0).previousBrokerEpoch();
        for (LogManager manager : logManagers) {
            if (manager.previousBrokerEpoch() != epoch) {
                return -1L;
            }
        }
        return epoch;
    }

    private HandlerRegistry registryFor(Endpoint endpoint) {
        MetadataNode node = metadata.node();
        return HandlerRegistry.forListener(handlers, config.isControllerListener(endpoint.listenerName()),
                node::currentImage).withAuthorizer(aclAuthorizer == null ? Authorizer.NONE : aclAuthorizer)
                .withQuotas(clientQuotas == null ? RequestQuotas.NONE : clientQuotas);
    }

    private void createLogDirs() {
        for (Path dir : config.logDirs()) {
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot create log directory " + dir.toAbsolutePath(), e);
            }
            LOGGER.info("{}Log directory {}", logPrefix, dir.toAbsolutePath().normalize());
        }
    }

    /** The port a listener is bound to; useful when the config asked for port 0. */
    public synchronized int boundPort(String listenerName) {
        return socketServer.boundPort(listenerName);
    }

    /**
     * Starts the {@code /metrics} endpoint. Kafka has no such port, so a user who did not set {@code metrics.port}
     * never asked for its default: when that default is taken (several nodes on one host from Kafka's own files),
     * the broker says so in one WARN line and serves everything else. An explicit {@code metrics.port} that cannot
     * be bound stays an error.
     */
    private static MetricsHttpServer startMetrics(BrokerConfig config, BrokerMetrics metrics) throws IOException {
        try {
            return MetricsHttpServer.start(config.metricsHost(), config.metricsPort(), metrics);
        } catch (IOException e) {
            if (config.metricsPortSet()) {
                throw e;
            }
            LOGGER.warn("{}; serving without /metrics. Set {} (0 picks a free port) to serve it", e.getMessage(),
                    BrokerConfig.METRICS_PORT);
            return null;
        }
    }

    /** The port of the metrics endpoint; -1 when {@code metrics.enabled=false}. */
    public synchronized int metricsPort() {
        return metricsServer == null ? -1 : metricsServer.port();
    }

    public BrokerConfig config() {
        return config;
    }

    /** The partitions this node hosts (tests: to hold a real partition's lock). */
    synchronized ReplicaManager replicaManager() {
        return replicaManager;
    }

    /** Stops the threads of the handlers that own some (Produce's acks timer); no request reaches them now. */
    private void closeHandlers() {
        for (ApiHandler<?, ?> handler : handlers) {
            if (handler instanceof AutoCloseable) {
                try {
                    ((AutoCloseable) handler).close();
                } catch (Exception e) {
                    LOGGER.error("{}Cannot close {}", logPrefix, handler.getClass().getSimpleName(), e);
                }
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        LOGGER.info("{}shutting down", logPrefix);
        if (metadata != null) {
            // As Kafka's BrokerServer.shutdown: leaderships move away while this broker still serves clients and
            // followers, so nothing is led by a broker that no longer answers.
            state = BrokerState.PENDING_CONTROLLED_SHUTDOWN;
            metadata.controlledShutdown();
        }
        state = BrokerState.SHUTTING_DOWN;
        if (metricsServer != null) {
            metricsServer.close();
        }
        if (socketServer != null) {
            socketServer.close();
        }
        // The transaction clients first: their callbacks continue on the request handlers.
        if (markerChannel != null) {
            markerChannel.close();
        }
        if (transactionVerifier != null) {
            transactionVerifier.close();
        }
        if (aclAuthorizer != null) {
            metadata.node().unsubscribe(aclAuthorizer);
        }
        if (clientQuotas != null) {
            metadata.node().unsubscribe(clientQuotas);
        }
        if (delegationTokens != null) {
            metadata.node().unsubscribe(delegationTokens);
        }
        if (connectionLimits != null) {
            metadata.node().unsubscribe(connectionLimits);
        }
        if (listeners != null) {
            metadata.node().unsubscribe(listeners);
            listeners.close();
        }
        if (networkThreads != null) {
            metadata.node().unsubscribe(networkThreads);
            networkThreads.close();
        }
        if (sslStores != null) {
            metadata.node().unsubscribe(sslStores);
        }
        if (saslSettings != null) {
            metadata.node().unsubscribe(saslSettings);
        }
        if (logCleaner != null) {
            metadata.node().unsubscribe(logCleaner);
        }
        if (threadPools != null) {
            metadata.node().unsubscribe(threadPools);
            threadPools.close();
        }
        if (requestHandlers != null) {
            requestHandlers.close();
        }
        if (handlers != null) {
            closeHandlers();
        }
        if (transactionCoordinator != null) {
            transactionCoordinator.close();
        }
        closeShares();
        if (purgatory != null) {
            purgatory.close();
        }
        if (groupCoordinator != null) {
            groupCoordinator.close();
        }
        if (replicaManager != null) {
            replicaManager.close();
        }
        closeLogs();
        // The log managers and the replica manager have cancelled their tasks; nothing else schedules on it.
        if (scheduler != null) {
            scheduler.close();
        }
        if (metadata != null) {
            metadata.close();
        }
        if (metrics != null) {
            metrics.close();
        }
        LOGGER.info("{}shut down completed", logPrefix);
    }
}
