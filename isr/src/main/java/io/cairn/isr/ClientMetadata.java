package io.cairn.isr;

/**
 * What a consumer's fetch tells about its client (Kafka's {@code ClientMetadata}, sent from Fetch v11): the
 * {@code rack_id} of the request ({@code client.rack}, empty when not set), the client id and the listener the
 * request arrived on, whose endpoints a preferred read replica must have. Immutable.
 *
 * @param rackId       the client's rack, empty when it has none
 * @param clientId     the request header's client id, for logging
 * @param listenerName the listener of the connection
 */
public record ClientMetadata(String rackId, String clientId, String listenerName) {
}
