package io.cairn.testkit.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * What a fault run's workload saw, recorded as it happened, for {@link HistoryChecker}: the records the idempotent
 * producers had acknowledged (value {@code producer:partition:sequence}), every transaction with its values
 * ({@code t<id>:<i>}) and what its producer was told of its end, the records a read_committed consumer saw while
 * the faults went on, the offsets the group member's {@code commitSync} acknowledged, and the group's committed
 * offsets as they were read back.
 *
 * <p>Thread-safe: producers' callbacks, consumers and monitors record from their own threads.
 */
public final class History {

    /** What a transaction's producer was told of its end. */
    public enum Outcome {
        /** {@code commitTransaction} returned: every record must be visible to read_committed. */
        COMMITTED,
        /** {@code abortTransaction} was called (returned or not): no record may ever be visible. */
        ABORTED,
        /** The commit failed or was never answered: all or none of its records may be visible. */
        UNKNOWN
    }

    /**
     * A group's committed offset of a partition: acknowledged by {@code commitSync} returning at {@code nanos}, or
     * read back by a request sent at {@code nanos}.
     */
    public record CommittedOffset(int partition, long offset, long nanos) {
    }

    private final Map<String, Boolean> acked = new ConcurrentHashMap<>();
    private final Map<Long, List<String>> transactions = new ConcurrentHashMap<>();
    private final Map<Long, Outcome> outcomes = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> seenCommitted = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CommittedOffset> committedOffsets = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<CommittedOffset> acknowledgedCommits = new ConcurrentLinkedQueue<>();

    /** The data value of record {@code sequence} of {@code producer} to {@code partition}. */
    public static String dataValue(String producer, int partition, long sequence) {
        return producer + ":" + partition + ":" + sequence;
    }

    /** The value of record {@code index} of transaction {@code txn}. */
    public static String txnValue(long txn, int index) {
        return "t" + txn + ":" + index;
    }

    /** The producer's acknowledgement of {@code value} (a {@link #dataValue}). */
    public void acked(String value) {
        acked.put(value, Boolean.TRUE);
    }

    /** Transaction {@code txn} begins and will write {@code values}, each once. */
    public void began(long txn, List<String> values) {
        transactions.put(txn, List.copyOf(values));
    }

    /** What the producer of {@code txn} was told. An ABORTED outcome is never replaced. */
    public void ended(long txn, Outcome outcome) {
        outcomes.merge(txn, outcome, (old, now) -> old == Outcome.ABORTED ? old : now);
    }

    /** A value a read_committed consumer returned while the run went on. */
    public void seenCommitted(String value) {
        seenCommitted.add(value);
    }

    /** The group's committed offset of {@code partition}, as read back by a request sent at {@code nanos}. */
    public void committedOffset(int partition, long offset, long nanos) {
        committedOffsets.add(new CommittedOffset(partition, offset, nanos));
    }

    /** A {@code commitSync} of {@code offset} for {@code partition} returned at {@code nanos}: it must stay. */
    public void acknowledgedCommit(int partition, long offset, long nanos) {
        acknowledgedCommits.add(new CommittedOffset(partition, offset, nanos));
    }

    public List<String> ackedValues() {
        return new ArrayList<>(acked.keySet());
    }

    public Map<Long, List<String>> transactions() {
        return Map.copyOf(transactions);
    }

    /** The outcome of {@code txn}: UNKNOWN when its producer was never told. */
    public Outcome outcome(long txn) {
        return outcomes.getOrDefault(txn, Outcome.UNKNOWN);
    }

    public List<String> seenCommitted() {
        return new ArrayList<>(seenCommitted);
    }

    public List<CommittedOffset> committedOffsets() {
        return new ArrayList<>(committedOffsets);
    }

    public List<CommittedOffset> acknowledgedCommits() {
        return new ArrayList<>(acknowledgedCommits);
    }

    /** How many data records were acknowledged and how many transactions were committed, as the run's size. */
    public String size() {
        long committed = outcomes.values().stream().filter(o -> o == Outcome.COMMITTED).count();
        long aborted = outcomes.values().stream().filter(o -> o == Outcome.ABORTED).count();
        return acked.size() + " acknowledged records, " + transactions.size() + " transactions (" + committed
            + " committed, " + aborted + " aborted)";
    }
}
