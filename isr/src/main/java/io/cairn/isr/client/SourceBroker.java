package io.cairn.isr.client;

import java.util.Objects;

/**
 * The leader broker a fetcher fetches from (Kafka's {@code BrokerEndPoint}): its id and its endpoint on the
 * inter-broker listener. Immutable.
 *
 * @param id   the broker id
 * @param host the advertised host of the inter-broker listener
 * @param port the advertised port of the inter-broker listener
 */
public record SourceBroker(int id, String host, int port) {

    public SourceBroker {
        Objects.requireNonNull(host, "host");
    }

    @Override
    public String toString() {
        return "broker " + id + " at " + host + ":" + port;
    }
}
