package io.cairn.broker.metrics;

/**
 * The broker's lifecycle as Kafka's {@code BrokerState} numbers it ({@code kafka_server_kafkaserver_brokerstate};
 * Strimzi's readiness check waits for 3).
 */
public enum BrokerState {
    NOT_RUNNING(0),
    STARTING(1),
    RECOVERY(2),
    RUNNING(3),
    PENDING_CONTROLLED_SHUTDOWN(6),
    SHUTTING_DOWN(7);

    private final int value;

    BrokerState(int value) {
        this.value = value;
    }

    /** Kafka's number for the state. */
    public int value() {
        return value;
    }
}
