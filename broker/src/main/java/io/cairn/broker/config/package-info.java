/**
 * {@code server.properties}: Kafka's key names and defaults, parsed and validated once at startup into an immutable
 * {@link io.cairn.broker.config.BrokerConfig}.
 */
package io.cairn.broker.config;
