package io.cairn.broker.txn;

import io.cairn.metadata.image.TopicPartition;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** An in-memory {@link TransactionMarkerSender}: records every request; the test completes or fails them. */
final class TestMarkerSender implements TransactionMarkerSender {

    /** One request to write markers. */
    record Request(String transactionalId, long producerId, short producerEpoch, boolean commit,
                   int coordinatorEpoch, Set<TopicPartition> partitions, CompletableFuture<Void> future) {
    }

    private final List<Request> requests = new ArrayList<>();

    @Override
    public CompletionStage<Void> writeMarkers(String transactionalId, long producerId, short producerEpoch,
                                              boolean commit, int coordinatorEpoch,
                                              Collection<TopicPartition> partitions) {
        CompletableFuture<Void> future = new CompletableFuture<>();
        requests.add(new Request(transactionalId, producerId, producerEpoch, commit, coordinatorEpoch,
                Set.copyOf(partitions), future));
        return future;
    }

    List<Request> requests() {
        return requests;
    }

    Request last() {
        return requests.get(requests.size() - 1);
    }
}
