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
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataListener;
import io.cairn.metadata.image.MetadataRecords;
import io.cairn.wire.error.ApiException;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DescribeQuorumRequestData;
import io.cairn.wire.message.DescribeQuorumResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
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
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
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

    private final MetadataConfig config;
    private final String clusterId;
    private final RaftPeerId selfId;
    private final RaftGroup group;
    private final MetadataStateMachine stateMachine;
    private final QuorumController controller;
    private final RaftServer server;
    private final RaftProperties clientProperties;
    /** What secures the transport of the server and of every client (null: PLAINTEXT). */
    private final Parameters transport;
    private final ClientId selfClientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final ExecutorService routingExecutor;
    private final Map<Integer, RaftClient> peerClients = new ConcurrentHashMap<>();
    private volatile int routeHint = -1;
    private volatile int lastFailedTarget = -1;
    private volatile int activeControllerId = -1;
    private volatile boolean closed;
    private final QuorumDescription quorumDescription = new QuorumDescription();
    /** Told each controller event's times and each append's commit latency. */
    private final ControllerEventListener controllerEvents;
    /** What authenticates the quorum's links of a SASL controller listener, or null. */
    private final QuorumFront front;

    private RatisMetadataNode(MetadataConfig config, String clusterId, ControllerEventListener controllerEvents,
            QuorumFront front) throws IOException {
        this.config = config;
        this.front = front;
        this.clusterId = clusterId;
        this.controllerEvents = controllerEvents;
        this.selfId = peerId(config.nodeId());
        List<RaftPeer> peers = new ArrayList<>();
        for (MetadataConfig.QuorumVoter voter : config.voters()) {
            peers.add(RaftPeer.newBuilder().setId(peerId(voter.id())).setAddress(voter.host() + ":" + voter.port())
                    .build());
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
        if (front != null) {
            QuorumRoutes.add(front);
        }
        RatisMetadataNode node;
        try {
            node = new RatisMetadataNode(config, meta.clusterId(), controllerEvents, front);
        } catch (IOException | RuntimeException e) {
            if (front != null) {
                QuorumRoutes.remove(front);
                front.close();
            }
            throw e;
        }
        try {
            node.server.start();
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
                config.nodeId(), config.roles(), config.voters(), meta.clusterId(),
                config.isController() && config.controllerBind() != null
                        ? "; the controller listener " + config.controllerBind() + " serves the Raft quorum" : "",
                front != null ? front : config.tls() == null ? "PLAINTEXT" : config.tls());
        if (!config.isController()) {
            node.joinAsListener();
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
            BootstrapVoters.write(dir, List.of(config.standaloneVoter()));
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
                    + " holds no voter set: format it with cairn-storage format --standalone or --initial-controllers"
                    + (config.isController() ? "" : " (a broker-only Cairn node needs controller.quorum.voters)"));
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
    private RaftClientReply route(Message message, int attemptNo) throws IOException {
        int target = routeHint;
        if (target < 0 && activeControllerId > 0 && activeControllerId != lastFailedTarget) {
            target = activeControllerId;
        }
        int chosen = target;
        if (target < 0 || config.voters().stream().noneMatch(v -> v.id() == chosen)) {
            List<MetadataConfig.QuorumVoter> candidates = config.voters().stream()
                    .filter(v -> v.id() != lastFailedTarget).toList();
            if (candidates.isEmpty()) {
                candidates = config.voters();
            }
            target = candidates.get(Math.floorMod(attemptNo, candidates.size())).id();
        }
        RaftClient client = peerClient(target);
        try {
            RaftClientReply reply = client.io().sendReadOnly(message);
            if (reply.getNotLeaderException() != null) {
                RaftPeer suggested = reply.getNotLeaderException().getSuggestedLeader();
                routeHint = suggested == null ? -1 : Integer.parseInt(suggested.getId().toString());
            }
            return reply;
        } catch (NotLeaderException e) {
            RaftPeer suggested = e.getSuggestedLeader();
            routeHint = suggested == null || suggested.getId().toString().equals(Integer.toString(target))
                    ? -1 : Integer.parseInt(suggested.getId().toString());
            throw e;
        } catch (IOException | RuntimeException e) {
            routeHint = -1;
            lastFailedTarget = target;
            dropPeerClient(target, client);
            throw e;
        }
    }

    /** The client that talks to voter {@code id} only, without Ratis retries (one per voter, made on first use). */
    private RaftClient peerClient(int id) {
        return peerClients.computeIfAbsent(id, ignored -> RaftClient.newBuilder()
                .setProperties(clientProperties).setParameters(transport).setRaftGroup(group).setLeaderId(peerId(id))
                .setRetryPolicy(RetryPolicies.noRetry()).build());
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
        List<Integer> observers = division.getRaftConf().getCurrentPeers(RaftPeerRole.LISTENER).stream()
                .map(peer -> Integer.parseInt(peer.getId().toString())).sorted().toList();
        return new QuorumDescription.RaftState(config.nodeId(), info.getCurrentTerm(),
                division.getRaftLog().getLastCommittedIndex(), division.getRaftLog().getNextIndex(), voters,
                observers, followers);
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
     * (Ratis' group info carries no configuration over the wire) holds its voters and listeners; as the voter set
     * is static, every peer that is not a configured voter is a listener.
     */
    private boolean tryJoinAsListener() throws IOException {
        Optional<Map.Entry<Integer, RaftGroup>> leader = leaderGroup();
        if (leader.isEmpty()) {
            return false;
        }
        Set<RaftPeerId> voterIds = new HashSet<>();
        config.voters().forEach(voter -> voterIds.add(peerId(voter.id())));
        List<RaftPeer> servers = new ArrayList<>();
        List<RaftPeer> listeners = new ArrayList<>();
        for (RaftPeer peer : leader.get().getValue().getPeers()) {
            (voterIds.contains(peer.getId()) ? servers : listeners).add(peer);
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
    private Optional<Map.Entry<Integer, RaftGroup>> leaderGroup() {
        List<Integer> candidates = new ArrayList<>();
        int known = activeControllerId;
        if (known > 0) {
            candidates.add(known);
        }
        config.voters().stream().map(MetadataConfig.QuorumVoter::id).filter(id -> id != known)
                .forEach(candidates::add);
        for (int id : candidates) {
            RaftClient client = peerClient(id);
            try {
                GroupInfoReply info = client.getGroupManagementApi(peerId(id)).info(GROUP_ID);
                if (info.getRoleInfoProto().getRole() == RaftPeerRole.LEADER) {
                    return Optional.of(Map.entry(id, info.getGroup()));
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
        } else if (controller != null && controller.isActive()) {
            once = controller.submit(requestId, request);
        } else {
            Message message = CommandCodec.encodeCommand(requestId, request);
            try {
                once = CompletableFuture.supplyAsync(() -> {
                    RaftClientReply reply;
                    try {
                        reply = route(message, attemptNo);
                    } catch (IOException e) {
                        throw CommandCodec.toApiException(e);
                    }
                    if (!reply.isSuccess()) {
                        throw CommandCodec.toApiException(reply.getException());
                    }
                    return CommandCodec.decode(reply.getMessage(), true);
                }, routingExecutor).orTimeout(routingTryTimeoutMs(), TimeUnit.MILLISECONDS);
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
