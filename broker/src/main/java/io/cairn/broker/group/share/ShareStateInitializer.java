package io.cairn.broker.group.share;

import io.cairn.wire.error.Errors;
import io.cairn.wire.message.DeleteShareGroupStateRequestData;
import io.cairn.wire.message.DeleteShareGroupStateResponseData;
import io.cairn.wire.message.InitializeShareGroupStateRequestData;
import io.cairn.wire.message.InitializeShareGroupStateResponseData;
import io.cairn.wire.message.ReadShareGroupStateSummaryRequestData;
import io.cairn.wire.message.ReadShareGroupStateSummaryResponseData;
import java.util.concurrent.CompletableFuture;

/**
 * The group coordinator's way to the share coordinator(s) of a group's share-partitions (Kafka's {@code Persister}
 * as the group coordinator uses it): InitializeShareGroupState (heartbeats and AlterShareGroupOffsets),
 * DeleteShareGroupState (DeleteShareGroupOffsets, DeleteGroups) and ReadShareGroupStateSummary
 * (DescribeShareGroupOffsets). Each answer has one result per share-partition asked for; a failure that outlived the
 * retries is that partition's error.
 */
public interface ShareStateInitializer extends AutoCloseable {

    /** InitializeShareGroupState of every share-partition of {@code request}. */
    CompletableFuture<InitializeShareGroupStateResponseData> initializeState(
        InitializeShareGroupStateRequestData request);

    /** DeleteShareGroupState of every share-partition of {@code request}. */
    CompletableFuture<DeleteShareGroupStateResponseData> deleteState(DeleteShareGroupStateRequestData request);

    /** ReadShareGroupStateSummary of every share-partition of {@code request}. */
    CompletableFuture<ReadShareGroupStateSummaryResponseData> readStateSummary(
        ReadShareGroupStateSummaryRequestData request);

    /** Completes with true when every share-partition of {@code request} was initialized, false otherwise. */
    default CompletableFuture<Boolean> initialize(InitializeShareGroupStateRequestData request) {
        return initializeState(request).thenApply(response -> response.results().stream()
            .flatMap(t -> t.partitions().stream()).allMatch(p -> p.errorCode() == Errors.NONE.code()));
    }

    /** Stops its connections and threads (the group coordinator closes it). */
    @Override
    default void close() {
    }
}
