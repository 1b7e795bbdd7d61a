package io.cairn.broker.txn.markers;

import io.cairn.isr.client.BrokerConnection;
import io.cairn.isr.client.BrokerConnections;
import io.cairn.isr.client.ClientTls;
import io.cairn.isr.client.SourceBroker;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import java.io.IOException;
import java.util.List;

/**
 * WriteTxnMarkers over the inter-broker client ({@link BrokerConnection}, the replica fetcher's connection code):
 * one connection per destination broker, ApiVersions first (WriteTxnMarkers v1, the only version).
 *
 * <p>Thread-safe; each destination's connection is used by that destination's sender thread only.
 */
final class InterBrokerMarkerTransport implements MarkerTransport {

    /** Responses name each partition once with a short error: far below this for any request the channel builds. */
    private static final int MAX_RESPONSE_BYTES = 16 << 20;

    private final BrokerConnections connections;

    /**
     * @param brokerId        this broker's id (the client id is Kafka's {@code broker-<id>-txn-marker-sender})
     * @param socketTimeoutMs connect and read timeout: above the leader's acks wait, so its answer arrives
     * @param tls             the inter-broker listener's security
     */
    InterBrokerMarkerTransport(int brokerId, int socketTimeoutMs, ClientTls tls) {
        this.connections = new BrokerConnections("broker-" + brokerId + "-txn-marker-sender",
                "cairn-txn-marker-sender", socketTimeoutMs, MAX_RESPONSE_BYTES,
                List.of(new BrokerConnection.ApiRange(ApiKey.WRITE_TXN_MARKERS, (short) 1, (short) 1)), tls);
    }

    @Override
    public WriteTxnMarkersResponseData send(SourceBroker destination, WriteTxnMarkersRequestData request)
            throws IOException {
        try {
            return connections.get(destination).send(request);
        } catch (IllegalStateException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        connections.close();
    }
}
