package io.cairn.broker.metrics;

import io.cairn.broker.txn.TransactionCoordinator;
import io.cairn.broker.txn.TransactionState;
import io.cairn.broker.txn.markers.TransactionMarkerChannel;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ListTransactionsRequestData;
import io.cairn.wire.message.ListTransactionsResponseData;
import io.micrometer.core.instrument.Gauge;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The transaction coordinator's meters: Kafka's
 * {@code kafka_coordinator_transaction_transactionmarkerchannelmanager_unknowndestinationqueuesize} (queued markers
 * whose partition had no reachable leader when last routed) and {@code transaction-coordinator-metrics}
 * {@code partition-load-time-avg} / {@code -max} ({@code kafka_server_transaction_coordinator_metrics_…},
 * milliseconds over the last 30 to 60 s, NaN without loads); and, Cairn's own as Kafka has none,
 * {@code kafka_server_transaction_coordinator_metrics_transaction_count{state}}: the transactional ids of the
 * partitions this broker coordinates by state ({@code Ongoing}, {@code PrepareCommit}, ...), from a ListTransactions
 * over the shards at scrape time (no series while a partition loads or when the shards do not answer within
 * {@value #TIMEOUT_MS} ms). Kafka's {@code LogAppendRetryQueueSize} is not published: Cairn retries a failed write
 * of a completed transaction with a timer of its shard rather than a queue.
 *
 * <p>Thread-safe.
 */
public final class TransactionCoordinatorMetrics implements MultiCollector {

    private static final Logger LOGGER = LogManager.getLogger(TransactionCoordinatorMetrics.class);
    private static final long TIMEOUT_MS = 5_000;
    private static final String PREFIX = "kafka.server.transaction.coordinator.metrics.";

    private final TransactionCoordinator transactions;

    private TransactionCoordinatorMetrics(TransactionCoordinator transactions) {
        this.transactions = transactions;
    }

    /** Registers the meters of {@code transactions} and {@code markers} on {@code metrics}. */
    public static void register(BrokerMetrics metrics, TransactionCoordinator transactions,
            TransactionMarkerChannel markers) {
        Gauge.builder("kafka.coordinator.transaction.transactionmarkerchannelmanager.unknowndestinationqueuesize",
                markers, TransactionMarkerChannel::unknownDestinationMarkers)
                .description("Queued transaction markers whose partition had no reachable leader")
                .strongReference(true).register(metrics.registry());
        transactions.onPartitionLoaded(GroupCoordinatorMetrics.loadTimes(metrics.registry(), PREFIX,
                TransactionCoordinator.TOPIC)::record);
        metrics.addCollector(new TransactionCoordinatorMetrics(transactions));
    }

    @Override
    public MetricSnapshots collect() {
        ListTransactionsResponseData listed;
        try {
            listed = transactions.list(new ListTransactionsRequestData()).get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            LOGGER.debug("No transaction counts in this scrape: {}", e.toString());
            return MetricSnapshots.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return MetricSnapshots.of();
        }
        if (listed.errorCode() != Errors.NONE.code()) {
            return MetricSnapshots.of();
        }
        Map<String, Integer> byState = new TreeMap<>();
        for (TransactionState state : TransactionState.values()) {
            byState.put(state.stateName(), 0);
        }
        listed.transactionStates().forEach(t -> byState.merge(t.transactionState(), 1, Integer::sum));
        GaugeFamily count = new GaugeFamily("kafka_server_transaction_coordinator_metrics_transaction_count",
                "Transactional ids this broker coordinates, by state", "state");
        byState.forEach((state, n) -> count.add(n, state));
        return MetricSnapshots.of(count.build());
    }
}
