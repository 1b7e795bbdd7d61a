package io.cairn.broker.quota;

/**
 * What one client quota sensor measures now, as Kafka's metrics of its quota type report it (Kafka tags them
 * {@code user} and {@code client-id}, "" for a tag the applying quota does not use): its rate (for the controller
 * mutation quota {@code mutation-rate}, partitions per second over the quota window), the credits of its token bucket
 * ({@code tokens}; NaN when it has none) and the mean throttle time of the responses throttled by it over the last 30
 * to 60 s ({@code throttle-time}, in ms; NaN without one). Immutable.
 *
 * @param user           the user tag
 * @param clientId       the client-id tag
 * @param rate           the measured rate per second
 * @param tokens         the token bucket's credits, or NaN
 * @param throttleTimeMs the mean throttle time, or NaN
 */
public record QuotaSensorMetrics(String user, String clientId, double rate, double tokens, double throttleTimeMs) {
}
