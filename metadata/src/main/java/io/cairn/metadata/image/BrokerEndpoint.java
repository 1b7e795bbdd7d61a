package io.cairn.metadata.image;

import java.util.Objects;

/**
 * One advertised listener of a registered broker. Immutable, thread-safe.
 *
 * @param name             the listener name (PLAINTEXT, SSL, ...)
 * @param host             the advertised host
 * @param port             the advertised port
 * @param securityProtocol Kafka's security protocol id (0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL)
 */
public record BrokerEndpoint(String name, String host, int port, short securityProtocol) {

    public BrokerEndpoint {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(host, "host");
    }
}
