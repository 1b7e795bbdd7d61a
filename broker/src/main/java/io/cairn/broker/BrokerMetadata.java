package io.cairn.broker;

import io.cairn.broker.config.BrokerConfig;
import io.cairn.broker.config.ConfigException;
import io.cairn.broker.config.Endpoint;
import io.cairn.broker.config.SslSettings;
import io.cairn.broker.quorum.SaslQuorumFront;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.QuorumFront;
import io.cairn.metadata.controller.ControllerEventListener;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerHeartbeatResponseData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.ToIntFunction;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The broker's side of the metadata quorum (Kafka's {@code BrokerLifecycleManager}): starts the in-process
 * {@link MetadataNode}, registers this broker with its advertised listeners and rack, heartbeats so the controller
 * unfences it and keeps it unfenced, and on close asks for a controlled shutdown, fences itself and stops the node.
 *
 * <p>With the default {@code process.roles=broker,controller} and no {@code controller.quorum.voters}, the node is
 * the sole voter of its own quorum on a free loopback port: an empty metadata directory formats itself on the first
 * start (issue 4's rule) and keeps the topics across restarts.
 *
 * <p>Thread-safe: {@link #start} and {@link #close} are synchronized; heartbeats run on one scheduler thread.
 */
final class BrokerMetadata implements AutoCloseable {

    private static final Logger LOGGER = LogManager.getLogger(BrokerMetadata.class);
    private static final long REQUEST_TIMEOUT_MS = 10_000L;
    private static final long SHUTDOWN_WAIT_MS = 5_000L;
    /** How many free loopback ports a combined node alone tries for its quorum before it gives up. */
    private static final int QUORUM_PORT_ATTEMPTS = 3;
    /** How long the last heartbeat of a controlled shutdown, the one that fences this broker, may wait at least. */
    private static final long FENCE_WAIT_MS = 1_000L;

    private final BrokerConfig config;
    private final MetadataNode node;
    private final Uuid incarnationId;
    private final ScheduledExecutorService heartbeats;
    /** Written by registration (start and re-registration), read by the AlterPartition sender and heartbeats. */
    private volatile long brokerEpoch = -1L;
    private volatile boolean fenced = true;
    /**
     * Kafka's initial catch-up: true once a heartbeat answer said {@code isCaughtUp}, i.e. this node's image reached
     * the controller's record of this broker's registration; only then may the partitions be opened from it.
     */
    private volatile boolean caughtUp;
    private volatile BrokerRegistrationRequestData registration;
    /** The metadata offset the broker has acted on; unset (null) while nothing but the node's image applies it. */
    private volatile LongSupplier appliedOffset;
    /** The SSL or SASL_SSL controller listener's stores the quorum uses, replaceable live; null without TLS. */
    private final QuorumStores quorumStores;
    /** metadata.log.dir (else the first log dir), absolute. */
    private final Path metadataLogDir;
    private boolean closed;
    private boolean shutDown;

    private BrokerMetadata(BrokerConfig config, MetadataNode node, QuorumStores quorumStores, Path metadataLogDir) {
        this.config = config;
        this.node = node;
        this.metadataLogDir = metadataLogDir;
        this.quorumStores = quorumStores;
        UUID random = UUID.randomUUID();
        this.incarnationId = new Uuid(random.getMostSignificantBits(), random.getLeastSignificantBits());
        this.heartbeats = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "cairn-broker-heartbeat-" + config.nodeId());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Starts the metadata node of {@code config} (not yet registered: see {@link #register}); a controller's event
     * loop tells {@code controllerEvents} its times.
     */
    static BrokerMetadata startNode(BrokerConfig config, ControllerEventListener controllerEvents)
            throws IOException {
        SslSettings controllerSsl = config.controllerSsl();
        if (controllerSsl != null && !ControllerListenerTls.notActedOn(controllerSsl).isEmpty()) {
            LOGGER.warn("The SSL controller listener {} is served by the metadata quorum's gRPC TLS, which negotiates "
                    + "TLSv1.2 or TLSv1.3 with its default cipher suites and does not act on: {}",
                    controllerSsl.listenerName(), String.join(", ", ControllerListenerTls.notActedOn(controllerSsl)));
        }
        QuorumStores quorumStores = quorumStores(config);
        for (int attempt = 1; ; attempt++) {
            MetadataConfig metadataConfig = metadataConfig(config, controllerSsl == null ? null : quorumStores);
            LOGGER.info("Starting the metadata node (roles {}, voters {}, metadata dir {})", metadataConfig.roles(),
                    metadataConfig.voters(), metadataConfig.metadataLogDir().toAbsolutePath().normalize());
            try {
                return new BrokerMetadata(config, MetadataNode.start(metadataConfig, controllerEvents,
                        quorumFront(config, quorumStores)), quorumStores,
                        metadataConfig.metadataLogDir().toAbsolutePath().normalize());
            } catch (IOException e) {
                // The loopback port this node picked for a quorum of its own can be taken (by any socket, an
                // outgoing connection's included) before the Raft server binds it: pick another, a few times.
                if (attempt >= QUORUM_PORT_ATTEMPTS || !picksItsOwnQuorumPort(config) || !addressInUse(e)) {
                    throw e;
                }
                LOGGER.info("The loopback port picked for the metadata quorum was taken before it was bound ({}); "
                        + "picking another", e.getMessage());
            }
        }
    }

    /**
     * The stores of the controller listener when it maps to SSL (the quorum's gRPC TLS) or SASL_SSL (its quorum
     * front's TLS), loaded here so that a bad one fails startup naming its key; null without TLS.
     */
    static QuorumStores quorumStores(BrokerConfig config) {
        SslSettings ssl = config.controllerSsl() != null ? config.controllerSsl()
                : config.controllerSasl() != null ? config.controllerSasl().ssl() : null;
        return ssl == null ? null : QuorumStores.load(ssl);
    }

    /**
     * The quorum front of a SASL controller listener (with SASL_SSL, its TLS follows {@code quorumStores}), or null
     * when the listener is not SASL.
     */
    static QuorumFront quorumFront(BrokerConfig config, QuorumStores quorumStores) {
        if (config.controllerSasl() == null) {
            return null;
        }
        return new SaslQuorumFront(config.controllerSasl(), config.nodeId(),
                config.controllerSasl().ssl() == null ? null : quorumStores::engines);
    }

    /** Whether {@link #metadataConfig} picks a free loopback port for the quorum (a combined node alone). */
    private static boolean picksItsOwnQuorumPort(BrokerConfig config) {
        Map<String, String> props = config.originals();
        return isBlank(props.get(BrokerConfig.CONTROLLER_QUORUM_VOTERS))
                && isBlank(props.get(BrokerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS))
                && config.processRoles().contains(BrokerConfig.ProcessRole.CONTROLLER)
                && config.listeners().stream().noneMatch(endpoint ->
                        config.isControllerListener(endpoint.listenerName()) && endpoint.port() != 0);
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }

    private static boolean addressInUse(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException
                    || (t.getMessage() != null && t.getMessage().contains("Address already in use"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The metadata settings: Kafka's keys from the broker's properties, log.dirs as the broker resolved them, for
     * a combined node without {@code controller.quorum.voters} a quorum of this node alone on a free loopback port,
     * and the stores of an SSL controller listener (loaded here, so a bad one fails startup naming its key).
     */
    static MetadataConfig metadataConfig(BrokerConfig config) {
        SslSettings controllerSsl = config.controllerSsl();
        return metadataConfig(config, controllerSsl == null ? null : QuorumStores.load(controllerSsl));
    }

    /** {@link #metadataConfig(BrokerConfig)} with the controller listener's stores already loaded (null: none). */
    static MetadataConfig metadataConfig(BrokerConfig config, QuorumStores quorumStores) {
        Map<String, String> props = new HashMap<>(config.originals());
        props.put(BrokerConfig.NODE_ID, Integer.toString(config.nodeId()));
        props.put(BrokerConfig.LOG_DIRS, String.join(",", config.logDirs().stream().map(Object::toString).toList()));
        props.put(BrokerConfig.PROCESS_ROLES, String.join(",", config.processRoles().stream()
                .map(r -> r.name().toLowerCase(Locale.ROOT)).toList()));
        String voters = props.get(BrokerConfig.CONTROLLER_QUORUM_VOTERS);
        String bootstrap = props.get(BrokerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS);
        boolean controller = config.processRoles().contains(BrokerConfig.ProcessRole.CONTROLLER);
        if ((voters == null || voters.isBlank()) && (bootstrap == null || bootstrap.isBlank())) {
            if (!controller) {
                throw ConfigException.invalid(BrokerConfig.CONTROLLER_QUORUM_VOTERS, voters,
                        "a broker-only node needs the controllers in controller.quorum.voters");
            }
            // A combined node alone: the quorum is this node, at its controller listener when it has one.
            Endpoint listener = config.listeners().stream()
                    .filter(endpoint -> config.isControllerListener(endpoint.listenerName()) && endpoint.port() != 0)
                    .findFirst().orElse(null);
            String address = listener == null ? "127.0.0.1:" + freeLoopbackPort()
                    : (listener.wildcardHost() ? "localhost" : hostForVoters(listener.host())) + ":" + listener.port();
            props.put(BrokerConfig.CONTROLLER_QUORUM_VOTERS, config.nodeId() + "@" + address);
        }
        if (!controller && (voters == null || voters.isBlank())) {
            throw ConfigException.invalid(BrokerConfig.CONTROLLER_QUORUM_BOOTSTRAP_SERVERS, bootstrap,
                    "a broker-only Cairn node needs the controllers in controller.quorum.voters (it follows the Raft "
                    + "quorum, whose voters it must know by id); controller.quorum.bootstrap.servers alone serves "
                    + "controllers formatted with --standalone or --initial-controllers");
        }
        MetadataConfig metadata;
        try {
            metadata = MetadataConfig.from(props);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
        return quorumStores == null ? metadata : metadata.withTls(quorumStores.tls());
    }

    private static String hostForVoters(String host) {
        return host.indexOf(':') >= 0 ? "[" + host + "]" : host;
    }

    private static int freeLoopbackPort() {
        try (ServerSocket socket = new ServerSocket()) {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("No free loopback port for the metadata quorum", e);
        }
    }

    /** Where the metadata log lives: {@code metadata.log.dir}, else the first log dir; absolute. */
    Path metadataLogDir() {
        return metadataLogDir;
    }

    MetadataNode node() {
        return node;
    }

    /**
     * The SSL or SASL_SSL controller listener's stores the quorum's TLS (gRPC's or the quorum front's) uses,
     * replaceable live, or null without TLS.
     */
    QuorumStores quorumStores() {
        return quorumStores;
    }

    /** The epoch of this broker's current registration, -1 before it registered. */
    long brokerEpoch() {
        return brokerEpoch;
    }

    /** True once the controller has unfenced this broker (and it has not been fenced since). */
    boolean unfenced() {
        return !fenced;
    }

    /**
     * Registers this broker with the advertised listeners (ports resolved by {@code boundPort} when configured as 0)
     * and the broker epoch its last clean shutdown recorded ({@code previousBrokerEpoch}, -1 after an unclean one:
     * the controller then takes it out of every ELR, KIP-966), and heartbeats until the controller answers that this
     * node's metadata has caught up with its registration ({@code isCaughtUp}, Kafka's initial catch-up) and unfences
     * it; then keeps heartbeating every broker.heartbeat.interval.ms. On return the node's image holds every record
     * committed before the registration, so the partitions may be opened (and stray logs deleted) from it.
     *
     * @throws IOException when the broker is not registered and unfenced within {@code timeoutMs}
     */
    synchronized void register(ToIntFunction<String> boundPortOfListener, long previousBrokerEpoch, long timeoutMs)
            throws IOException, InterruptedException {
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        for (Endpoint endpoint : config.advertisedListeners()) {
            int port = endpoint.port();
            if (port == 0) {
                port = boundPortOfListener.applyAsInt(endpoint.listenerName());
            }
            listeners.add(new BrokerRegistrationRequestData.Listener().setName(endpoint.listenerName())
                    .setHost(advertisedHost(endpoint)).setPort(port)
                    .setSecurityProtocol((short) endpoint.securityProtocol().ordinal()));
        }
        BrokerRegistrationRequestData request = new BrokerRegistrationRequestData().setBrokerId(config.nodeId())
                .setClusterId(node.clusterId()).setIncarnationId(incarnationId).setListeners(listeners)
                .setRack(config.brokerRack()).setPreviousBrokerEpoch(previousBrokerEpoch);
        registration = request;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        awaitController(deadline);
        registerUntil(request, deadline);
        while (fenced || !caughtUp) {
            BrokerHeartbeatResponseData response = heartbeat(false, false);
            if (response != null && rejectedRegistration(response.errorCode())) {
                // A registration retried after a routing timeout may have been applied twice: the epoch we hold is
                // then stale, and only a new registration gives the current one.
                LOGGER.info("Heartbeat of broker {} answered {}; registering again", config.nodeId(),
                        Errors.forCode(response.errorCode()));
                registerUntil(request, deadline);
                continue;
            }
            if (fenced || !caughtUp) {
                checkDeadline(deadline, "caught up and unfenced by the controller (last heartbeat: "
                        + (response == null ? "no answer" : response) + ")");
                TimeUnit.MILLISECONDS.sleep(50);
            }
        }
        LOGGER.info("Broker {} registered with epoch {}, caught up at metadata offset {} and unfenced (cluster {})",
                config.nodeId(), brokerEpoch, currentMetadataOffset(), node.clusterId());
        long interval = config.brokerHeartbeatIntervalMs();
        heartbeats.scheduleWithFixedDelay(this::scheduledHeartbeat, interval, interval, TimeUnit.MILLISECONDS);
    }

    /**
     * Waits until an active controller is known (on a sole voter: this node, once elected), so the registration
     * goes straight to it rather than through a routing retry that could apply it twice.
     */
    private void awaitController(long deadline) throws InterruptedException {
        while (System.nanoTime() - deadline < 0) {
            int active = node.activeControllerId();
            if (node.isActiveController() || (active >= 0 && active != node.nodeId())) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }

    private void registerUntil(BrokerRegistrationRequestData request, long deadline)
            throws IOException, InterruptedException {
        while (true) {
            BrokerRegistrationResponseData response = await(node.registerBroker(request));
            if (response != null && response.errorCode() == Errors.NONE.code()) {
                brokerEpoch = response.brokerEpoch();
                fenced = true;
                return;
            }
            String why = response == null ? "no answer" : Errors.forCode(response.errorCode()).name();
            if (response != null && response.errorCode() == Errors.INCONSISTENT_CLUSTER_ID.code()) {
                throw new IOException("The controller's cluster id differs from " + node.clusterId());
            }
            checkDeadline(deadline, "registered (" + why + ")");
            long pauseMs = 200;
            if (response != null && response.errorCode() == Errors.DUPLICATE_BROKER_REGISTRATION.code()) {
                // The previous incarnation (killed) still holds a live session until broker.session.timeout.ms
                // passes without a heartbeat; a refused registration does not extend it, so ask again each second.
                pauseMs = Math.min(1000, sessionTimeoutMs());
            }
            LOGGER.info("Broker registration of {} not accepted yet ({}), retrying in {} ms", config.nodeId(), why,
                    pauseMs);
            TimeUnit.MILLISECONDS.sleep(pauseMs);
        }
    }

    private long sessionTimeoutMs() {
        try {
            return Long.parseLong(config.originals().getOrDefault("broker.session.timeout.ms", "9000").trim());
        } catch (NumberFormatException e) {
            return 9000L;
        }
    }

    private static boolean rejectedRegistration(short errorCode) {
        return errorCode == Errors.STALE_BROKER_EPOCH.code() || errorCode == Errors.BROKER_ID_NOT_REGISTERED.code();
    }

    private static void checkDeadline(long deadline, String what) throws IOException {
        if (System.nanoTime() - deadline > 0) {
            throw new IOException("The broker was not " + what + " in time");
        }
    }

    private void scheduledHeartbeat() {
        try {
            BrokerHeartbeatResponseData response = heartbeat(false, false);
            if (response != null && rejectedRegistration(response.errorCode())) {
                LOGGER.warn("Heartbeat of broker {} rejected with {}; registering again", config.nodeId(),
                        Errors.forCode(response.errorCode()));
                BrokerRegistrationResponseData registered = await(node.registerBroker(registration));
                if (registered != null && registered.errorCode() == Errors.NONE.code()) {
                    brokerEpoch = registered.brokerEpoch();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOGGER.warn("Heartbeat of broker {} failed: {}", config.nodeId(), e.toString());
        }
    }

    /**
     * Makes the heartbeats report {@code offset} (the offset the partitions have applied) as this broker's metadata
     * offset instead of the node's image offset, as Kafka's broker reports the offset its publishers have taken on.
     */
    public void reportAppliedOffset(LongSupplier offset) {
        this.appliedOffset = offset;
    }

    private long currentMetadataOffset() {
        LongSupplier applied = appliedOffset;
        long offset = applied == null ? -1L : applied.getAsLong();
        return offset >= 0 ? offset : node.currentImage().offset();
    }

    private BrokerHeartbeatResponseData heartbeat(boolean wantFence, boolean wantShutDown)
            throws InterruptedException {
        return heartbeat(wantFence, wantShutDown, REQUEST_TIMEOUT_MS);
    }

    private BrokerHeartbeatResponseData heartbeat(boolean wantFence, boolean wantShutDown, long timeoutMs)
            throws InterruptedException {
        BrokerHeartbeatRequestData request = new BrokerHeartbeatRequestData().setBrokerId(config.nodeId())
                .setBrokerEpoch(brokerEpoch).setCurrentMetadataOffset(currentMetadataOffset())
                .setWantFence(wantFence).setWantShutDown(wantShutDown);
        BrokerHeartbeatResponseData response = await(node.heartbeat(request), timeoutMs);
        if (response != null && response.errorCode() == Errors.NONE.code()) {
            fenced = response.isFenced();
            caughtUp |= response.isCaughtUp();
        }
        return response;
    }

    private static <T> T await(CompletableFuture<T> future) throws InterruptedException {
        return await(future, REQUEST_TIMEOUT_MS);
    }

    private static <T> T await(CompletableFuture<T> future, long timeoutMs) throws InterruptedException {
        try {
            return future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOGGER.debug("Metadata request failed: {}", e.toString());
            return null;
        }
    }

    private static String advertisedHost(Endpoint endpoint) {
        if (!endpoint.wildcardHost()) {
            return endpoint.host();
        }
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    /**
     * Kafka's {@code beginControlledShutdown}: stops the regular heartbeats and asks the controller to move this
     * broker's leaderships away (and take it out of every ISR), waiting at most {@value #SHUTDOWN_WAIT_MS} ms until it
     * says {@code shouldShutDown}, then fences this broker. The broker must still serve clients and followers while
     * this runs, so the server calls it before closing anything else. Runs once; later calls return at once.
     */
    public synchronized void controlledShutdown() {
        if (shutDown) {
            return;
        }
        shutDown = true;
        heartbeats.shutdownNow();
        try {
            if (brokerEpoch >= 0) {
                awaitControlledShutdown();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOGGER.warn("Controlled shutdown of broker {} failed: {}", config.nodeId(), e.toString());
        }
    }

    /** The controlled shutdown if it has not run yet, then closes the metadata node. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            controlledShutdown();
        } finally {
            node.close();
            LOGGER.info("Metadata node of broker {} closed", config.nodeId());
        }
    }

    /**
     * Asks until the controller answers {@code shouldShutDown}, an error, or nothing; then, if it answered, fences this
     * broker. The whole exchange, each request included, takes at most {@value #SHUTDOWN_WAIT_MS} ms: when a cluster
     * stops at once, the quorum may be gone before this broker asks, and its shutdown must not wait for answers that
     * cannot come.
     */
    private void awaitControlledShutdown() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_WAIT_MS);
        BrokerHeartbeatResponseData response = null;
        long remainingMs;
        while ((remainingMs = remainingMs(deadline)) > 0) {
            response = heartbeat(false, true, remainingMs);
            if (response == null || response.errorCode() != Errors.NONE.code() || response.shouldShutDown()) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        if (response == null || !response.shouldShutDown()) {
            LOGGER.warn("Broker {} timed out waiting for the controller to approve its controlled shutdown ({})",
                    config.nodeId(), response == null ? "no answer"
                            : response.errorCode() != Errors.NONE.code() ? Errors.forCode(response.errorCode()).name()
                            : "its leaderships are still moving");
        }
        if (response != null) {
            heartbeat(true, true, Math.max(remainingMs(deadline), FENCE_WAIT_MS));
        }
        LOGGER.info("Broker {} completed its controlled shutdown", config.nodeId());
    }

    private static long remainingMs(long deadlineNanos) {
        return TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
    }
}
