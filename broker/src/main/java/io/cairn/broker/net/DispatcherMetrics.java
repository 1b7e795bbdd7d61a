package io.cairn.broker.net;

import io.cairn.broker.metrics.RequestMetrics;
import io.cairn.broker.metrics.SocketServerMetrics.ListenerMeters;
import io.cairn.log.Time;

/**
 * What a connection's {@link RequestDispatcher} records into: the request meters, its listener's connection meters
 * and the clock of the request timings. Immutable; shared by a listener's connections.
 */
record DispatcherMetrics(RequestMetrics requests, ListenerMeters connections, Time time) {
}
