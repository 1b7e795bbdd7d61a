package io.cairn.metadata.image;

import io.cairn.wire.protocol.Uuid;
import java.util.List;
import java.util.Optional;

/**
 * A broker as the controller knows it: identity, endpoints, rack and liveness. Immutable, thread-safe.
 *
 * @param id                   the broker id (node.id)
 * @param incarnationId        random per broker process start
 * @param epoch                the broker epoch the controller assigned to this registration
 * @param endpoints            the advertised listeners
 * @param rack                 broker.rack, if set
 * @param fenced               true while the broker may not lead partitions (not yet heartbeating, or timed out)
 * @param inControlledShutdown true once the broker asked to shut down
 */
public record BrokerRegistration(int id, Uuid incarnationId, long epoch, List<BrokerEndpoint> endpoints,
                                 Optional<String> rack, boolean fenced, boolean inControlledShutdown) {

    public BrokerRegistration {
        endpoints = List.copyOf(endpoints);
    }

    /** True when the broker can be chosen as leader or placed new replicas on. */
    public boolean usable() {
        return !fenced && !inControlledShutdown;
    }

    public BrokerRegistration withFenced(boolean newFenced) {
        return new BrokerRegistration(id, incarnationId, epoch, endpoints, rack, newFenced, inControlledShutdown);
    }

    public BrokerRegistration withControlledShutdown(boolean shuttingDown) {
        return new BrokerRegistration(id, incarnationId, epoch, endpoints, rack, fenced, shuttingDown);
    }

    /** The endpoint of the given listener, if the broker advertises it. */
    public Optional<BrokerEndpoint> endpoint(String listenerName) {
        return endpoints.stream().filter(e -> e.name().equals(listenerName)).findFirst();
    }
}
