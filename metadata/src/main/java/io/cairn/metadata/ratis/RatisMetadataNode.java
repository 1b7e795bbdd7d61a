package io.cairn.metadata.ratis;

import io.cairn.metadata.BootstrapFeatures;
import io.cairn.metadata.BootstrapScram;
import io.cairn.metadata.BootstrapVoters;
import io.cairn.metadata.MetaProperties;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.QuorumFront;
import io.cairn.metadata.controller.ControllerLogic;
import io.cairn.metadata.controller.ControllerMutationQuotas;
import io.cairn.metadata.controller.ControllerEventListener;
import io.cairn.metadata.controller.EventLoop;
import io.cairn.metadata.controller.MetadataLog;
import io.cairn.metadata.controller.QuorumController;
import io.cairn.metadata.image.Features;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataRecords;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AddRaftVoterRequestData;
import io.cairn.wire.message.AddRaftVoterResponseData;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import io.cairn.wire.message.RemoveRaftVoterRequestData;
import io.cairn.wire.message.RemoveRaftVoterResponseData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.ServerRpcProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.LeaderElectionManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.ExitUtils;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * A metadata node on Apache Ratis: controllers are the voters of one Raft group (the Ratis leader is the active
 * controller and runs the {@link QuorumController}); a broker-only node joins the group as a non-voting listener
 * and follows the same log. Controller commands travel as Ratis read-only queries, which Ratis routes to the
 * leader. Thread-safe.
 */
public final class RatisMetadataNode implements MetadataNode {

    private static final Logger LOGGER = LogManager.getLogger(RatisMetadataNode.class);

    static {
        // Ratis' gRPC transport calls System.exit when its server cannot bind (and on an uncaught exception in its
        // threads); with exits disabled it throws instead, so a failed start is this class's exception to report
        // and clean up after, and the process decides how to end.
        ExitUtils.disableSystemExit();
    }
    /** One metadata group per cluster; every node derives the same id. */
    static final RaftGroupId GROUP_ID = RaftGroupId.valueOf(UUID.fromString("ca125000-0000-4000-8000-00000000da7a"));
    /** The directory of the metadata log inside metadata.log.dir (Kafka's name for it). */
    public static final String METADATA_DIR = "__cluster_metadata-0";
    private static final long RETRY_MS = 50;
    /** The first election timeout of a quorum of one voter (then 1-2x it): it has no one to wait for. */
    private static final long SOLE_VOTER_FIRST_ELECTION_MS = 10;
    /**
     * How the leader retries appending to a voter it cannot reach: 10 times 1 ms apart, then every 500 ms for good.
     * Ratis' default ({@code 1ms,10, 1s,20, 5s,1000}) spaces the tries 5 s apart once a voter has been down some
     * 10 s, so a node restarted after a crash waited up to 5 s more to rejoin the quorum and register (KRaft's voters
     * fetch from the leader, and catch up as soon as they start). A try at a node that is down is a refused connection.
     */
    private static final String APPENDER_RETRY_POLICY = "1ms,10, 500ms," + Integer.MAX_VALUE;
    /**
     * What marks a voter's metadata directory id (KIP-853's voter key) in its Raft peer entry. Ratis' peer has no
     * field for it, so it rides in the peer's data-stream address: Cairn's quorum runs no Ratis DataStream (the RPC
     * type is gRPC and no data-stream type is set), so Ratis never reads that field, and it is written into every
     * configuration entry of the log with the voter, as Kafka's VotersRecord carries the directory id.
     */
    static final String DIRECTORY_ID_MARK = "kraft-directory-id:";

    private final MetadataConfig config;
    private final String clusterId;
    private final RaftPeerId selfId;
    private final RaftGroup group;
    private final MetadataStateMachine stateMachine;
    /** Wakes the Raft log's writer thread at the close (set once the server started). */
    private volatile RaftLogWorkerWake logWorkerWake = RaftLogWorkerWake.NONE;
    private final QuorumController controller;
    private final RaftServer server;
    private final RaftProperties clientProperties;
    /** What secures the transport of the server and of every client (null: PLAINTEXT). */
    private final Parameters transport;
    private final ClientId selfClientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final ExecutorService routingExecutor;
    private final Map<Integer, RaftClient> peerClients = new ConcurrentHashMap<>();
    /**
     * Quorum members this node learned of from a NotLeader answer (the suggested leader with its address), for a
     * controller that joins a running quorum and knows only controller.quorum.bootstrap.servers.
     */
    private final Map<Integer, RaftPeer> learnedPeers = new ConcurrentHashMap<>();
    /** Set while this leader commits an AddRaftVoter or RemoveRaftVoter: one voter change at a time, as Kafka. */
    private final AtomicBoolean voterChangeInFlight = new AtomicBoolean();
    /** Set while this leader resigns ({@link #resign}). */
    private final AtomicBoolean resigning = new AtomicBoolean();
    /** Pauses and resumes this node's leader elections ({@link #followVoterSet}), one call at a time, in order. */
    private final ExecutorService electionControl;
    /** Whether this node stands for election (paused while it is no voter of the committed configuration). */
    private volatile boolean electionsOn = true;
    /** How many committed configurations this node was told of: only the latest is followed. */
    private final AtomicLong configurationsSeen = new AtomicLong();
    private volatile int routeHint = -1;
    private volatile int lastFailedTarget = -1;
    private volatile int activeControllerId = -1;
    /** Completed by the first failed write of the metadata log (see {@link #logFailure()}). */
    private final CompletableFuture<Throwable> logFailure = new CompletableFuture<>();
    private volatile boolean closed;
    private final QuorumDescription quorumDescription = new QuorumDescription();
    /** Told each controller event's times and each append's commit latency. */
    private final ControllerEventListener controllerEvents;
    /** What authenticates the quorum's links of a SASL controller listener, or null. */
    private final QuorumFront front;

    private RatisMetadataNode(MetadataConfig config, String clusterId, ControllerEventListener controllerEvents,
            QuorumFront front, Map<Integer, Uuid> directoryIds) throws IOException {
        this.config = config;
        this.front = front;
        this.clusterId = clusterId;
        this.controllerEvents = controllerEvents;
        this.selfId = peerId(config.nodeId());
        List<RaftPeer> peers = new ArrayList<>();
        for (MetadataConfig.QuorumVoter voter : config.voters()) {
            peers.add(voterPeer(voter.id(), voter.host(), voter.port(), directoryIds.getOrDefault(voter.id(),
                    Uuid.ZERO)));
        }
        boolean listener = !config.isController();
        if (listener) {
            peers.add(listenerPeer());
        }
        this.group = RaftGroup.valueOf(GROUP_ID, peers);
        this.stateMachine = new MetadataStateMachine(new Hooks());
        RaftProperties properties = properties(config, listener, front != null);
        this.controller = config.isController()
                ? new QuorumController(new ControllerLogic(config.controller(),
                        BootstrapFeatures.read(config.metadataLogDir()), BootstrapScram.read(config.metadataLogDir())),
                        clusterId, new RatisLog(),
                        stateMachine::image, EventLoop.singleThread("cairn-controller-" + config.nodeId(),
                                controllerEvents),
                        stateMachine::appliedResponse)
                : null;
        Path storageDir = config.metadataLogDir().resolve(METADATA_DIR);
        boolean fresh = !Files.isDirectory(storageDir.resolve(GROUP_ID.getUuid().toString()));
        this.transport = QuorumTransport.parameters(config.tls());
        this.server = RaftServer.newBuilder().setServerId(selfId).setGroup(group).setProperties(properties)
                .setStateMachine(stateMachine).setParameters(transport)
                .setOption(fresh ? RaftStorage.StartupOption.FORMAT : RaftStorage.StartupOption.RECOVER).build();
        stateMachine.setTermSupplier(ignored -> currentTerm());
        this.clientProperties = clientProperties(config);
        this.electionControl = Executors.newSingleThreadExecutor(r -> {
            Thread thread = new Thread(r, "cairn-metadata-elections-" + config.nodeId());
            thread.setDaemon(true);
            return thread;
        });
        this.routingExecutor = Executors.newCachedThreadPool(r -> {
            Thread thread = new Thread(r, "cairn-metadata-route-" + config.nodeId());
            thread.setDaemon(true);
            return thread;
        });
    }

    /**
     * Starts a node: reads meta.properties from metadata.log.dir (writing it on the first start of a sole-voter
     * controller), starts the Ratis server and, on a broker-only node, joins the group as a listener.
     */
    public static RatisMetadataNode start(MetadataConfig configured) throws IOException {
        return start(configured, ControllerEventListener.NONE);
    }

    /** {@link #start(MetadataConfig)}, the controller's event loop telling {@code controllerEvents} its times. */
    public static RatisMetadataNode start(MetadataConfig configured, ControllerEventListener controllerEvents)
            throws IOException {
        return start(configured, controllerEvents, null);
    }

    /**
     * {@link #start(MetadataConfig, ControllerEventListener)} with the quorum's links authenticated by {@code front}
     * (a SASL controller listener; null otherwise): the Raft server binds a loopback port of its own, the front
     * serves the node's quorum address before it, and every connection to a peer goes through the front.
     */
    public static RatisMetadataNode start(MetadataConfig configured, ControllerEventListener controllerEvents,
            QuorumFront front) throws IOException {
        configured.checkControllerSecurity(front != null);
        MetaProperties meta = ensureFormatted(configured);
        MetadataConfig config = withFormattedVoters(configured);
        Map<Integer, Uuid> directoryIds = BootstrapVoters.readFormatted(config.metadataLogDir())
                .map(BootstrapVoters.Formatted::directoryIds).orElse(Map.of());
        if (front != null) {
            QuorumRoutes.add(front);
        }
        RatisMetadataNode node;
        try {
            node = new RatisMetadataNode(config, meta.clusterId(), controllerEvents, front, directoryIds);
        } catch (IOException | RuntimeException e) {
            if (front != null) {
                QuorumRoutes.remove(front);
                front.close();
            }
            throw e;
        }
        try {
            node.server.start();
            node.logWorkerWake = RaftLogWorkerWake.find(node.server.getDivision(GROUP_ID).getMemberId().toString());
            if (front != null) {
                front.serve(node.publicAddress(), node.server.getServerRpc().getInetSocketAddress());
            }
        } catch (IOException | RuntimeException e) {
            // Ratis starts the division (its election timer, its outbound clients) before it binds the RPC server:
            // a node that cannot bind would live on as a voter that others cannot reach (and, alone, as a leader
            // nobody can talk to), so stop the division itself: the server's close skips it after a failed start.
            node.closeAfterFailedStart();
            if (e instanceof ExitUtils.ExitException && e.getCause() instanceof IOException cause) {
                throw cause;
            }
            throw e;
        }
        LOGGER.info("Metadata node {} started (roles {}, voters {}, cluster {}{}; the quorum speaks {})",
                config.nodeId(), config.roles(), node.currentVoterIds().isEmpty() ? "none yet (joins through "
                        + config.bootstrapServers() + ")" : node.currentVoterIds(), meta.clusterId(),
                config.isController() && config.controllerBind() != null
                        ? "; the controller listener " + config.controllerBind() + " serves the Raft quorum" : "",
                front != null ? front : config.tls() == null ? "PLAINTEXT" : config.tls());
        if (!config.isController()) {
            node.joinAsListener();
        } else {
            // A voter removed before this start, whose log's configuration lists it as a listener, never stands.
            RaftConfiguration conf = node.raftConf();
            if (conf != null && conf.getPreviousPeers(RaftPeerRole.FOLLOWER).isEmpty()
                    && !conf.getCurrentPeers(RaftPeerRole.FOLLOWER).isEmpty()) {
                node.followVoterSet(conf.getCurrentPeers(RaftPeerRole.FOLLOWER).stream()
                        .map(RatisMetadataNode::nodeId).collect(Collectors.toSet()));
            }
        }
        return node;
    }

    private static MetaProperties ensureFormatted(MetadataConfig config) throws IOException {
        Path dir = config.metadataLogDir();
        Optional<MetaProperties> existing = MetaProperties.read(dir);
        if (existing.isPresent()) {
            if (existing.get().nodeId() != config.nodeId()) {
                throw new IOException("Stored node id " + existing.get().nodeId() + " in " + dir
                        + " doesn't match node.id " + config.nodeId());
            }
            return existing.get();
        }
        boolean standalone = config.isStandaloneBootstrap();
        if (!config.isSoleVoter() && !standalone) {
            throw new IOException("No meta.properties found in " + dir
                    + " (have you run cairn-storage format to format the directory?)");
        }
        MetaProperties meta = new MetaProperties(MetaProperties.randomUuid().toString(), config.nodeId(),
                MetaProperties.randomUuid());
        if (standalone) {
            // As kafka-storage format --standalone: a dynamic quorum (kraft.version 1) of this node alone.
            BootstrapVoters.write(dir, List.of(config.standaloneVoter()), Map.of(config.nodeId(), meta.directoryId()));
            Map<String, Short> levels = new LinkedHashMap<>(Features.bootstrapLevels());
            levels.put(Features.KRAFT_VERSION, (short) 1);
            BootstrapFeatures.write(dir, levels);
        }
        meta.write(dir);
        LOGGER.info("Formatted {} on first start as the sole voter{}: cluster.id {}", dir,
                standalone ? " (as kafka-storage format --standalone)" : "", meta.clusterId());
        return meta;
    }

    /**
     * The configuration with its voters: controller.quorum.voters when set, else the voter set formatted into the
     * metadata log dir (controller.quorum.bootstrap.servers with {@code format --standalone} or
     * {@code --initial-controllers}).
     */
    private static MetadataConfig withFormattedVoters(MetadataConfig config) throws IOException {
        if (!config.voters().isEmpty()) {
            return config;
        }
        Optional<List<MetadataConfig.QuorumVoter>> formatted = BootstrapVoters.read(config.metadataLogDir());
        if (formatted.isEmpty()) {
            throw new IOException("controller.quorum.voters is not set and " + config.metadataLogDir()
                    + " holds no voter set: format it with cairn-storage format --standalone, --initial-controllers"
                    + " or --no-initial-controllers"
                    + (config.isController() ? "" : " (a broker-only Cairn node needs controller.quorum.voters)"));
        }
        if (formatted.get().isEmpty()) {
            if (!config.isController() || config.bootstrapServers().isEmpty()) {
                throw new IOException(config.metadataLogDir() + " was formatted with --no-initial-controllers, which "
                        + "needs a controller with controller.quorum.bootstrap.servers");
            }
            // --no-initial-controllers: the node starts outside the quorum; its voters come from the Raft
            // configuration once add-controller adds it (and from the log after a restart).
            return config;
        }
        try {
            return config.withVoters(formatted.get());
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage() + " (voters formatted in " + config.metadataLogDir() + ")", e);
        }
    }

    private RaftPeer listenerPeer() {
        if (config.listenerPort() <= 0) {
            throw new IllegalArgumentException("A broker-only node follows the metadata log as a Ratis listener and "
                    + "needs metadata.listener.port");
        }
        return RaftPeer.newBuilder().setId(selfId).setAddress(config.listenerHost() + ":" + config.listenerPort())
                .setStartupRole(RaftPeerRole.LISTENER).build();
    }

    private static RaftProperties properties(MetadataConfig config, boolean listener, boolean fronted) {
        RaftProperties props = new RaftProperties();
        RaftConfigKeys.Rpc.setType(props, SupportedRpcType.GRPC);
        GrpcConfigKeys.Server.setPort(props, fronted ? 0 : listener ? config.listenerPort()
                : config.controllerBindPort());
        // A controller's Raft server is its controller listener: it binds that listener's host (every interface
        // when the host is empty), as KRaft's controller listener does. Behind a front it binds a loopback port of
        // its own, and the front serves the listener.
        MetadataConfig.Address bind = config.controllerBind();
        if (fronted) {
            GrpcConfigKeys.Server.setHost(props, InetAddress.getLoopbackAddress().getHostAddress());
        } else if (!listener && bind != null && !bind.host().isEmpty()) {
            GrpcConfigKeys.Server.setHost(props, bind.host());
        } else if (!listener && bind == null) {
            // No controller listener (a combined node alone, its quorum on a loopback port it picked): the server
            // binds the address its voter entry names, not every interface.
            config.voters().stream().filter(v -> v.id() == config.nodeId()).findFirst()
                    .ifPresent(self -> GrpcConfigKeys.Server.setHost(props, self.host()));
        }
        RaftServerConfigKeys.setStorageDir(props, List.of(config.metadataLogDir().resolve(METADATA_DIR).toFile()));
        long election = config.electionTimeoutMs();
        RaftServerConfigKeys.Rpc.setTimeoutMin(props, TimeDuration.valueOf(election, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(props, TimeDuration.valueOf(2 * election, TimeUnit.MILLISECONDS));
        if (!listener && config.voters().size() == 1 && config.voters().get(0).id() == config.nodeId()) {
            // The sole voter elects itself at once, as KRaft's only voter becomes candidate and leader on start: no
            // other voter can hold a term it would have to wait out. Later elections keep the configured timeout.
            RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(props,
                    TimeDuration.valueOf(SOLE_VOTER_FIRST_ELECTION_MS, TimeUnit.MILLISECONDS));
            RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(props,
                    TimeDuration.valueOf(2 * SOLE_VOTER_FIRST_ELECTION_MS, TimeUnit.MILLISECONDS));
        }
        RaftServerConfigKeys.Rpc.setRequestTimeout(props,
                TimeDuration.valueOf(config.requestTimeoutMs(), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(props, APPENDER_RETRY_POLICY);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(props, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(props, config.snapshotThreshold());
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(props, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(props, true);
        // Each snapshot purges the closed log segments it covers, at most every 1024 entries (Ratis' purge gap): a
        // node whose log ends below the leader's first entry is sent the leader's snapshot and reloads it.
        RaftServerConfigKeys.Log.setPurgeGap(props, (int) Math.min(RaftServerConfigKeys.Log.PURGE_GAP_DEFAULT,
                Math.max(1, config.snapshotThreshold())));
        if (config.logSegmentBytes() > 0) {
            RaftServerConfigKeys.Log.setSegmentSizeMax(props, SizeInBytes.valueOf(config.logSegmentBytes()));
        }
        return props;
    }

    /**
     * Sends a read-only query to one voter: the last known leader, else the voters in turn. One try per call, no
     * Ratis retries (Ratis' ordered async client closes itself for good after a failure; this one is blocking):
     * the caller's loop retries, so a dead leader costs one failed try, not a retry policy's worth of them.
     */
    private RaftClientReply route(Message message, int attemptNo, long slowMs) throws IOException {
        int target = routeHint;
        if (target < 0 && activeControllerId > 0 && activeControllerId != lastFailedTarget) {
            target = activeControllerId;
        }
        int chosen = target;
        List<Integer> voters = routingTargets();
        if (target < 0 || !voters.contains(chosen)) {
            List<Integer> candidates = voters.stream().filter(id -> id != lastFailedTarget).toList();
            if (candidates.isEmpty()) {
                candidates = voters;
            }
            if (candidates.isEmpty()) {
                throw Errors.NOT_CONTROLLER.exception("Node " + config.nodeId() + " knows no voter of the quorum yet");
            }
            target = candidates.get(Math.floorMod(attemptNo, candidates.size()));
        }
        RaftClient client = slowMs > 0 ? slowClient(target, slowMs) : peerClient(target);
        try {
            RaftClientReply reply = client.io().sendReadOnly(message);
            if (reply.getNotLeaderException() != null) {
                RaftPeer suggested = reply.getNotLeaderException().getSuggestedLeader();
                learn(suggested);
                routeHint = suggested == null ? -1 : Integer.parseInt(suggested.getId().toString());
            }
            return reply;
        } catch (NotLeaderException e) {
            RaftPeer suggested = e.getSuggestedLeader();
            learn(suggested);
            routeHint = suggested == null || suggested.getId().toString().equals(Integer.toString(target))
                    ? -1 : Integer.parseInt(suggested.getId().toString());
            throw e;
        } catch (IOException | RuntimeException e) {
            routeHint = -1;
            lastFailedTarget = target;
            dropPeerClient(target, client);
            throw e;
        } finally {
            if (slowMs > 0) {
                closeQuietly(client);
            }
        }
    }

    /** A client of its own for one slow command to member {@code id}, whose one try may take {@code timeoutMs}. */
    private RaftClient slowClient(int id, long timeoutMs) {
        RaftPeer peer = knownPeers().get(id);
        if (peer == null) {
            throw Errors.NOT_CONTROLLER.exception("No address of quorum member " + id + " is known to node "
                    + config.nodeId());
        }
        RaftProperties props = new RaftProperties();
        RaftConfigKeys.Rpc.setType(props, SupportedRpcType.GRPC);
        RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(timeoutMs, TimeUnit.MILLISECONDS));
        return RaftClient.newBuilder().setProperties(props).setParameters(transport)
                .setRaftGroup(RaftGroup.valueOf(GROUP_ID, peer)).setLeaderId(peer.getId())
                .setRetryPolicy(RetryPolicies.noRetry()).build();
    }

    /**
     * How long a voter change may take on the leader: AddRaftVoter's TimeoutMs, at least a request timeout for each of
     * the two entries Ratis commits (the joint configuration, then the new one), where Kafka commits one VotersRecord
     * within controller.quorum.request.timeout.ms.
     */
    private long voterChangeTimeoutMs(ApiMessage request) {
        return Math.max(2 * config.requestTimeoutMs(), request instanceof AddRaftVoterRequestData add
                ? Math.min(add.timeoutMs(), 120_000L) : 0);
    }

    /**
     * The client that talks to quorum member {@code id} only, at the address the Raft configuration gives it,
     * without Ratis retries (one per member, made on first use).
     *
     * @throws ApiException NOT_CONTROLLER when no address of {@code id} is known
     */
    private RaftClient peerClient(int id) {
        RaftPeer peer = knownPeers().get(id);
        if (peer == null) {
            throw Errors.NOT_CONTROLLER.exception("No address of quorum member " + id + " is known to node "
                    + config.nodeId());
        }
        return peerClients.computeIfAbsent(id, ignored -> RaftClient.newBuilder()
                .setProperties(clientProperties).setParameters(transport)
                .setRaftGroup(RaftGroup.valueOf(GROUP_ID, peer)).setLeaderId(peer.getId())
                .setRetryPolicy(RetryPolicies.noRetry()).build());
    }

    /**
     * Every quorum member whose address this node knows, by node id: the group it started with, the members of its
     * division's Raft configuration (voters and listeners, as committed to the log: voters added or removed at run
     * time included), and those it learned of from NotLeader answers. A controller that joins a running quorum and
     * knows no member yet reaches its controller.quorum.bootstrap.servers under the ids -1, -2, ...: a Raft server
     * checks a request's group, not the id it was sent to, and answers NotLeader naming the leader.
     */
    private Map<Integer, RaftPeer> knownPeers() {
        Map<Integer, RaftPeer> peers = new LinkedHashMap<>();
        group.getPeers().forEach(peer -> peers.put(nodeId(peer), peer));
        RaftConfiguration conf = raftConf();
        if (conf != null) {
            conf.getAllPeers(RaftPeerRole.FOLLOWER).forEach(peer -> peers.put(nodeId(peer), peer));
            conf.getAllPeers(RaftPeerRole.LISTENER).forEach(peer -> peers.put(nodeId(peer), peer));
        }
        learnedPeers.forEach(peers::putIfAbsent);
        bootstrapPeers().forEach(peers::putIfAbsent);
        return peers;
    }

    /**
     * The voters to route controller commands to: the current Raft configuration's, else the configured or
     * formatted ones, else (a controller joining a running quorum) the leaders learned of and the bootstrap servers.
     */
    private List<Integer> routingTargets() {
        List<Integer> voters = currentVoterIds();
        if (!voters.isEmpty()) {
            return voters;
        }
        List<Integer> targets = new ArrayList<>(learnedPeers.keySet());
        targets.addAll(bootstrapPeers().keySet());
        return targets;
    }

    /** The voter ids of the division's current Raft configuration, else of the configured voters. */
    private List<Integer> currentVoterIds() {
        RaftConfiguration conf = raftConf();
        if (conf != null && !conf.getCurrentPeers(RaftPeerRole.FOLLOWER).isEmpty()) {
            return conf.getCurrentPeers(RaftPeerRole.FOLLOWER).stream().map(RatisMetadataNode::nodeId).sorted()
                    .toList();
        }
        return config.voters().stream().map(MetadataConfig.QuorumVoter::id).toList();
    }

    /** controller.quorum.bootstrap.servers as peers -1, -2, ... of a node that knows no voter by id. */
    private Map<Integer, RaftPeer> bootstrapPeers() {
        Map<Integer, RaftPeer> peers = new LinkedHashMap<>();
        if (config.voters().isEmpty()) {
            for (int i = 0; i < config.bootstrapServers().size(); i++) {
                peers.put(-1 - i, RaftPeer.newBuilder().setId(peerId(-1 - i))
                        .setAddress(config.bootstrapServers().get(i).trim()).build());
            }
        }
        return peers;
    }

    private void learn(RaftPeer suggested) {
        if (suggested != null && suggested.getAddress() != null) {
            learnedPeers.put(nodeId(suggested), suggested);
        }
    }

    /** The division's current Raft configuration, or null before the division exists. */
    private RaftConfiguration raftConf() {
        try {
            return server.getDivision(GROUP_ID).getRaftConf();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    static int nodeId(RaftPeer peer) {
        return Integer.parseInt(peer.getId().toString());
    }

    /** A voter's Raft peer entry: its controller listener address and its metadata directory id. */
    static RaftPeer voterPeer(int id, String host, int port, Uuid directoryId) {
        RaftPeer.Builder builder = RaftPeer.newBuilder().setId(peerId(id))
                .setAddress((host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port);
        if (directoryId != null && !directoryId.equals(Uuid.ZERO)) {
            builder.setDataStreamAddress(DIRECTORY_ID_MARK + directoryId);
        }
        return builder.build();
    }

    /** The directory id a voter's peer entry carries (ZERO for a static voter). */
    static Uuid directoryId(RaftPeer peer) {
        String mark = peer.getDataStreamAddress();
        if (mark == null || !mark.startsWith(DIRECTORY_ID_MARK)) {
            return Uuid.ZERO;
        }
        try {
            return Uuid.fromString(mark.substring(DIRECTORY_ID_MARK.length()));
        } catch (IllegalArgumentException e) {
            return Uuid.ZERO;
        }
    }

    /**
     * Forgets a voter's client after a failed call: a Ratis client may close itself after a failure, and calls on
     * it then fail or hang, so the next try gets a new one. Its resources are released later, off the request path
     * and after concurrent tries on it have given up (closing waits for the channel, seconds for a dead peer).
     */
    private void dropPeerClient(int id, RaftClient client) {
        if (peerClients.remove(id, client)) {
            CompletableFuture.delayedExecutor(2 * config.requestTimeoutMs(), TimeUnit.MILLISECONDS,
                    routingExecutor).execute(() -> closeQuietly(client));
        }
    }

    private static void closeQuietly(RaftClient client) {
        try {
            client.close();
        } catch (IOException e) {
            LOGGER.debug("Error closing a Ratis client", e);
        }
    }

    private static RaftProperties clientProperties(MetadataConfig config) {
        RaftProperties props = new RaftProperties();
        RaftConfigKeys.Rpc.setType(props, SupportedRpcType.GRPC);
        // One routing try waits at most an election timeout: a try stuck on a dead leader (Ratis fails it only at
        // its timeout) must not outlast the election that replaces it. The caller retries.
        RaftClientConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(
                Math.min(config.requestTimeoutMs(), Math.max(1000, config.electionTimeoutMs())),
                TimeUnit.MILLISECONDS));
        return props;
    }

    static RaftPeerId peerId(int nodeId) {
        return RaftPeerId.valueOf(Integer.toString(nodeId));
    }

    private long currentTerm() {
        try {
            return server.getDivision(GROUP_ID).getInfo().getCurrentTerm();
        } catch (IOException e) {
            throw new IllegalStateException("No metadata group division", e);
        }
    }

    /**
     * DescribeQuorum from this node's Raft state ({@link QuorumDescription}): the full description when this node
     * is the ready Raft leader, NOT_LEADER_OR_FOLLOWER otherwise. Reads the division's state, never blocks.
     */
    private DescribeQuorumResponseData describeLocally(DescribeQuorumRequestData request) {
        QuorumDescription.RaftState state = null;
        try {
            RaftServer.Division division = server.getDivision(GROUP_ID);
            DivisionInfo info = division.getInfo();
            if (info.isLeader() && info.isLeaderReady()) {
                state = raftState(division, info);
            }
        } catch (IOException e) {
            LOGGER.debug("No metadata group division to describe", e);
        }
        return quorumDescription.describe(request, state, config, System.currentTimeMillis());
    }

    private QuorumDescription.RaftState raftState(RaftServer.Division division, DivisionInfo info) {
        Map<Integer, QuorumDescription.Follower> followers = new HashMap<>();
        RoleInfoProto role = info.getRoleInfoProto();
        long[] nextIndices = info.getFollowerNextIndices();
        if (role.hasLeaderInfo() && nextIndices != null
                && role.getLeaderInfo().getFollowerInfoCount() == nextIndices.length) {
            for (int i = 0; i < nextIndices.length; i++) {
                ServerRpcProto rpc = role.getLeaderInfo().getFollowerInfo(i);
                int id = Integer.parseInt(rpc.getId().getId().toStringUtf8());
                followers.put(id, new QuorumDescription.Follower(id, nextIndices[i], rpc.getLastRpcElapsedTimeMs()));
            }
        }
        List<Integer> voters = division.getRaftConf().getCurrentPeers(RaftPeerRole.FOLLOWER).stream()
                .map(peer -> Integer.parseInt(peer.getId().toString())).sorted().toList();
        Map<Integer, QuorumDescription.VoterEndpoint> endpoints = new HashMap<>();
        if (Features.dynamicQuorum(stateMachine.image()) || config.voters().isEmpty()) {
            // A dynamic quorum (KIP-853) describes its voters as the Raft configuration holds them; a static one
            // as controller.quorum.voters names them. A listener that was a voter keeps its directory id.
            List<RaftPeer> members = new ArrayList<>(division.getRaftConf().getCurrentPeers(RaftPeerRole.FOLLOWER));
            members.addAll(division.getRaftConf().getCurrentPeers(RaftPeerRole.LISTENER));
            for (RaftPeer peer : members) {
                InetSocketAddress address = parseAddress(peer.getAddress());
                if (address != null) {
                    endpoints.put(nodeId(peer), new QuorumDescription.VoterEndpoint(address.getHostString(),
                            address.getPort(), directoryId(peer)));
                }
            }
        }
        List<Integer> observers = division.getRaftConf().getCurrentPeers(RaftPeerRole.LISTENER).stream()
                .map(peer -> Integer.parseInt(peer.getId().toString())).sorted().toList();
        return new QuorumDescription.RaftState(config.nodeId(), info.getCurrentTerm(),
                division.getRaftLog().getLastCommittedIndex(), division.getRaftLog().getNextIndex(), voters,
                observers, followers, endpoints);
    }

    /** {@code host:port} (an IPv6 host in brackets) as an unresolved address, or null when it is not one. */
    private static InetSocketAddress parseAddress(String address) {
        int colon = address == null ? -1 : address.lastIndexOf(':');
        if (colon <= 0) {
            return null;
        }
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        try {
            return InetSocketAddress.createUnresolved(host, Integer.parseInt(address.substring(colon + 1)));
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * AddRaftVoter or RemoveRaftVoter (KIP-853) on this node, the Raft leader: Kafka's checks
     * ({@link VoterChanges}), then the new voter set as a Ratis configuration change, compare-and-set against the
     * configuration the checks read. Ratis commits it with joint consensus: a new voter is first caught up by the
     * leader (Ratis' staging, where Kafka asks the new voter to be a caught-up observer), then the old and the new
     * set commit together; the answer comes once the new set is committed, as Kafka answers once its VotersRecord
     * commits. A removed voter stays in the group as a listener (Kafka's observer); a removed leader steps down. A
     * change that does not commit within the request's timeout (AddRaftVoter's TimeoutMs, at least
     * controller.quorum.request.timeout.ms) is REQUEST_TIMED_OUT.
     */
    private CompletableFuture<ApiMessage> changeVoters(ApiMessage request) {
        boolean add = request instanceof AddRaftVoterRequestData;
        RaftServer.Division division;
        try {
            division = server.getDivision(GROUP_ID);
        } catch (IOException e) {
            return CompletableFuture.completedFuture(voterChangeError(add, Errors.NOT_LEADER_OR_FOLLOWER, null));
        }
        DivisionInfo info = division.getInfo();
        RaftConfiguration conf = division.getRaftConf();
        List<RaftPeer> servers = List.copyOf(conf.getAllPeers(RaftPeerRole.FOLLOWER));
        List<RaftPeer> listeners = List.copyOf(conf.getAllPeers(RaftPeerRole.LISTENER));
        List<VoterChanges.Voter> voters = conf.getCurrentPeers(RaftPeerRole.FOLLOWER).stream().map(peer -> {
            InetSocketAddress address = parseAddress(peer.getAddress());
            return new VoterChanges.Voter(nodeId(peer), directoryId(peer),
                    address == null ? "" : address.getHostString(), address == null ? -1 : address.getPort());
        }).sorted(Comparator.comparingInt(VoterChanges.Voter::id)).toList();
        boolean pending = voterChangeInFlight.get() || !conf.getPreviousPeers(RaftPeerRole.FOLLOWER).isEmpty()
                || division.getRaftLog().getLastCommittedIndex() < conf.getLogEntryIndex();
        VoterChanges.LeaderState state = new VoterChanges.LeaderState(clusterId,
                info.isLeader() && info.isLeaderReady(), pending,
                stateMachine.image().featureLevel(Features.KRAFT_VERSION), voters, controllerListenerName());
        VoterChanges.Outcome outcome = add ? VoterChanges.add((AddRaftVoterRequestData) request, state)
                : VoterChanges.remove((RemoveRaftVoterRequestData) request, state);
        if (outcome.refused()) {
            return CompletableFuture.completedFuture(add ? outcome.addResponse() : outcome.removeResponse());
        }
        if (!voterChangeInFlight.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(voterChangeError(add, Errors.REQUEST_TIMED_OUT,
                    "Request timed out waiting for leader to handle previous voter change request"));
        }
        int changed = outcome.changed().id();
        List<RaftPeer> newServers = new ArrayList<>(servers.stream().filter(p -> nodeId(p) != changed).toList());
        if (add) {
            newServers.add(voterPeer(changed, outcome.changed().host(), outcome.changed().port(),
                    outcome.changed().directoryId()));
        }
        List<RaftPeer> newListeners = new ArrayList<>(listeners.stream().filter(p -> nodeId(p) != changed).toList());
        if (!add) {
            // As Kafka's removed controller goes on fetching as an observer, the removed voter stays in the group as
            // a listener: the leader keeps replicating to it, so a combined node's broker keeps its metadata.
            RaftPeer removed = servers.stream().filter(p -> nodeId(p) == changed).findFirst().orElseThrow();
            newListeners.add(RaftPeer.newBuilder().setId(removed.getId()).setAddress(removed.getAddress())
                    .setDataStreamAddress(removed.getDataStreamAddress()).setStartupRole(RaftPeerRole.LISTENER)
                    .build());
        }
        SetConfigurationRequest.Arguments args = SetConfigurationRequest.Arguments.newBuilder()
                .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
                .setServersInCurrentConf(servers).setListenersInCurrentConf(listeners)
                .setServersInNewConf(newServers).setListenersInNewConf(newListeners).build();
        long timeoutMs = voterChangeTimeoutMs(request);
        LOGGER.info("{} voter {} (directory {}): the Raft configuration goes from {} to {} (listeners {})",
                add ? "Adding" : "Removing", changed, outcome.changed().directoryId(), servers, newServers,
                newListeners);
        CompletableFuture<RaftClientReply> sent;
        try {
            sent = server.setConfigurationAsync(new SetConfigurationRequest(selfClientId, selfId, GROUP_ID,
                    callIds.incrementAndGet(), args));
        } catch (IOException | RuntimeException e) {
            voterChangeInFlight.set(false);
            return CompletableFuture.completedFuture(voterChangeFailure(add, changed, e));
        }
        return sent.orTimeout(timeoutMs, TimeUnit.MILLISECONDS).handle((reply, failure) -> {
            voterChangeInFlight.set(false);
            if (failure == null && reply.isSuccess()) {
                LOGGER.info("{} voter {}: the new voter set is committed", add ? "Added" : "Removed", changed);
                if (!add && changed == config.nodeId()) {
                    // Kafka's leader resigns once the voter set without it commits, after answering; Ratis keeps
                    // a leader that the configuration lists as a listener. Off Ratis' thread, which completed this.
                    runQuietly(() -> resign("its removal from the voter set is committed"));
                }
                return add ? new AddRaftVoterResponseData() : new RemoveRaftVoterResponseData();
            }
            return voterChangeFailure(add, changed, failure != null ? failure : reply.getException());
        });
    }

    /** Runs {@code task} on the routing executor, unless the node is closing. */
    private void runQuietly(Runnable task) {
        try {
            routingExecutor.execute(task);
        } catch (RejectedExecutionException e) {
            LOGGER.debug("Node {} is closed: {} not run", config.nodeId(), task);
        }
    }

    /**
     * This leader, no voter of the committed configuration any more, gives up the leadership: it hands it to the
     * voter whose log is the furthest along (Ratis' leadership transfer: that voter stands for election at once, as
     * Kafka's resigning leader asks the voters to), else steps down and lets the voters elect one.
     */
    private void resign(String why) {
        if (!resigning.compareAndSet(false, true)) {
            return;
        }
        try {
            resignOnce(why);
        } finally {
            resigning.set(false);
        }
    }

    private void resignOnce(String why) {
        RaftServer.Division division;
        try {
            division = server.getDivision(GROUP_ID);
        } catch (IOException e) {
            return;
        }
        if (!division.getInfo().isLeader()) {
            return;
        }
        RaftPeerId target = null;
        long best = -1;
        RoleInfoProto role = division.getInfo().getRoleInfoProto();
        long[] nextIndices = division.getInfo().getFollowerNextIndices();
        List<RaftPeerId> voters = division.getRaftConf().getCurrentPeers(RaftPeerRole.FOLLOWER).stream()
                .map(RaftPeer::getId).filter(id -> !id.equals(selfId)).toList();
        if (role.hasLeaderInfo() && nextIndices != null
                && role.getLeaderInfo().getFollowerInfoCount() == nextIndices.length) {
            for (int i = 0; i < nextIndices.length; i++) {
                RaftPeerId id = RaftPeerId.valueOf(role.getLeaderInfo().getFollowerInfo(i).getId().getId());
                if (voters.contains(id) && nextIndices[i] > best) {
                    best = nextIndices[i];
                    target = id;
                }
            }
        }
        LOGGER.info("Leader {} resigns: {}; it hands the leadership to {}", config.nodeId(), why,
                target == null ? "the voters' election" : target);
        long timeoutMs = 2 * config.electionTimeoutMs();
        try {
            RaftClientReply reply = server.transferLeadershipAsync(new TransferLeadershipRequest(selfClientId, selfId,
                    GROUP_ID, callIds.incrementAndGet(), target, timeoutMs))
                    .get(timeoutMs + config.requestTimeoutMs(), TimeUnit.MILLISECONDS);
            if (reply.isSuccess() || target == null) {
                return;
            }
            LOGGER.info("Leader {} could not hand the leadership to {} ({}): it steps down", config.nodeId(), target,
                    reply.getException());
        } catch (IOException | ExecutionException | TimeoutException | RuntimeException e) {
            LOGGER.info("Leader {} could not hand the leadership to {} ({}): it steps down", config.nodeId(), target,
                    e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (division.getInfo().isLeader()) {
            try {
                server.transferLeadershipAsync(new TransferLeadershipRequest(selfClientId, selfId, GROUP_ID,
                        callIds.incrementAndGet(), null, timeoutMs));
            } catch (IOException | RuntimeException e) {
                LOGGER.warn("Leader {} could not step down: {}", config.nodeId(), e.toString());
            }
        }
    }

    /**
     * Follows a committed Raft configuration ({@code voterIds}, its voters): a node that is no voter of it never
     * stands for election, as Kafka's observers never do (Ratis closes the division of a candidate outside the
     * configuration, and a removed voter keeps Ratis' follower role until it restarts as a listener); a voter does.
     * A leader that is no voter resigns (the voter change it committed resigns it itself, after its answer).
     * Calls run one at a time, in the order of the configurations.
     */
    private void followVoterSet(Set<Integer> voterIds) {
        boolean voter = voterIds.contains(config.nodeId());
        long seq = configurationsSeen.incrementAndGet();
        try {
            electionControl.execute(() -> followVoterSet(voterIds, voter, seq));
        } catch (RejectedExecutionException e) {
            LOGGER.debug("Node {} is closed: the configuration {} is not followed", config.nodeId(), voterIds);
        }
    }

    private void followVoterSet(Set<Integer> voterIds, boolean voter, long seq) {
        if (closed || seq != configurationsSeen.get()) {
            // a later configuration is followed instead
            return;
        }
        try {
            LeaderElectionManagementRequest request = voter
                    ? LeaderElectionManagementRequest.newResume(selfClientId, selfId, GROUP_ID,
                            callIds.incrementAndGet())
                    : LeaderElectionManagementRequest.newPause(selfClientId, selfId, GROUP_ID,
                            callIds.incrementAndGet());
            server.leaderElectionManagementAsync(request).get(config.requestTimeoutMs(), TimeUnit.MILLISECONDS);
            if (voter != electionsOn) {
                electionsOn = voter;
                LOGGER.info("Node {} {} for election: it is {} voter of the committed configuration {}",
                        config.nodeId(), voter ? "stands again" : "no longer stands", voter ? "a" : "no",
                        voterIds);
            }
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            // Ratis takes such requests once the division runs (a joining controller's starts while the leader
            // catches it up): try again, unless a later configuration came meanwhile.
            LOGGER.debug("Node {} could not {} its leader elections yet: {}", config.nodeId(),
                    voter ? "resume" : "pause", e.toString());
            CompletableFuture.delayedExecutor(RETRY_MS * 4, TimeUnit.MILLISECONDS).execute(() -> {
                try {
                    electionControl.execute(() -> followVoterSet(voterIds, voter, seq));
                } catch (RejectedExecutionException closing) {
                    LOGGER.debug("Node {} is closed", config.nodeId());
                }
            });
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (!voter && !voterChangeInFlight.get()) {
            resign("it is no voter of the committed configuration " + voterIds);
        }
    }

    /** A voter change that Ratis did not commit: NOT_LEADER_OR_FOLLOWER if leadership moved, else timed out. */
    private ApiMessage voterChangeFailure(boolean add, int voterId, Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        LOGGER.warn("{} voter {} did not commit: {}", add ? "Adding" : "Removing", voterId, String.valueOf(cause));
        if (cause instanceof NotLeaderException) {
            return voterChangeError(add, Errors.NOT_LEADER_OR_FOLLOWER, null);
        }
        String what = add ? "add" : "remove";
        return voterChangeError(add, Errors.REQUEST_TIMED_OUT, cause instanceof TimeoutException
                ? "Request timed out waiting for the voter set with the " + what + "ed voter " + voterId
                        + " to commit"
                : "Aborted " + what + " voter operation for " + voterId + ": " + cause);
    }

    private static ApiMessage voterChangeError(boolean add, Errors error, String message) {
        return add ? new AddRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(message)
                : new RemoveRaftVoterResponseData().setErrorCode(error.code()).setErrorMessage(message);
    }

    /** The first of controller.listener.names: the listener a new voter's endpoint must name (Kafka's default). */
    private String controllerListenerName() {
        return config.controllerListenerNames().isEmpty() ? "CONTROLLER" : config.controllerListenerNames().get(0);
    }

    private static boolean isVoterChange(ApiMessage request) {
        return request instanceof AddRaftVoterRequestData || request instanceof RemoveRaftVoterRequestData;
    }

    /**
     * Adds this node to the group's listeners, retrying until the committed configuration lists it. Ratis 3.1.3's
     * {@code Mode.ADD} merges the current listeners only into its "no change" check: the configuration it writes
     * holds just the listeners of the request, so each broker-only node joining that way removed the earlier ones
     * (the leader stops their log appenders and their images freeze). Instead each try reads the leader's
     * configuration and sets it with this node added, as a compare-and-set, so a concurrent change makes the try
     * fail and the next one starts from the new configuration.
     */
    private void joinAsListener() {
        routingExecutor.execute(() -> {
            for (int attempt = 1; ; attempt++) {
                try {
                    if (tryJoinAsListener()) {
                        LOGGER.info("Node {} joined the metadata quorum as a listener", config.nodeId());
                        return;
                    }
                } catch (ReconfigurationInProgressException e) {
                    LOGGER.debug("Listener registration of node {} waits for another configuration change",
                            config.nodeId());
                } catch (IOException | RuntimeException e) {
                    LOGGER.warn("Listener registration of node {} failed (attempt {}): {}", config.nodeId(), attempt,
                            e.toString());
                }
                if (closed || server.getLifeCycleState().isClosingOrClosed()) {
                    return;
                }
                try {
                    TimeUnit.MILLISECONDS.sleep(RETRY_MS * 4);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        });
    }

    /**
     * One try of {@link #joinAsListener}: true once the leader's configuration lists this node at its listener
     * address, false when no voter answered as the leader or the leader refused the change. The leader's group
     * (Ratis' group info carries no configuration over the wire) holds its voters and listeners, each listener's
     * peer entry with the LISTENER role it joined with (voters, configured or added by AddRaftVoter, have none).
     */
    private boolean tryJoinAsListener() throws IOException {
        Optional<Map.Entry<Integer, GroupInfoReply>> leader = leaderGroup();
        if (leader.isEmpty()) {
            return false;
        }
        List<RaftPeer> servers = new ArrayList<>();
        List<RaftPeer> listeners = new ArrayList<>();
        for (RaftPeer peer : leader.get().getValue().getGroup().getPeers()) {
            (peer.getStartupRole() == RaftPeerRole.LISTENER ? listeners : servers).add(peer);
        }
        RaftPeer self = listenerPeer();
        if (listeners.stream().anyMatch(p -> p.getId().equals(selfId) && p.getAddress().equals(self.getAddress()))) {
            return true;
        }
        List<RaftPeer> newListeners = new ArrayList<>(listeners.stream()
                .filter(p -> !p.getId().equals(selfId)).toList());
        newListeners.add(self);
        SetConfigurationRequest.Arguments args = SetConfigurationRequest.Arguments.newBuilder()
                .setMode(SetConfigurationRequest.Mode.COMPARE_AND_SET)
                .setServersInCurrentConf(servers).setListenersInCurrentConf(listeners)
                .setServersInNewConf(servers).setListenersInNewConf(newListeners).build();
        int leaderId = leader.get().getKey();
        RaftClient client = peerClient(leaderId);
        try {
            RaftClientReply reply = client.admin().setConfiguration(args);
            if (!reply.isSuccess()) {
                LOGGER.warn("Listener registration of node {} refused by {}: {}", config.nodeId(), leaderId,
                        reply.getException() == null ? reply : reply.getException().toString());
            }
            return reply.isSuccess();
        } catch (IOException | RuntimeException e) {
            dropPeerClient(leaderId, client);
            throw e;
        }
    }

    /**
     * The group (current voters and listeners) of the voter that answers as the Raft leader, with its id, asking
     * the known active controller first, then the others in turn; empty when none does.
     */
    private Optional<Map.Entry<Integer, GroupInfoReply>> leaderGroup() {
        List<Integer> candidates = new ArrayList<>();
        int known = activeControllerId;
        if (known > 0) {
            candidates.add(known);
        }
        routingTargets().stream().filter(id -> id != known).forEach(candidates::add);
        for (int id : candidates) {
            RaftClient client;
            try {
                client = peerClient(id);
            } catch (ApiException e) {
                continue;
            }
            try {
                GroupInfoReply info = client.getGroupManagementApi(peerId(id)).info(GROUP_ID);
                if (info.getRoleInfoProto().getRole() == RaftPeerRole.LEADER) {
                    return Optional.of(Map.entry(id, info));
                }
            } catch (IOException | RuntimeException e) {
                LOGGER.debug("No group info from voter {}: {}", id, e.toString());
                dropPeerClient(id, client);
            }
        }
        return Optional.empty();
    }

    @Override
    public MetadataImage currentImage() {
        return stateMachine.image();
    }

    @Override
    public MetadataImage subscribe(MetadataListener listener) {
        return stateMachine.subscribe(listener);
    }

    @Override
    public void unsubscribe(MetadataListener listener) {
        stateMachine.unsubscribe(listener);
    }

    @Override
    public CompletableFuture<ApiMessage> submit(ApiMessage request) {
        CompletableFuture<ApiMessage> result = new CompletableFuture<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(commandTimeoutMs());
        // One id for every try of this command: a retry after a try that timed out but committed is answered with
        // the first outcome instead of being applied again.
        attempt(UUID.randomUUID(), request, result, deadline, 0);
        return result;
    }

    /**
     * How long one routing try may take before the next one starts: an election timeout (at least 1 s), so a
     * try stuck on a dead or electing node (Ratis can hold it for seconds) does not outlast the election.
     */
    private long routingTryTimeoutMs() {
        return Math.min(config.requestTimeoutMs(), Math.max(1000, config.electionTimeoutMs()));
    }

    /** How long a command may wait for an active controller: a few elections plus the request timeout. */
    private long commandTimeoutMs() {
        return 4 * 2 * config.electionTimeoutMs() + config.requestTimeoutMs() + 5000;
    }

    private void attempt(UUID requestId, ApiMessage request, CompletableFuture<ApiMessage> result,
                         long deadlineNanos, int attemptNo) {
        CompletableFuture<ApiMessage> once;
        if (controller != null && controller.isActive() && request instanceof DescribeQuorumRequestData describe) {
            once = CompletableFuture.completedFuture(describeLocally(describe));
        } else if (controller != null && controller.isActive() && isVoterChange(request)) {
            once = changeVoters(request);
        } else if (controller != null && controller.isActive()) {
            once = controller.submit(requestId, request);
        } else {
            Message message = CommandCodec.encodeCommand(requestId, request);
            // A voter change waits for the leader to catch the new voter up and commit, and the leader answers
            // either way once its own time is up: one try waits for that answer (as Kafka's broker waits for the
            // controller's), with the time a command has to reach the leader on top, so a slow path does not lose
            // an answer the leader gives.
            long slowMs = isVoterChange(request) ? voterChangeTimeoutMs(request) + commandTimeoutMs() : 0;
            try {
                once = CompletableFuture.supplyAsync(() -> {
                    RaftClientReply reply;
                    try {
                        reply = route(message, attemptNo, slowMs);
                    } catch (IOException e) {
                        throw CommandCodec.toApiException(e);
                    }
                    if (!reply.isSuccess()) {
                        throw CommandCodec.toApiException(reply.getException());
                    }
                    return CommandCodec.decode(reply.getMessage(), true);
                }, routingExecutor).orTimeout(slowMs > 0 ? slowMs : routingTryTimeoutMs(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // The node closed while this command waited for its retry: it ends here, unrouted.
                result.completeExceptionally(Errors.NOT_CONTROLLER.exception("The metadata node is closed"));
                return;
            }
        }
        once.whenComplete((response, failure) -> {
            if (failure == null) {
                result.complete(response);
                return;
            }
            if (failure instanceof TimeoutException
                    || failure.getCause() instanceof TimeoutException) {
                routeHint = -1;
                if (isVoterChange(request)) {
                    // It may still commit on the leader: a retry would only find it in progress.
                    result.complete(voterChangeError(request instanceof AddRaftVoterRequestData,
                            Errors.REQUEST_TIMED_OUT, "Request timed out waiting for the voter change to commit"));
                    return;
                }
            }
            ApiException api = CommandCodec.toApiException(failure);
            LOGGER.debug("Controller command {} attempt {} failed: {}", request.apiKey(), attemptNo,
                    failure.toString());
            boolean retriable = Errors.forException(api) == Errors.NOT_CONTROLLER && !closed;
            if (retriable && System.nanoTime() < deadlineNanos) {
                CompletableFuture.delayedExecutor(RETRY_MS, TimeUnit.MILLISECONDS)
                        .execute(() -> attempt(requestId, request, result, deadlineNanos, attemptNo + 1));
            } else {
                result.completeExceptionally(api);
            }
        });
    }

    @Override
    public String clusterId() {
        return clusterId;
    }

    @Override
    public int nodeId() {
        return config.nodeId();
    }

    @Override
    public void useControllerMutationQuotas(ControllerMutationQuotas quotas) {
        if (controller != null) {
            controller.useMutationQuotas(quotas);
        }
    }

    @Override
    public boolean isActiveController() {
        return controller != null && controller.isActive();
    }

    @Override
    public int activeControllerId() {
        return activeControllerId;
    }

    @Override
    public CompletableFuture<Throwable> logFailure() {
        return logFailure;
    }

    /**
     * The node's quorum address as others dial it, to bind: a broker-only node's metadata listener port or a
     * controller's listener (its host, or every interface when empty), else its voter entry.
     */
    private InetSocketAddress publicAddress() {
        if (!config.isController()) {
            return new InetSocketAddress(config.listenerPort());
        }
        MetadataConfig.Address bind = config.controllerBind();
        if (bind != null) {
            return bind.host().isEmpty() ? new InetSocketAddress(config.controllerBindPort())
                    : new InetSocketAddress(bind.host(), config.controllerBindPort());
        }
        return config.voters().stream().filter(v -> v.id() == config.nodeId()).findFirst()
                .map(self -> new InetSocketAddress(self.host(), self.port()))
                .orElseGet(() -> new InetSocketAddress(config.controllerBindPort()));
    }

    private void closeAfterFailedStart() {
        try {
            server.getDivision(GROUP_ID).close();
        } catch (IOException | RuntimeException e) {
            LOGGER.warn("Error stopping the metadata division of node {} after a failed start: {}", config.nodeId(),
                    e.toString());
        }
        close();
    }

    @Override
    public void close() {
        closed = true;
        try {
            if (controller != null) {
                controller.close();
            }
            routingExecutor.shutdownNow();
            electionControl.shutdownNow();
            peerClients.values().forEach(RatisMetadataNode::closeQuietly);
            server.close();
        } catch (IOException e) {
            LOGGER.warn("Error closing metadata node {}", config.nodeId(), e);
        } finally {
            if (front != null) {
                QuorumRoutes.remove(front);
                front.close();
            }
        }
    }

    /**
     * The metadata log of the active controller: each batch is submitted straight to the local Ratis server as a
     * write request (in call order, from the controller thread); no client, no retries.
     */
    private final class RatisLog implements MetadataLog {
        @Override
        public CompletableFuture<Long> append(long term, List<ApiMessage> records) {
            return appendEntry(MetadataRecords.encode(records));
        }

        @Override
        public CompletableFuture<Long> append(long term, List<ApiMessage> records, UUID requestId,
                                              ApiMessage response) {
            return appendEntry(CommandCodec.encodeEntry(requestId, response, MetadataRecords.encode(records)));
        }

        private CompletableFuture<Long> appendEntry(byte[] entry) {
            Message message = Message.valueOf(ByteString.copyFrom(entry));
            RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(selfClientId).setServerId(selfId)
                    .setGroupId(GROUP_ID).setCallId(callIds.incrementAndGet()).setMessage(message)
                    .setType(RaftClientRequest.writeRequestType()).build();
            CompletableFuture<RaftClientReply> sent;
            long submitted = System.nanoTime();
            try {
                sent = server.submitClientRequestAsync(request);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
            return sent.thenApply(reply -> {
                if (!reply.isSuccess()) {
                    throw new IllegalStateException("Metadata append failed", reply.getException());
                }
                controllerEvents.onCommitted(System.nanoTime() - submitted);
                return reply.getLogIndex();
            });
        }
    }

    /** Ratis callbacks into this node. */
    private final class Hooks implements MetadataStateMachine.Hooks {
        @Override
        public void leaderReady(long term) {
            activeControllerId = config.nodeId();
            if (controller != null) {
                controller.becomeLeader(term);
            }
        }

        @Override
        public void notLeader() {
            if (controller != null) {
                controller.resign();
            }
        }

        @Override
        public void configurationCommitted(Set<Integer> voterIds) {
            followVoterSet(voterIds);
        }

        @Override
        public void closed() {
            logWorkerWake.stateMachineClosed();
        }

        /** A failed write leaves the Raft log unable to take entries: told through {@link #logFailure()}. */
        @Override
        public void logFailed(Throwable cause) {
            LOGGER.error("Error while writing to the metadata log in {}", config.metadataLogDir(), cause);
            logFailure.complete(cause);
        }

        @Override
        public void leaderChanged(RaftPeerId leaderId) {
            activeControllerId = leaderId == null ? -1 : Integer.parseInt(leaderId.toString());
            routeHint = activeControllerId;
            lastFailedTarget = -1;
            if (controller != null && !selfId.equals(leaderId)) {
                controller.resign();
            }
        }

        @Override
        public CompletableFuture<Message> command(Message request) {
            if (controller == null) {
                return CompletableFuture.completedFuture(CommandCodec.encodeError(Errors.NOT_CONTROLLER,
                        "Node " + config.nodeId() + " is not a controller"));
            }
            CommandCodec.Command decoded;
            try {
                decoded = CommandCodec.decodeCommand(request);
            } catch (RuntimeException e) {
                return CompletableFuture.completedFuture(CommandCodec.encodeError(Errors.INVALID_REQUEST,
                        e.getMessage()));
            }
            if (decoded.request() instanceof DescribeQuorumRequestData describe) {
                return CompletableFuture.completedFuture(CommandCodec.encode(describeLocally(describe)));
            }
            if (isVoterChange(decoded.request())) {
                return changeVoters(decoded.request()).thenApply(CommandCodec::encode);
            }
            return controller.submit(decoded.requestId(), decoded.request()).handle((response, failure) -> {
                if (failure == null) {
                    return CommandCodec.encode(response);
                }
                ApiException api = CommandCodec.toApiException(failure);
                return CommandCodec.encodeError(Errors.forException(api), api.getMessage());
            });
        }
    }
}
