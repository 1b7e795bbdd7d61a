/**
 * The follower side of replication (Kafka's replica fetchers): {@link io.cairn.isr.fetcher.ReplicaFetcherManager}
 * runs {@code num.replica.fetchers} {@link io.cairn.isr.fetcher.ReplicaFetcherThread}s per leader broker; each keeps a
 * {@link io.cairn.isr.fetcher.PartitionFetchState} per partition, truncates by leader epoch
 * (OffsetForLeaderEpoch, or the diverging epoch of a fetch response), fetches and appends as follower through
 * {@link io.cairn.isr.Partition}'s follower-side methods. The leader is reached through a
 * {@link io.cairn.isr.fetcher.LeaderEndpoint}: {@link io.cairn.isr.fetcher.RemoteLeaderEndpoint} speaks Kafka's
 * protocol through the inter-broker client ({@link io.cairn.isr.client}) with a client-side incremental fetch
 * session ({@link io.cairn.isr.fetcher.FetchSessionHandler}); tests drive the same threads with an in-memory
 * endpoint.
 */
package io.cairn.isr.fetcher;
