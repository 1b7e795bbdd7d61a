package io.cairn.isr.fetcher;

import io.cairn.isr.client.SourceBroker;
import io.cairn.wire.protocol.Uuid;

/**
 * Where a partition starts fetching when it is added to a fetcher (Kafka's {@code InitialFetchState}). Immutable.
 *
 * @param topicId            the partition's topic id (fetches v13+ name topics by id)
 * @param leader             the broker to fetch from
 * @param currentLeaderEpoch the leader epoch the fetches are made in
 * @param initOffset         the first offset to fetch: the log end offset when the log has an epoch history, else
 *                           the high watermark
 */
public record InitialFetchState(Uuid topicId, SourceBroker leader, int currentLeaderEpoch, long initOffset) {
}
