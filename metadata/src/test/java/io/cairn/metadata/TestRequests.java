package io.cairn.metadata;

import io.cairn.wire.message.BrokerHeartbeatRequestData;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.CreateTopicsRequestData;
import io.cairn.wire.protocol.Uuid;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Request builders and port helpers shared by the metadata tests. */
public final class TestRequests {

    private TestRequests() {
    }

    public static BrokerRegistrationRequestData registration(int brokerId, String rack) {
        UUID random = UUID.randomUUID();
        List<BrokerRegistrationRequestData.Listener> listeners = new ArrayList<>();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("localhost")
                .setPort(9092 + brokerId).setSecurityProtocol((short) 0));
        return new BrokerRegistrationRequestData().setBrokerId(brokerId)
                .setIncarnationId(new Uuid(random.getMostSignificantBits(), random.getLeastSignificantBits()))
                .setListeners(listeners).setRack(rack);
    }

    /** A heartbeat of a broker that has applied all the metadata (so the controller finds it caught up). */
    public static BrokerHeartbeatRequestData heartbeat(int brokerId, long epoch) {
        return new BrokerHeartbeatRequestData().setBrokerId(brokerId).setBrokerEpoch(epoch).setWantFence(false)
                .setCurrentMetadataOffset(Long.MAX_VALUE);
    }

    public static CreateTopicsRequestData createTopic(String name, int partitions, int replication,
                                                      Map<String, String> configs) {
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().setName(name)
                .setNumPartitions(partitions).setReplicationFactor((short) replication);
        configs.forEach((k, v) -> topic.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().setName(k)
                .setValue(v)));
        List<CreateTopicsRequestData.CreatableTopic> topics = new ArrayList<>();
        topics.add(topic);
        return new CreateTopicsRequestData().setTopics(topics);
    }

    /** A currently free loopback port. */
    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
