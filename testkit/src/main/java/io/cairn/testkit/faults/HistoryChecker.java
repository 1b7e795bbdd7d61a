package io.cairn.testkit.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Finds the anomalies of a fault run in its {@link History} and the final reads of its topics, after Jepsen's queue
 * and transactional models as Bufstream's and Redpanda's analyses used them:
 * <ul>
 *   <li><b>lost</b>: an acknowledged record missing from the final read of its partition;</li>
 *   <li><b>duplicated</b>: a value stored more than once (in the data topic, or in read_committed of the transactional
 *       topic);</li>
 *   <li><b>reordered</b>: a producer's records to a partition stored out of their sequence order;</li>
 *   <li><b>aborted visible</b>: a record of an aborted transaction returned by read_committed, at the end or while
 *       the faults went on;</li>
 *   <li><b>partial transactions</b>: a transaction of which read_committed returns some records but not all, or none
 *       of a committed one;</li>
 *   <li><b>offsets backwards</b>: a group's committed offset of a partition read back lower than an offset a
 *       {@code commitSync} had acknowledged before the read was sent. A read lower than an earlier <i>read</i> is not
 *       one by itself: a read may see a commit that is written but not yet replicated, which the coordinator's
 *       successor does not have (Kafka 4.1.1 did so in campaign seed 23, its coordinator moved by a controlled
 *       shutdown while commits were failing with NOT_COORDINATOR); only an acknowledged commit must stay.</li>
 * </ul>
 * Stateless.
 */
public final class HistoryChecker {

    private static final int EXAMPLES = 5;

    private HistoryChecker() {
    }

    /** The anomalies of one run, with up to five examples of each kind. Immutable. */
    public record Findings(Map<String, List<String>> anomalies, Map<String, Integer> counts) {

        public Findings {
            anomalies = Map.copyOf(anomalies);
            counts = Map.copyOf(counts);
        }

        /** True when nothing was found. */
        public boolean clean() {
            return counts.values().stream().allMatch(c -> c == 0);
        }

        /** Each kind with its count, and the examples of every kind found. */
        public String summary() {
            StringBuilder out = new StringBuilder();
            for (String kind : KINDS) {
                out.append(out.length() == 0 ? "" : ", ").append(kind).append('=').append(counts.get(kind));
            }
            for (String kind : KINDS) {
                if (counts.get(kind) > 0) {
                    out.append("; ").append(kind).append(" e.g. ").append(anomalies.get(kind));
                }
            }
            return out.toString();
        }
    }

    static final List<String> KINDS = List.of("lost", "duplicated", "reordered", "abortedVisible", "partialTxns",
        "offsetsBackwards");

    /**
     * Checks {@code history} against {@code data}, every data partition's values in offset order (read_uncommitted,
     * from the log start), and {@code committed}, the transactional topic's values as read_committed returns them.
     */
    public static Findings check(History history, Map<Integer, List<String>> data, List<String> committed) {
        Map<String, List<String>> found = new LinkedHashMap<>();
        Map<String, Integer> counts = new HashMap<>();
        for (String kind : KINDS) {
            found.put(kind, new ArrayList<>());
            counts.put(kind, 0);
        }
        checkData(history, data, found, counts);
        checkTransactions(history, committed, found, counts);
        checkOffsets(history, found, counts);
        return new Findings(found, counts);
    }

    private static void checkData(History history, Map<Integer, List<String>> data, Map<String, List<String>> found,
                                  Map<String, Integer> counts) {
        Set<String> stored = new HashSet<>();
        for (Map.Entry<Integer, List<String>> partition : data.entrySet()) {
            Map<String, Long> lastSequence = new HashMap<>();
            for (String value : partition.getValue()) {
                if (!stored.add(value)) {
                    add(found, counts, "duplicated", "p" + partition.getKey() + " " + value);
                    continue;
                }
                String[] parts = value.split(":");
                if (parts.length != 3) {
                    continue;
                }
                String stream = parts[0] + ":" + parts[1];
                long sequence = Long.parseLong(parts[2]);
                Long last = lastSequence.put(stream, sequence);
                if (last != null && sequence < last) {
                    add(found, counts, "reordered", value + " after " + stream + ":" + last);
                }
            }
        }
        history.ackedValues().stream().sorted().filter(v -> !stored.contains(v))
            .forEach(v -> add(found, counts, "lost", v));
    }

    private static void checkTransactions(History history, List<String> committed, Map<String, List<String>> found,
                                          Map<String, Integer> counts) {
        Map<Long, Integer> visible = new HashMap<>();
        Set<String> seen = new HashSet<>();
        for (String value : committed) {
            if (!seen.add(value)) {
                add(found, counts, "duplicated", value);
                continue;
            }
            visible.merge(txnOf(value), 1, Integer::sum);
        }
        Set<String> abortedSeen = new HashSet<>();
        for (String value : history.seenCommitted()) {
            if (history.outcome(txnOf(value)) == History.Outcome.ABORTED && abortedSeen.add(value)) {
                add(found, counts, "abortedVisible", value + " (while running)");
            }
        }
        for (Map.Entry<Long, List<String>> txn : history.transactions().entrySet()) {
            int records = txn.getValue().size();
            int shown = visible.getOrDefault(txn.getKey(), 0);
            History.Outcome outcome = history.outcome(txn.getKey());
            if (outcome == History.Outcome.ABORTED && shown > 0) {
                add(found, counts, "abortedVisible", "t" + txn.getKey() + ": " + shown + " of " + records);
            } else if (shown > 0 && shown < records || outcome == History.Outcome.COMMITTED && shown == 0) {
                add(found, counts, "partialTxns", "t" + txn.getKey() + " (" + outcome + "): " + shown + " of "
                    + records);
            }
        }
    }

    private static void checkOffsets(History history, Map<String, List<String>> found, Map<String, Integer> counts) {
        List<History.CommittedOffset> acks = history.acknowledgedCommits();
        acks.sort((a, b) -> Long.compare(a.nanos(), b.nanos()));
        List<History.CommittedOffset> reads = history.committedOffsets();
        reads.sort((a, b) -> Long.compare(a.nanos(), b.nanos()));
        Map<Integer, Long> acknowledged = new HashMap<>();
        int next = 0;
        for (History.CommittedOffset read : reads) {
            // Every commit acknowledged before this read was sent
            for (; next < acks.size() && acks.get(next).nanos() < read.nanos(); next++) {
                acknowledged.merge(acks.get(next).partition(), acks.get(next).offset(), Math::max);
            }
            Long floor = acknowledged.get(read.partition());
            if (floor != null && read.offset() < floor) {
                add(found, counts, "offsetsBackwards", "p" + read.partition() + " acknowledged " + floor + ", read "
                    + read.offset());
            }
        }
    }

    /** The transaction of a {@link History#txnValue}, or -1 for any other value. */
    private static long txnOf(String value) {
        int colon = value.indexOf(':');
        if (!value.startsWith("t") || colon < 0) {
            return -1L;
        }
        try {
            return Long.parseLong(value.substring(1, colon));
        } catch (NumberFormatException e) {
            return -1L;
        }
    }

    private static void add(Map<String, List<String>> found, Map<String, Integer> counts, String kind,
                            String example) {
        counts.merge(kind, 1, Integer::sum);
        List<String> examples = found.get(kind);
        if (examples.size() < EXAMPLES) {
            examples.add(example);
        }
    }
}
