package io.cairn.broker.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;

/**
 * The broker-topic counters of one topic (or of all topics): messages, bytes in and out, rejected bytes, produce
 * and fetch requests and their failures, per partition of a request as Kafka counts them. Every increment of a
 * topic's meters increments the all-topics meters too.
 *
 * <p>Thread-safe.
 */
public final class TopicMeters {

    static final String PREFIX = "kafka.server.brokertopicmetrics.";

    private final TopicMeters all;
    private final Counter messagesIn;
    private final Counter bytesIn;
    private final Counter bytesOut;
    private final Counter bytesRejected;
    private final Counter replicationBytesOut;
    private final Counter totalProduceRequests;
    private final Counter failedProduceRequests;
    private final Counter totalFetchRequests;
    private final Counter failedFetchRequests;

    TopicMeters(MeterRegistry registry, String topic, TopicMeters all) {
        this.all = all;
        this.messagesIn = counter(registry, topic, "messagesin", "Records appended by produce requests");
        this.bytesIn = counter(registry, topic, "bytesin", "Bytes of the batches appended by produce requests");
        this.bytesOut = counter(registry, topic, "bytesout", "Record bytes sent to consumers");
        this.bytesRejected = counter(registry, topic, "bytesrejected", "Bytes of batches refused as too large");
        this.replicationBytesOut = counter(registry, topic, "replicationbytesout", "Record bytes sent to followers");
        this.totalProduceRequests = counter(registry, topic, "totalproducerequests",
                "Partitions of produce requests");
        this.failedProduceRequests = counter(registry, topic, "failedproducerequests",
                "Partitions of produce requests that failed");
        this.totalFetchRequests = counter(registry, topic, "totalfetchrequests", "Partitions of fetch requests");
        this.failedFetchRequests = counter(registry, topic, "failedfetchrequests",
                "Partitions of fetch requests that failed");
    }

    private static Counter counter(MeterRegistry registry, String topic, String name, String help) {
        return Counter.builder(PREFIX + name).description(help + " (topic=\"\": all topics)").tag("topic", topic)
                .register(registry);
    }

    /** One partition of a produce request for this topic (Kafka's {@code TotalProduceRequestsPerSec}). */
    public void totalProduceRequest() {
        totalProduceRequests.increment();
        if (all != null) {
            all.totalProduceRequest();
        }
    }

    /** {@code messages} records in {@code bytes} bytes were appended. */
    public void messagesIn(int messages, int bytes) {
        messagesIn.increment(messages);
        bytesIn.increment(bytes);
        if (all != null) {
            all.messagesIn(messages, bytes);
        }
    }

    /** A partition's append failed for a reason other than leadership or size (Kafka's failed-produce rule). */
    public void failedProduceRequest() {
        failedProduceRequests.increment();
        if (all != null) {
            all.failedProduceRequest();
        }
    }

    /** A batch of {@code bytes} was refused as too large. */
    public void bytesRejected(int bytes) {
        bytesRejected.increment(bytes);
        if (all != null) {
            all.bytesRejected(bytes);
        }
    }

    /** One partition of a fetch request for this topic (Kafka's {@code TotalFetchRequestsPerSec}). */
    public void totalFetchRequest() {
        totalFetchRequests.increment();
        if (all != null) {
            all.totalFetchRequest();
        }
    }

    /** A partition's read failed for an unexpected reason (Kafka's failed-fetch rule). */
    public void failedFetchRequest() {
        failedFetchRequests.increment();
        if (all != null) {
            all.failedFetchRequest();
        }
    }

    /** {@code bytes} of records were sent, to a consumer ({@code bytesout}) or a follower. */
    public void bytesOut(long bytes, boolean toFollower) {
        (toFollower ? replicationBytesOut : bytesOut).increment(bytes);
        if (all != null) {
            all.bytesOut(bytes, toFollower);
        }
    }

    void remove(MeterRegistry registry) {
        for (Counter counter : List.of(messagesIn, bytesIn, bytesOut, bytesRejected, replicationBytesOut,
                totalProduceRequests, failedProduceRequests, totalFetchRequests, failedFetchRequests)) {
            registry.remove(counter);
        }
    }
}
