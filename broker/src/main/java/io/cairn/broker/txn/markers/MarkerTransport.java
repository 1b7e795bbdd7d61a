package io.cairn.broker.txn.markers;

import io.cairn.isr.client.SourceBroker;
import io.cairn.wire.message.WriteTxnMarkersRequestData;
import io.cairn.wire.message.WriteTxnMarkersResponseData;
import java.io.IOException;

/**
 * How a WriteTxnMarkers request reaches a leader and its answer comes back (blocking). The channel calls
 * {@link #send} for one destination from that destination's own thread only, so an implementation may keep one
 * connection per destination without further locking.
 */
interface MarkerTransport extends AutoCloseable {

    /** Sends {@code request} to {@code destination} and waits for its response. */
    WriteTxnMarkersResponseData send(SourceBroker destination, WriteTxnMarkersRequestData request) throws IOException;

    /** Closes every connection; a blocked send fails at once. */
    @Override
    void close();
}
