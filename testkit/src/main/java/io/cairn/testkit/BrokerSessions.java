package io.cairn.testkit;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Shorter broker sessions for test brokers of either kind: {@code broker.session.timeout.ms=4000} with a heartbeat
 * every second ({@code broker.heartbeat.interval.ms=1000}), instead of Kafka's 9 s and 2 s (about the same ratio).
 *
 * <p>The session is what a killed node costs in time: the controller fences it (and so moves its leaderships and
 * shrinks its ISRs) only once it expires, and the node's next start registers only once its previous incarnation's
 * session is over, which on a single combined node means each start after a SIGKILL waits the whole session
 * (Kafka's controller, like Cairn's, gives every registered broker a fresh session when it becomes active). Every
 * kill in a scenario took 9 s of that; it now takes 4. A single-node broker of either kind runs with these
 * ({@link CairnProcess}, {@link KafkaReferenceProcess}); a cluster scenario that kills nodes opts in with
 * {@link #quick(Map)}, unless the session is its subject (a restart before the node is fenced, a pause shorter than
 * the session). The figure harnesses and the fault campaign keep Kafka's defaults, which is what they measure.
 */
public final class BrokerSessions {

    /** The two settings, to add to a broker's configuration. */
    public static final Map<String, String> QUICK = Map.of(
            "broker.session.timeout.ms", "4000",
            "broker.heartbeat.interval.ms", "1000");

    private BrokerSessions() {
    }

    /** A copy of {@code config} with {@link #QUICK} added (a key {@code config} sets itself is replaced). */
    public static Map<String, String> quick(Map<String, String> config) {
        Map<String, String> quick = new LinkedHashMap<>(config);
        quick.putAll(QUICK);
        return quick;
    }
}
