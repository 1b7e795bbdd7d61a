/**
 * The inter-broker client: one blocking Kafka-protocol connection to another broker's inter-broker listener
 * ({@link io.cairn.isr.client.BrokerConnection} on a {@link io.cairn.isr.client.BlockingChannel}, TLS through
 * {@link io.cairn.isr.client.ClientTls}, SASL PLAIN or SCRAM through {@link io.cairn.isr.client.ClientSasl}),
 * negotiating API versions once per connection, and {@link io.cairn.isr.client.BrokerConnections}, which resolves
 * brokers from the metadata image. The replica fetchers, the transaction marker sender and the produce-side
 * transaction verifier all reach other brokers through it.
 */
package io.cairn.isr.client;
