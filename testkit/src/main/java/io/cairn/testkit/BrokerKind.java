package io.cairn.testkit;

/**
 * The brokers a compat scenario can run against, for {@code @EnumSource(BrokerKind.class)}: the scenario is
 * written once and each constant creates its broker, not yet started.
 *
 * <p>Immutable and thread-safe.
 */
public enum BrokerKind {

    /** The real Cairn process, from the jar the build produced. */
    CAIRN {
        @Override
        public BrokerProcess create() {
            return CairnProcess.create();
        }
    },

    /** The reference Apache Kafka, resolved from Maven Central at the version the build pins. */
    KAFKA {
        @Override
        public BrokerProcess create() {
            return KafkaReferenceProcess.create();
        }
    };

    /** A new broker of this kind with default settings, not yet started. */
    public abstract BrokerProcess create();

    /** A new broker of this kind, already started. */
    public BrokerProcess start() {
        BrokerProcess broker = create();
        try {
            broker.start();
            return broker;
        } catch (RuntimeException e) {
            broker.close();
            throw e;
        }
    }
}
