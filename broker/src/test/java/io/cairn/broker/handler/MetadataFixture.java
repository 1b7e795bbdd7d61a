package io.cairn.broker.handler;

import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.StandardAclAuthorizer;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.MetadataNode;
import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclPermissionType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.message.CreateTopicsResponseData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import io.cairn.wire.protocol.ByteBufAccessor;
import io.cairn.wire.protocol.SerializationCache;
import io.cairn.wire.protocol.Uuid;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real single-voter metadata node in a temporary directory with broker 1 registered (PLAINTEXT on
 * localhost:9092) and unfenced, for handler tests. Not thread-safe.
 */
public final class MetadataFixture implements AutoCloseable {

    static final String LISTENER = "PLAINTEXT";

    private final MetadataNode node;

    private MetadataFixture(MetadataNode node) {
        this.node = node;
    }

    static MetadataFixture start(Path dir) throws Exception {
        return start(dir, Map.of());
    }

    /** With {@code extra} broker configs (e.g. {@code delegation.token.secret.key}). */
    static MetadataFixture start(Path dir, Map<String, String> extra) throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, String> config = new java.util.HashMap<>(extra);
        config.putAll(Map.of("node.id", "1",
                "controller.quorum.voters", "1@127.0.0.1:" + port, "metadata.log.dir", dir.toString(),
                // A sole voter waits one election timeout (randomised up to twice it) before it leads; nothing
                // competes with it, so the shortest Ratis takes keeps the ~35 tests that start a fixture quick.
                "log.dirs", dir.toString(), "controller.quorum.election.timeout.ms", "100",
                // The fixture's brokers heartbeat once: a session that outlasts any test keeps them unfenced even
                // when a loaded machine makes a test class run past Kafka's default 9 s.
                "broker.session.timeout.ms", "600000"));
        MetadataNode node = MetadataNode.start(MetadataConfig.from(config));
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName(LISTENER).setHost("localhost")
                .setPort(9092).setSecurityProtocol((short) 0));
        BrokerRegistrationResponseData registered = node.registerBroker(new BrokerRegistrationRequestData()
                .setBrokerId(1).setClusterId(node.clusterId()).setIncarnationId(new Uuid(7, 7))
                .setListeners(listeners).setRack("rack-a")).get(30, TimeUnit.SECONDS);
        if (registered.errorCode() != Errors.NONE.code()) {
            throw new IllegalStateException("registration failed: " + registered);
        }
        node.heartbeat(new BrokerHeartbeatRequestData().setBrokerId(1).setBrokerEpoch(registered.brokerEpoch())
            .setCurrentMetadataOffset(node.currentImage().offset()))
                .get(30, TimeUnit.SECONDS);
        return new MetadataFixture(node);
    }

    public MetadataNode node() {
        return node;
    }

    /** Creates a topic through the controller and returns its id. */
    Uuid createTopic(String name, int partitions) throws Exception {
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(partitions)
                .setReplicationFactor((short) 1));
        CreateTopicsResponseData response = node.createTopics(request).get(30, TimeUnit.SECONDS);
        if (response.topics().get(0).errorCode() != Errors.NONE.code()) {
            throw new IllegalStateException("create failed: " + response);
        }
        return response.topics().get(0).topicId();
    }

    static RequestContext context(ApiKey key, int version) {
        return context(key, version, LISTENER);
    }

    static RequestContext context(ApiKey key, int version, String listener) {
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(key.id())
                .setRequestApiVersion((short) version).setCorrelationId(1).setClientId("test");
        return new RequestContext(header, key, new ClientConnection("c", listener, null));
    }

    /**
     * A request of principal {@code User:<user>} from 127.0.0.1 on a broker with the standard authorizer (no super
     * users, nothing allowed without an ACL) holding {@code acls}.
     */
    static RequestContext securedContext(ApiKey key, int version, String user, AclEntry... acls) {
        Map<io.cairn.wire.protocol.Uuid, AclEntry> byId = new java.util.HashMap<>();
        for (AclEntry acl : acls) {
            byId.put(acl.id(), acl);
        }
        StandardAclAuthorizer authorizer = new StandardAclAuthorizer(java.util.Set.of(), false);
        authorizer.load(new MetadataImage(-1L, "", -1, 0L, Map.of(), Map.of(), Map.of(), Map.of(), 0L, 0L, byId,
                Map.of(), Map.of()));
        ClientConnection connection = new ClientConnection("c", LISTENER,
                new java.net.InetSocketAddress("127.0.0.1", 40000));
        connection.authenticated(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user));
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(key.id())
                .setRequestApiVersion((short) version).setCorrelationId(1).setClientId("test");
        return new RequestContext(header, key, connection, authorizer);
    }

    /** An ALLOW ACL from any host, with a fresh id. */
    static AclEntry allow(AclResourceType type, String name, AclPatternType pattern, String principal,
                          AclOperation operation) {
        return new AclEntry(new io.cairn.wire.protocol.Uuid(ACL_IDS.incrementAndGet(), 1L), type.code(), name,
                pattern.code(), principal, "*", operation.code(), AclPermissionType.ALLOW.code());
    }

    private static final java.util.concurrent.atomic.AtomicLong ACL_IDS = new java.util.concurrent.atomic.AtomicLong();

    /** Writes {@code message} at {@code version} and reads it back, as the wire would (fails on a bad field). */
    static <T extends ApiMessage> ApiMessage roundTrip(T message, ApiKey key, int version, boolean response) {
        SerializationCache cache = new SerializationCache();
        int size = message.size(cache, (short) version);
        ByteBuf buf = Unpooled.buffer(size);
        try {
            message.write(new ByteBufAccessor(buf), cache, (short) version);
            ApiMessage copy = response ? key.newResponse() : key.newRequest();
            copy.read(new ByteBufAccessor(buf), (short) version);
            return copy;
        } finally {
            buf.release();
        }
    }

    @Override
    public void close() {
        node.close();
    }
}
